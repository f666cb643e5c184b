// The mirror fuzz (issue 53): what the door fuzz does from the client's side, done from the
// session's side. A process with the session's uid (what a browser exploit has) can copy the
// browser's end of any connection the engine holds into the session (`pidfd_getfd` on the
// browser, its own process) and write into it: the engine's DevTools guard and tab probe, a
// program's DevTools or BiDi connection, the display's RFB. Every such connection runs through one
// relay process in the session (confinement.ts `connect`), which carries those bytes to the engine
// unread; the test, as root, writes into the relay's output instead, the same bytes at the same
// place. So the list here is the runtime's own: every relay the engine runs for the victim
// session (with a program and a viewer attached), whatever it carries; a connection added later
// is covered with no line here. Into each it writes malformed, odd-shaped, deeply nested, huge and random messages, as
// WebSocket frames and as raw bytes. After every case the engine (a real child process) is alive
// and answers /healthz, another account's session still runs, and the victim either still runs
// or has ended saying why. Replay a failure of the random part with FUZZ_SEED=<seed>.
import fc from 'fast-check';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useEngine } from '../api/context.js';
import { PLANS, send, testConfig, waitForStatus, type Api } from '../api/harness.js';
import { relaysOfEngine, serverFrame, textFrame, uidOfNewSession, writeFromSession } from '../helpers/session-side.js';
import { fuzz, runs, Tally } from './fuzz.js';

const run = promisify(execFile);
const ctx = useEngine({ config: testConfig({}) });
const tally = new Tally();
const startedAt = Date.now();

const text = textFrame;

/** The hostile messages every connection gets, by name: the probes' own finds first, then shapes no peer sends. */
const CASES: Array<[string, Buffer]> = [
  ['null', text('null')],
  ['bad JSON', text('{"id":1,')],
  ['an event without its params', text('{"method":"Target.targetInfoChanged","params":{}}')],
  ['a target event with a wrong-typed targetInfo', text('{"method":"Target.targetCreated","params":{"targetInfo":{"targetId":{},"type":7,"url":null}}}')],
  ['an answer with a string id', text('{"id":"1","result":{}}')],
  ['an answer whose result is a number', text('{"id":1,"result":7}')],
  ['a BiDi answer with a null id', text('{"type":"success","id":null,"result":null}')],
  ['a BiDi event with null params', text('{"type":"event","method":"browsingContext.contextCreated","params":null}')],
  ['an array', text('[1,2,3]')],
  ['200,000 arrays deep', text('{"method":"Target.targetCreated","params":{"x":' + '['.repeat(200_000) + ']'.repeat(200_000) + '}}')],
  ['a binary frame', serverFrame(2, Buffer.from([0, 1, 2, 255]))],
  ['a frame that announces 2^62 bytes', Buffer.from([0x81, 127, 0x40, 0, 0, 0, 0, 0, 0, 0])],
  ['a continuation with no start', serverFrame(0, Buffer.from('x'))],
  ['raw bytes, not a frame', Buffer.from('\x00\xff\x13\x37 not a frame at all \r\n\r\n', 'latin1')],
];

let victimApi: Api;
let bystanderApi: Api;
let bystanderId: string;
let pageUrl: string;
/** The programs and viewers attached to victims: closed at the end. */
const attached: WebSocket[] = [];

/** The relays the engine runs into the session whose processes run as `uid`: each one connection of the engine's. */
async function relaysOf(uid: number): Promise<number[]> {
  return (await relaysOfEngine(ctx.engine.child.pid!)).filter((relay) => relay.uid === uid).map((relay) => relay.pid);
}

/**
 * A program attached to the session over its automation address (a DevTools or a BiDi connection
 * of the engine's into the session, one more relay), and a viewer on its share link (the display's).
 */
async function attach(vmId: string, link: string, browser: 'chromium' | 'firefox-esr'): Promise<WebSocket[]> {
  const answer = await victimApi.get(`/v8/vm/automation?id=${vmId}`);
  expect(answer.json?.status, answer.text).toBe('ok');
  const address = new URL(answer.json[browser === 'chromium' ? 'browserWSEndpoint' : 'webDriverBiDiEndpoint'] as string);
  const program = new WebSocket(`${ctx.engine.url.replace(/^http/, 'ws')}${address.pathname}${address.search}`);
  const viewer = new WebSocket(`${ctx.engine.url.replace(/^http/, 'ws')}/share/${link}/rfb`);
  for (const socket of [program, viewer]) socket.on('error', () => undefined);
  await Promise.all([program, viewer].map((socket) => new Promise((resolve, reject) => (socket.once('open', resolve), socket.once('close', reject)))));
  // The first command opens the browser end (BiDi: the hub's connection to the agent and its session).
  const first = browser === 'chromium' ? { id: 1, method: 'Target.getTargets' } : { id: 1, method: 'session.new', params: { capabilities: {} } };
  const answered = new Promise((resolve) => program.once('message', resolve));
  program.send(JSON.stringify(first));
  await answered;
  return [program, viewer];
}

