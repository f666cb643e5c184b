// One account's slow webhook receiver holds nobody else's events (issue 32, decisions.md 76), on a
// real engine (its sessions on the fake runtime): account A's receiver sends its headers and then a byte a second, never ending its
// answer; account B's session events still arrive at once, and each of A's attempts is cut at the
// configured deadline and tried again on the usual schedule.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logLines } from '../helpers/log-lines.js';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { ACCOUNT_ATTEMPTS } from '../../src/engine/webhooks/webhooks.js';
import type { WebhookEvent } from '../../src/protocol/index.js';

/** The deadline of one attempt in this test: short, and longer than the drip's gap between bytes. */
const DEADLINE_MS = 2000;
/** Events queued for A: more than one account may have under way at once. */
const A_EVENTS = 6;

/** One POST the dripping receiver took: when it came and when the engine let go of it. */
interface DripRequest {
  eventId: string;
  startedAt: number;
  closedAt?: number;
}

let fixture: EngineFixture<FakeRuntime>;
let engine: Engine<FakeRuntime>;
let pageUrl: string;
let drip: Server;
let dripUrl: string;
const dripRequests: DripRequest[] = [];
const dripAnswers = new Set<ServerResponse>();
let dripMostOpen = 0;
let steady: Server;
let steadyUrl: string;
const steadyGot: Array<{ event: WebhookEvent; at: number }> = [];
const lines: string[] = [];

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}

const api = async (key: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${engine.url}/v8/${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await response.json()) as Record<string, any>;
};
const logged = () => lines.map((line) => JSON.parse(line) as Record<string, any>);

beforeAll(async () => {
  // A's receiver: takes the event, answers 200 with its headers at once, then one byte a second
  // for ever. Every byte comes well inside an idle timeout; only a deadline on the whole attempt
  // ends it.
  drip = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const taken: DripRequest = { eventId: (JSON.parse(body) as WebhookEvent).id, startedAt: Date.now() };
      dripRequests.push(taken);
      dripAnswers.add(response);
      dripMostOpen = Math.max(dripMostOpen, dripAnswers.size);
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.flushHeaders();
      const byte = setInterval(() => response.write('.'), 1000);
      response.once('close', () => {
        clearInterval(byte);
        dripAnswers.delete(response);
        taken.closedAt = Date.now();
      });
    });
  });
  dripUrl = await listen(drip);

  // B's receiver: takes each event at once.
  steady = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      steadyGot.push({ event: JSON.parse(body) as WebhookEvent, at: Date.now() });
      response.writeHead(200).end();
    });
  });
  steadyUrl = await listen(steady);

  const logs = logLines(lines).destination;
  fixture = await startEngine({
    name: 'webhooks-isolation',
    site: '<title>isolation</title>',
    runtime: 'fake',
    logDestination: logs,
    config: {
      egress: { allow: ['127.0.0.0/8'] },
      log: { level: 'info', pretty: false },
      webhooks: { allow: ['127.0.0.0/8'], allowHttp: true, firstRetryMs: 300, retryForMs: 60_000, timeoutMs: DEADLINE_MS },
    },
  });
  engine = fixture.engine;
  pageUrl = `${fixture.site.origin}/`;
}, 60_000);

afterAll(async () => {
  // The dripping answers are let go first: nothing here may wait on them.
  drip?.closeAllConnections();
  drip?.close();
  await fixture?.close();
  steady?.close();
});

