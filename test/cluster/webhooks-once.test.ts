// Session webhooks on a cluster (issue 27, decisions.md 61): two engine nodes on one Postgres share
// the delivery queue, and each event reaches the receiver once: queued once whichever node queues
// it, claimed by one node, never sent again by the other. The nodes' sessions run on the fake
// runtime: the queue and the nodes are what is tested.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import { verifyWebhook } from '../../src/server/index.js';
import { FakeRuntime } from '../helpers/fake-runtime.js';
import { testDatabase } from '../helpers/postgres.js';

const SECRET = 'webhook-cluster-secret-0123456789abcdef';
const engines: Engine<FakeRuntime>[] = [];
const dirs: string[] = [];
const received: Array<{ id: string; type: string; body: string; signature: string }> = [];
let receiver: Server;
let hookUrl: string;
let page: Server;
let pageUrl: string;
let key: string;
let accountId: string;

async function node(id: string, database: string): Promise<Engine<FakeRuntime>> {
  const dir = await mkdtemp(join(tmpdir(), `rbk-hooks-${id}-`));
  dirs.push(dir);
  const engine = await createEngine({
    dataDir: dir,
    port: 0,
    runtime: new FakeRuntime(),
    config: {
      database,
      node: { id },
      cluster: { secret: SECRET, heartbeatMs: 500, lostAfterMs: 3000 },
      egress: { allow: ['127.0.0.0/8'] },
      log: { level: 'silent', pretty: false },
      webhooks: { allow: ['127.0.0.0/8'], allowHttp: true, firstRetryMs: 200 },
    },
  });
  engines.push(engine);
  return engine;
}

async function until(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const event = JSON.parse(body) as { id: string; type: string };
      received.push({ id: event.id, type: event.type, body, signature: String(request.headers['rbk-signature']) });
      // A slow receiver: both nodes have time to look at the queue while a delivery is under way.
      setTimeout(() => response.writeHead(200).end(), 50);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  page = createServer((_, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<title>hooks</title>'));
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
  const database = await testDatabase();
  await node('node-a', database);
  await node('node-b', database);
  const created = await engines[0]!.accounts.create({ contact: 'hooks@example.com', plans: ['pro'] });
  key = created.apiKey.key;
  accountId = created.account.id;
}, 90_000);

afterAll(async () => {
  for (const engine of engines) await engine.close();
  receiver?.close();
  page?.close();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('webhook deliveries across two nodes', () => {
  it('a session\'s events and a burst of queued events each reach the receiver once', async () => {
    const [a, b] = engines as [Engine<FakeRuntime>, Engine<FakeRuntime>];
    // Set through node B, read through node A: one webhook for the whole service.
    const set = await (await fetch(`${b.url}/v8/user/webhook`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: hookUrl }) })).json();
    expect(set.status).toBe('ok');
    const secret = set.webhook.secret as string;
    expect(await (await fetch(`${a.url}/v8/user/webhook`, { headers: { authorization: `Bearer ${key}` } })).json()).toMatchObject({ webhook: { url: hookUrl } });

    // A burst queued by both nodes at once, every event twice (once per node): each is queued once.
    const ids = Array.from({ length: 40 }, (_, i) => `evt_burst_${i}`);
    const queued = await Promise.all(ids.flatMap((id) => [a, b].map((engine) => engine.webhooks.queue.enqueue({ id, accountId, type: 'session.running', body: JSON.stringify({ id, type: 'session.running', time: new Date().toISOString(), vmId: 'f'.repeat(32), status: 'running' }), at: Date.now() }))));
    expect(queued.filter(Boolean)).toHaveLength(40);
    a.webhooks.kick();
    b.webhooks.kick();

    // And a real session, created through A: wherever it runs, its two events come once each.
    const create = await (await fetch(`${a.url}/v8/vm/create`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ browser: 'chromium', url: pageUrl }) })).json();
    expect(create.status).toBe('ok');
    await until(() => received.some((r) => r.type === 'session.running' && r.body.includes(create.vmId)), 30_000);
    expect((await (await fetch(`${b.url}/v8/vm/remove`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ id: create.vmId }) })).json()).status).toBe('ok');
    await until(() => received.some((r) => r.type === 'session.ended'), 30_000);
    await until(() => new Set(received.map((r) => r.id)).size >= 42, 30_000);
    // Both nodes keep looking for a while: nothing comes twice.
    await new Promise((r) => setTimeout(r, 3000));

    const counts = new Map<string, number>();
    for (const r of received) counts.set(r.id, (counts.get(r.id) ?? 0) + 1);
    expect(counts.size).toBe(42);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    const sessionEvents = received.filter((r) => r.body.includes(create.vmId));
    expect(sessionEvents.map((r) => r.type)).toEqual(['session.running', 'session.ended']);
    for (const r of sessionEvents) await verifyWebhook({ body: r.body, signature: r.signature, secret });
  }, 120_000);
});