/** A running victim session, its share link and its uid. */
async function victim(browser: 'chromium' | 'firefox-esr'): Promise<{ vmId: string; link: string; uid: number }> {
  const before = new Set((await relaysOfEngine(ctx.engine.child.pid!)).map((relay) => relay.uid));
  const created = await victimApi.create({ browser, url: pageUrl, ...(browser === 'firefox-esr' ? { automation: true } : {}) });
  expect(created.json?.status, created.text).toBe('ok');
  const vmId = created.json.vmId as string;
  ctx.track(victimApi, vmId);
  expect(await waitForStatus(victimApi, vmId, ['running'], 60_000)).toBe('running');
  const link = new URL(created.json.shareUrl).search.slice(1);
  attached.push(...(await attach(vmId, link, browser)));
  return { vmId, link, uid: await uidOfNewSession(ctx.engine.child.pid!, before) };
}

/** The victim's status as its owner reads it and, once ended, why, as its share link says. */
async function victimState(session: { vmId: string; link: string }): Promise<{ status: string; reason?: string }> {
  const reply = await victimApi.data(session.vmId);
  const status = (reply.json?.data?.[0] as { status: string } | undefined)?.status ?? 'gone';
  if (status === 'running') return { status };
  const shared = await send(ctx.engine.url, 'GET', `/share/${session.link}`);
  return { status, ...(typeof shared.json?.reason === 'string' ? { reason: shared.json.reason } : {}) };
}

async function nodeIsWell(label: string): Promise<void> {
  expect(ctx.engine.alive(), `the engine exited after ${label}:\n${ctx.engine.output().slice(-3000)}`).toBe(true);
  const health = await send(ctx.engine.url, 'GET', '/healthz').catch((error: Error) => {
    throw new Error(`/healthz after ${label}: ${error.message}\n${ctx.engine.output().slice(-3000)}`);
  });
  expect(health.http, `/healthz after ${label}`).toBe(200);
  const bystander = await bystanderApi.data(bystanderId);
  expect(bystander.json?.data?.[0]?.status, `another account's session after ${label}`).toBe('running');
}

beforeAll(async () => {
  pageUrl = ctx.pages.page;
  victimApi = (await ctx.account([PLANS.unlimited])).api;
  bystanderApi = (await ctx.account([PLANS.unlimited])).api;
  const created = await bystanderApi.create({ browser: 'chromium', url: pageUrl });
  expect(created.json?.status, created.text).toBe('ok');
  bystanderId = created.json.vmId;
  ctx.track(bystanderApi, bystanderId);
  expect(await waitForStatus(bystanderApi, bystanderId, ['running'], 60_000)).toBe('running');
}, 120_000);

afterAll(() => {
  for (const socket of attached) socket.terminate();
  tally.print('mirror.test.ts', startedAt);
});

describe('bytes written from a session into the engine\'s connections end at most that session', () => {
  for (const browser of ['chromium', 'firefox-esr'] as const) {
    it(`${browser}: every hostile message into every relay of the session`, async () => {
      let current = await victim(browser);
      const ended: string[] = [];
      for (const [name, bytes] of CASES) {
        if ((await victimState(current)).status !== 'running') current = await victim(browser);
        const relays = await relaysOf(current.uid);
        expect(relays.length, `the ${browser} session has relays`).toBeGreaterThan(0);
        for (const pid of relays) await writeFromSession(pid, bytes);
        tally.add(`${browser}: ${name}`, relays.length);
        // What the engine does with it takes effect at once; the session either runs or has ended with its reason.
        await nodeIsWell(`${name} into ${relays.length} relays of a ${browser} session`);
        const state = await victimState(current);
        if (state.status !== 'running') {
          // Ended by the service, and its link says why.
          expect(state, `${name}: the victim's end`).toEqual({ status: 'suspended', reason: expect.stringMatching(/^the session's browser sent what the service could not read \(.+\)/) });
          ended.push(name);
          tally.add(`${browser}: victims ended, saying why`);
        }
      }
      // The engine's own connection (Chromium's guard, Firefox's BiDi hub) reads what it is sent: some cases end the session that sent them.
      expect(ended.length, `a ${browser} session whose engine connection was sent what it cannot read ends`).toBeGreaterThan(0);
    }, 600_000);
  }

  it('random messages and bytes into every relay of a Chromium session', async () => {
    let current = await victim('chromium');
    const message = fc.oneof(
      fc.jsonValue({ maxDepth: 6 }).map((value) => text(JSON.stringify(value))),
      fc.string({ maxLength: 200 }).map((value) => text(value)),
      fc.uint8Array({ minLength: 1, maxLength: 300 }).map((value) => Buffer.from(value)),
      fc.uint8Array({ maxLength: 300 }).map((value) => serverFrame(2, Buffer.from(value))),
    );
    await fuzz('mirror: random from the session', 53, message, runs(12), async (bytes) => {
      if ((await victimState(current)).status !== 'running') current = await victim('chromium');
      for (const pid of await relaysOf(current.uid)) await writeFromSession(pid, bytes);
      tally.add('chromium: random');
      await nodeIsWell('a random message');
    });
  }, 600_000);
});

// The writer needs python3 and pidfd_getfd (Linux 5.6): the test says so rather than skip.
beforeAll(async () => {
  await run('python3', ['-c', 'import os; os.pidfd_open']);
});
