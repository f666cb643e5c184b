// Fuzzing every way into a session that starts with a WebSocket upgrade (issue 32: one upgrade to
// `/automation/%E0` ended the engine, and every session of the node with it). The engine runs as a
// real child process with one running session; raw upgrade requests go to the channels of its share
// link and view-only link, to automation addresses, to the API's and the viewer site's paths and to
// the operator listener, with malformed escapes, raw bytes, absolute and asterisk forms, missing
// and junk WebSocket headers. After each one the engine must still be alive and answer /healthz.
// Replay a failure with FUZZ_SEED=<seed>.
import fc from 'fast-check';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useEngine } from '../api/context.js';
import { PLANS, send, testConfig, waitForStatus } from '../api/harness.js';
import { fuzz, headerName, headerValue, pathJunk, runs, Tally } from './fuzz.js';

const ctx = useEngine({ config: testConfig() });
const tally = new Tally();
const startedAt = Date.now();
let links: string[] = [];

/** The first malformed requests the attack probe sent, each of which must be answered or closed, never crash. */
const PROBED = [
  '/automation/%E0',
  '/automation/%',
  '/automation/abc%zz',
  '/automation/%ff%fe%fd',
  '/automation/',
  '/automation/a/b',
  `/automation/${'%E0'.repeat(3000)}`,
  '/share/%E0/rfb',
  '/share/%/sound',
  '*',
  'http://engine/automation/%E0',
  '//automation/%E0',
  '/automation/%E0?%E0#%E0',
];

/** The share API's own routes; every registered channel is added from the engine's `channels` fact. */
const SHARE_ROUTES = ['events', 'state', 'ping', 'view-only', 'files/upload', 'files/download', 'tabs'];
const shareRoutes = () => [...SHARE_ROUTES, ...((ctx.engine.facts.channels as Array<{ name: string }>) ?? []).map((channel) => channel.name)];

/** A request target for an upgrade: at a link's channel, at automation, anywhere; some with raw bytes. */
const target = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(...PROBED),
    fc.tuple(fc.constantFrom(...links, 'x'.repeat(22)), fc.oneof(fc.constantFrom(...shareRoutes()), pathJunk)).map(([link, route]) => `/share/${link}/${route}`),
    fc.tuple(fc.constantFrom(...links), pathJunk).map(([link, junk]) => `/share/${link}${junk}`),
    pathJunk.map((junk) => `/automation/${junk}`),
    pathJunk.map((junk) => `/${junk}`),
    fc.tuple(fc.constantFrom('/v8/vm/data', '/v7/vm/create', '/api/v6/vm/data', '/en/s', '/healthz', '/metrics'), pathJunk).map(([path, junk]) => `${path}?${junk}`),
    fc.uint8Array({ minLength: 1, maxLength: 20 }).map((bytes) => `/automation/${Buffer.from(bytes).toString('latin1').replace(/[\r\n ]/g, '_')}`),
  );

interface Upgrade {
  target: string;
  upgrade: string | undefined;
  connection: string | undefined;
  key: string | undefined;
  version: string | undefined;
  extra: Array<[string, string]>;
}

const upgrade: () => fc.Arbitrary<Upgrade> = () =>
  fc.record({
    target: target(),
    upgrade: fc.option(fc.oneof(fc.constant('websocket'), fc.constant('WebSocket'), headerValue), { nil: undefined, freq: 6 }),
    connection: fc.option(fc.oneof(fc.constant('Upgrade'), fc.constant('keep-alive, Upgrade'), headerValue), { nil: undefined, freq: 6 }),
    key: fc.option(fc.oneof(fc.constant('dGhlIHNhbXBsZSBub25jZQ=='), headerValue), { nil: undefined, freq: 6 }),
    version: fc.option(fc.oneof(fc.constant('13'), fc.constant('8'), headerValue), { nil: undefined, freq: 6 }),
    extra: fc.array(fc.tuple(headerName, headerValue), { maxLength: 3 }),
  });

/** Sends an upgrade request as raw bytes and waits for the first answer or the close (at most 5 s); answers what came back. */
function sendUpgrade(base: string, request: Upgrade): Promise<string> {
  const { hostname, port } = new URL(base);
  const lines = [`GET ${request.target} HTTP/1.1`, 'Host: 127.0.0.1'];
  if (request.upgrade !== undefined) lines.push(`Upgrade: ${request.upgrade}`);
  if (request.connection !== undefined) lines.push(`Connection: ${request.connection}`);
  if (request.key !== undefined) lines.push(`Sec-WebSocket-Key: ${request.key}`);
  if (request.version !== undefined) lines.push(`Sec-WebSocket-Version: ${request.version}`);
  for (const [name, value] of request.extra) lines.push(`${name}: ${value}`);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer.slice(0, 40));
    };
    const timer = setTimeout(finish, 5000);
    socket.on('connect', () => socket.write(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1')));
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      finish();
    });
    socket.on('close', finish);
    socket.on('error', finish);
  });
}

/** The engine is alive and its /healthz answers. */
async function expectAlive(after: string): Promise<void> {
  expect(ctx.engine.alive(), `the engine exited after ${after}:\n${ctx.engine.output()}`).toBe(true);
  const health = await send(ctx.engine.url, 'GET', '/healthz', { timeoutMs: 10_000 });
  expect(health.json?.status, `/healthz after ${after}`).toBe('ok');
}

beforeAll(async () => {
  const { api } = await ctx.account([PLANS.basic]);
  const created = await api.create({ browser: 'chromium', url: ctx.pages.page });
  expect(created.json?.status, created.text).toBe('ok');
  ctx.track(api, created.json.vmId);
  expect(await waitForStatus(api, created.json.vmId, ['running'], 45_000)).toBe('running');
  const linkId = new URL(created.json.shareUrl).search.slice(1);
  const viewOnly = await send(ctx.engine.url, 'POST', `/share/${linkId}/view-only`);
  expect(viewOnly.json?.status, viewOnly.text).toBe('ok');
  links = [linkId, viewOnly.json.linkId as string];
}, 90_000);

afterAll(() => tally.print('upgrades.test.ts', startedAt));

describe('WebSocket upgrades to the engine', () => {
  it('answers or closes each upgrade the attack probe sent, and lives on', async () => {
    for (const path of PROBED) {
      const request = { target: path, upgrade: 'websocket', connection: 'Upgrade', key: 'dGhlIHNhbXBsZSBub25jZQ==', version: '13', extra: [] };
      await sendUpgrade(ctx.engine.url, request);
      tally.add('probed');
      await expectAlive(`an upgrade to ${path}`);
    }
  }, 120_000);

  it('survives generated upgrades to every route and channel, with junk headers', async () => {
    await fuzz('upgrades to the public port', 1, upgrade(), runs(250), async (request) => {
      await sendUpgrade(ctx.engine.url, request);
      tally.add('public port');
      await expectAlive(`an upgrade ${JSON.stringify(request).slice(0, 300)}`);
    });
  }, 600_000);

  it('survives generated upgrades and requests to the operator listener', async () => {
    const operator = ctx.engine.facts.operatorUrl as string;
    expect(operator).toMatch(/^http:/);
    await fuzz('upgrades to the operator listener', 2, upgrade(), runs(100), async (request) => {
      await sendUpgrade(operator, request);
      tally.add('operator listener');
      await expectAlive(`an operator-listener upgrade ${JSON.stringify(request).slice(0, 300)}`);
    });
  }, 600_000);
});