describe('a slow webhook receiver', () => {
  it("holds no other account's events, and each of its attempts is cut at the deadline and tried again", async () => {
    const a = await engine.accounts.create({ contact: 'slow-receiver@example.com', plans: ['pro'] });
    const b = await engine.accounts.create({ contact: 'steady-receiver@example.com', plans: ['pro'] });
    expect((await api(a.apiKey.key, 'POST', 'user/webhook', { url: dripUrl })).status).toBe('ok');
    expect((await api(b.apiKey.key, 'POST', 'user/webhook', { url: steadyUrl })).status).toBe('ok');

    // A's receiver gets events first and starts dripping.
    for (let i = 0; i < A_EVENTS; i++) {
      const id = `evt_slow_${i}`;
      const body = JSON.stringify({ id, type: 'session.running', time: new Date().toISOString(), vmId: 'a'.repeat(32), status: 'running' });
      expect(await engine.webhooks.queue.enqueue({ id, accountId: a.account.id, type: 'session.running', body, at: Date.now() })).toBe(true);
    }
    engine.webhooks.kick();
    await expect.poll(() => dripRequests.length, { timeout: 10_000, interval: 50 }).toBeGreaterThan(0);

    // B's session becomes running (however long its browser takes to start) ...
    const created = await api(b.apiKey.key, 'POST', 'vm/create', { browser: 'chromium', url: pageUrl });
    expect(created.status).toBe('ok');
    const vmId = created.vmId as string;
    await expect
      .poll(async () => ((await api(b.apiKey.key, 'GET', `vm/data?id=${vmId}`)).data as Array<{ status: string }>)[0]?.status, { timeout: 60_000, interval: 100 })
      .toBe('running');
    // ... and its event reaches B within the usual delay (queued and sent at once; each node looks
    // every second), while A's receiver is still dripping.
    await expect.poll(() => steadyGot.find((got) => got.event.type === 'session.running' && got.event.vmId === vmId), { timeout: 5000, interval: 50 }).toBeDefined();
    const running = steadyGot.find((got) => got.event.type === 'session.running' && got.event.vmId === vmId)!;
    expect(running.at - Date.parse(running.event.time)).toBeLessThan(5000);

    // Every attempt at A ends by its deadline (the receiver sees the engine let go), is logged as
    // failed for that reason, and the same event comes again on the retry schedule.
    await expect.poll(() => dripRequests.filter((r) => r.closedAt !== undefined).length, { timeout: DEADLINE_MS + 10_000, interval: 50 }).toBeGreaterThan(0);
    await expect.poll(() => dripRequests.some((r, i) => dripRequests.findIndex((s) => s.eventId === r.eventId) !== i), { timeout: 20_000, interval: 50 }).toBe(true);
    for (const request of dripRequests.filter((r) => r.closedAt !== undefined)) {
      // Measured at the receiver, after connecting: never longer than the deadline, give or take a busy machine.
      expect(request.closedAt! - request.startedAt).toBeLessThan(DEADLINE_MS + 1500);
    }
    const cut = logged().find((l) => l.msg === 'webhook attempt failed; retrying later' && l.event === dripRequests[0]!.eventId);
    expect(cut).toMatchObject({ attempt: 1 });
    expect(cut!.reason).toContain(`${DEADLINE_MS} ms`);
    // One account's receiver has a few attempts under way at a time, not the whole node's.
    expect(dripMostOpen).toBeLessThanOrEqual(ACCOUNT_ATTEMPTS);

    // Removing A's webhook leaves its last attempts to end by their deadline; B is untouched throughout.
    expect((await api(a.apiKey.key, 'DELETE', 'user/webhook')).status).toBe('ok');
    await expect.poll(() => dripAnswers.size, { timeout: DEADLINE_MS + 5000, interval: 50 }).toBe(0);
    expect((await api(b.apiKey.key, 'POST', 'vm/remove', { id: vmId })).status).toBe('ok');
    await expect.poll(() => steadyGot.some((got) => got.event.type === 'session.ended' && got.event.vmId === vmId), { timeout: 30_000, interval: 100 }).toBe(true);
  }, 150_000);

  it("an account's backlog never comes before another account's first event, and has a few attempts under way at most", async () => {
    const backlog = await engine.accounts.create({ contact: 'backlog@example.com', plans: ['pro'] });
    const quiet = await engine.accounts.create({ contact: 'quiet@example.com', plans: ['pro'] });
    // Receivers nobody answers at: this test claims the events itself, as a node of its own would.
    for (const account of [backlog, quiet]) expect((await api(account.apiKey.key, 'POST', 'user/webhook', { url: 'http://127.0.0.1:9/hooks' })).status).toBe('ok');
    // Due an hour from now, so the engine's own rounds leave them to this test.
    const later = Date.now() + 3_600_000;
    const queue = engine.webhooks.queue;
    for (let i = 0; i < 10; i++) await queue.enqueue({ id: `evt_backlog_${i}`, accountId: backlog.account.id, type: 'session.running', body: '{}', at: later + i });
    await queue.enqueue({ id: 'evt_quiet_0', accountId: quiet.account.id, type: 'session.running', body: '{}', at: later + 100 });

    // Room for two: the quiet account's one event is among them though ten older ones wait.
    const first = await queue.claim('probe-node', later + 200, later + 60_000, 2, ACCOUNT_ATTEMPTS);
    expect(first.map((d) => d.id).sort()).toEqual(['evt_backlog_0', 'evt_quiet_0']);
    // Room for ten: the backlog gets only what its share leaves, its oldest first.
    const second = await queue.claim('probe-node', later + 200, later + 60_000, 10, ACCOUNT_ATTEMPTS);
    expect(second.map((d) => d.id)).toEqual(Array.from({ length: ACCOUNT_ATTEMPTS - 1 }, (_, i) => `evt_backlog_${i + 1}`));
    // Once the claims run out (their node died), they no longer count as under way: each account
    // has its share again.
    const afterClaims = await queue.claim('probe-node', later + 60_001, later + 120_000, 10, ACCOUNT_ATTEMPTS);
    expect(afterClaims.map((d) => d.id)).toContain('evt_quiet_0');
    expect(afterClaims.filter((d) => d.id.startsWith('evt_backlog_'))).toHaveLength(ACCOUNT_ATTEMPTS);

    for (const account of [backlog, quiet]) expect((await api(account.apiKey.key, 'DELETE', 'user/webhook')).status).toBe('ok');
  });
});
