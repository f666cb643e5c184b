// Operating the service (issue 27, decisions.md 60-61) on a real engine (its sessions on the fake
// runtime: what is counted, logged and sent is the service's, not the browser's): the
// operator listener's /metrics (Prometheus text, the series a create, a running session and a
// removal move), structured logs (JSON lines with request ids, the right fields for a create and
// a refused one, never a key, link id or secret), and session webhooks to receivers on loopback
// (signed, retried, refused for private addresses). /readyz is test/engine/readiness.test.ts.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logLines } from '../helpers/log-lines.js';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { isRemoteBrowserError, verifyWebhook } from '../../src/server/index.js';
import type { WebhookEvent } from '../../src/protocol/index.js';
import { parseExposition, sample } from '../helpers/prometheus.js';
import type { StartKind } from '../../src/engine/runtime/runtime.js';

/** Every way a session can start (runtime.ts): a kind added there fails the typecheck here until it is listed. */
const EVERY_START: Record<StartKind, true> = { cold: true, 'warm-display': true, 'warm-browser': true };
const START_KINDS = Object.keys(EVERY_START) as StartKind[];

interface Received {
  body: string;
  signature: string;
  event: WebhookEvent;
}

/** A webhook receiver on loopback: records every POST; answers `status(n)` for the n-th (default 200). */
async function receiver(status: (n: number) => number = () => 200): Promise<{ url: string; got: Received[]; server: Server }> {
  const got: Received[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      got.push({ body, signature: String(request.headers['rbk-signature'] ?? ''), event: JSON.parse(body) as WebhookEvent });
      response.writeHead(status(got.length)).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, got, server };
}

async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

let fixture: EngineFixture<FakeRuntime>;
let engine: Engine<FakeRuntime>;
let key: string;
let pageUrl: string;
const lines: string[] = [];
const receivers: Server[] = [];

const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${engine.url}/v8/${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { http: response.status, requestId: response.headers.get('x-request-id'), json: (await response.json()) as Record<string, any> };
};
const status = async (id: string) => ((await api('GET', `vm/data?id=${id}`)).json.data as Array<{ status: string }>)[0]?.status;
const metricsText = async () => (await fetch(`${engine.operatorUrl}/metrics`)).text();
const logged = () => lines.map((line) => JSON.parse(line) as Record<string, any>);

beforeAll(async () => {
  const logs = logLines(lines).destination;
  fixture = await startEngine({
    name: 'operator-test',
    site: '<title>ops</title>',
    runtime: 'fake',
    logDestination: logs,
    config: {
      egress: { allow: ['127.0.0.0/8'] },
      log: { level: 'debug', pretty: false },
      webhooks: { allow: ['127.0.0.0/8'], allowHttp: true, firstRetryMs: 300, retryForMs: 60_000, timeoutMs: 5000 },
    },
  });
  ({ engine, account: { key } } = fixture);
  pageUrl = `${fixture.site.origin}/`;
}, 60_000);

afterAll(async () => {
  await fixture?.close();
  for (const server of receivers) server.close();
});

describe('the operator listener', () => {
  it('serves /metrics as Prometheus text on its own loopback port, not on the public one', async () => {
    expect(engine.operatorUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(new URL(engine.operatorUrl!).port).not.toBe(new URL(engine.url).port);
    const families = parseExposition(await metricsText());
    for (const name of ['rbk_sessions', 'rbk_session_starts_total', 'rbk_session_start_seconds', 'rbk_session_ends_total', 'rbk_attachments', 'rbk_egress_bytes_total', 'rbk_residential_bytes_total', 'rbk_node_load', 'rbk_warm_pool', 'rbk_warm_pool_memory_bytes', 'rbk_http_requests_total', 'rbk_http_request_duration_seconds', 'rbk_rate_limited_total', 'rbk_store_errors_total', 'rbk_webhook_queue']) {
      expect(families.has(name), name).toBe(true);
    }
    const onPublic = await fetch(`${engine.url}/metrics`);
    expect(onPublic.status).toBe(404);
  });

  it('counts and times each answer by route template and status, never by the path it was asked with', async () => {
    const route = { route: '/v8/vm/data', method: 'GET' };
    const before = parseExposition(await metricsText());
    for (let i = 0; i < 3; i++) expect((await api('GET', 'vm/data')).json.status).toBe('ok');
    expect((await fetch(`${engine.url}/v8/vm/nothing-here-${key.slice(-6)}`)).status).toBe(404);
    const after = parseExposition(await metricsText());
    const moved = (name: string, labels: Record<string, string>) => (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
    expect(moved('rbk_http_requests_total', { ...route, status: '200' })).toBe(3);
    expect(moved('rbk_http_requests_total', { route: '/v8/unknown', method: 'GET', status: '404' })).toBe(1);
    expect(moved('rbk_http_request_duration_seconds_count', route)).toBe(3);
    expect(moved('rbk_http_request_duration_seconds_sum', route)).toBeGreaterThan(0);
    // The buckets are cumulative and end at the count.
    const buckets = after.get('rbk_http_request_duration_seconds')!.samples.filter((s) => s.name.endsWith('_bucket') && s.labels.route === route.route && s.labels.method === 'GET');
    expect(buckets.map((s) => s.labels.le).at(-1)).toBe('+Inf');
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
    expect(buckets.at(-1)!.value).toBe(sample(after, 'rbk_http_request_duration_seconds_count', route));
    expect(await metricsText()).not.toContain('nothing-here');
  });

  it('the Grafana dashboard in docs/ asks only for series the engine exports', async () => {
    const dashboard = JSON.parse(await readFile('docs/grafana-dashboard.json', 'utf8')) as { panels: Array<{ targets: Array<{ expr: string }> }> };
    const asked = new Set(dashboard.panels.flatMap((panel) => panel.targets.flatMap((target) => target.expr.match(/rbk_[a-z0-9_]+/g) ?? [])));
    const exported = new Set([...parseExposition(await metricsText()).values()].flatMap((family) => family.samples.map((s) => s.name)));
    // Counters and histograms not moved yet have no samples: their family names count too.
    for (const name of parseExposition(await metricsText()).keys()) exported.add(name);
    for (const name of asked) expect(exported.has(name) || exported.has(name.replace(/_bucket$/, '')), name).toBe(true);
    expect(asked.size).toBeGreaterThan(15);
  });
});

describe('a session followed by metrics, logs and its webhook', () => {
  it('a create, a running session and a removal move the series, log their lines and deliver signed events', async () => {
    const hook = await receiver();
    receivers.push(hook.server);
    const set = await api('POST', 'user/webhook', { url: hook.url });
    expect(set.json).toMatchObject({ status: 'ok', webhook: { url: hook.url } });
    const secret = set.json.webhook.secret as string;
    expect(secret).toMatch(/^whsec_/);
    // The secret is shown once: reading the webhook never shows it again.
    expect((await api('GET', 'user/webhook')).json).toEqual({ status: 'ok', webhook: { url: hook.url, created: set.json.webhook.created } });

    const before = parseExposition(await metricsText());
    const created = await api('POST', 'vm/create', { browser: 'chromium', url: pageUrl }, { 'x-request-id': 'create-request-1' });
    expect(created.json.status).toBe('ok');
    expect(created.requestId).toBe('create-request-1');
    const vmId = created.json.vmId as string;
    expect(await until(() => status(vmId), (s) => s === 'running')).toBe('running');
    // The start may be of any kind the runtime reports (the real one's depends on how far its warm
    // pool got). Whatever it was, exactly one start is counted, of one known kind, timed under
    // that kind, and the running log line names the same kind.
    const startsOf = (families: typeof before, start?: StartKind) => sample(families, 'rbk_session_starts_total', { browser: 'chromium', ...(start ? { start } : {}) }) ?? 0;
    // The series moves when the engine follows the session's move to running, just after the API shows it.
    const running = await until(async () => parseExposition(await metricsText()), (families) => startsOf(families) > startsOf(before), 15_000);
    expect(sample(running, 'rbk_sessions', { status: 'running', browser: 'chromium' })).toBe(1);
    expect(sample(running, 'rbk_node_load', {})).toBe(1);
    expect(startsOf(running)).toBe(startsOf(before) + 1);
    expect(running.get('rbk_session_starts_total')!.samples.map((s) => s.labels.start).filter((kind) => !(START_KINDS as Array<string | undefined>).includes(kind))).toEqual([]);
    const moved = START_KINDS.filter((kind) => startsOf(running, kind) !== startsOf(before, kind));
    expect(moved).toHaveLength(1);
    const start = moved[0]!;
    expect(startsOf(running, start)).toBe(startsOf(before, start) + 1);
    const timed = (families: typeof before) => sample(families, 'rbk_session_start_seconds_count', { browser: 'chromium', start }) ?? 0;
    expect(timed(running)).toBe(timed(before) + 1);
    expect(sample(running, 'rbk_http_requests_total', { route: '/v8/vm/create', method: 'POST', status: '200' })).toBeGreaterThanOrEqual(1);

    expect((await api('POST', 'vm/remove', { id: vmId })).json.status).toBe('ok');
    expect(await until(() => status(vmId), (s) => s === 'deleted')).toBe('deleted');
    const removed = parseExposition(await metricsText());
    expect(sample(removed, 'rbk_session_ends_total', { browser: 'chromium', category: 'removed' })).toBe(1);
    expect(sample(removed, 'rbk_sessions', { status: 'running', browser: 'chromium' }) ?? 0).toBe(0);
    // No label value anywhere is the session's id, the key or an address.
    const text = await metricsText();
    for (const secretText of [vmId, key, pageUrl, hook.url]) expect(text).not.toContain(secretText);

    // The receiver got session.running, then session.ended with the reason, each validly signed.
    const got = await until(() => hook.got, (list) => list.length >= 2, 15_000);
    expect(got.map((r) => r.event.type)).toEqual(['session.running', 'session.ended']);
    for (const received of got) {
      const event = await verifyWebhook({ body: received.body, signature: received.signature, secret });
      expect(event.vmId).toBe(vmId);
    }
    expect(got[1]!.event).toMatchObject({ status: 'stopping', category: 'removed', reason: 'removed' });
    expect(Date.parse(got[1]!.event.time)).toBeGreaterThanOrEqual(Date.parse(got[0]!.event.time));

    // The create's log line carries the request id; the running and ended lines their fields.
    const log = logged();
    expect(log.find((l) => l.msg === 'session created')).toMatchObject({ reqId: 'create-request-1', vmId, browser: 'chromium', level: 30 });
    expect(log.find((l) => l.msg === 'session running' && l.vmId === vmId)).toMatchObject({ start, startMs: expect.any(Number) });
    expect(log.find((l) => l.msg === 'session ended' && l.vmId === vmId)).toMatchObject({ category: 'removed', reason: 'removed' });

    // A tampered body, another secret or an old signature fail verifyWebhook.
    const original = got[1]!;
    const tampered = original.body.replace('"removed"', '"idle"');
    await expect(verifyWebhook({ body: tampered, signature: original.signature, secret })).rejects.toMatchObject({ code: 'invalid_signature' });
    await expect(verifyWebhook({ body: original.body, signature: original.signature, secret: 'whsec_another' })).rejects.toMatchObject({ code: 'invalid_signature' });
    const error = await verifyWebhook({ body: original.body, signature: original.signature, secret, now: Date.now() + 3_600_000 }).catch((e: unknown) => e);
    expect(isRemoteBrowserError(error) && error.message).toMatch(/beyond the 300 s tolerance/);
    await api('DELETE', 'user/webhook');
  }, 90_000);

  it('a refused create logs its reason and field under its request id', async () => {
    const refused = await api('POST', 'vm/create', { browser: 'no-such-browser' });
    expect(refused.json.status).toBe('denied');
    const line = logged().find((l) => l.msg === 'session create refused' && l.reqId === refused.requestId);
    expect(line).toMatchObject({ reason: 'unknown-browser', field: 'browser', outcome: 'denied', browser: 'no-such-browser' });
    const families = parseExposition(await metricsText());
    expect(sample(families, 'rbk_session_create_refusals_total', { reason: 'unknown-browser' })).toBe(1);
  });
});

describe('webhooks', () => {
  it('a receiver that answers 500 gets the same event again until it takes it', async () => {
    const hook = await receiver((n) => (n === 1 ? 500 : 200));
    receivers.push(hook.server);
    const secret = (await api('POST', 'user/webhook', { url: hook.url })).json.webhook.secret as string;
    const created = await api('POST', 'vm/create', { browser: 'chromium', url: pageUrl });
    const vmId = created.json.vmId as string;
    const got = await until(() => hook.got, (list) => list.length >= 2, 30_000);
    expect(got[0]!.event.type).toBe('session.running');
    expect(got[1]!.event.id).toBe(got[0]!.event.id);
    await verifyWebhook({ body: got[1]!.body, signature: got[1]!.signature, secret });
    const retry = logged().find((l) => l.msg === 'webhook attempt failed; retrying later' && l.event === got[0]!.event.id);
    expect(retry).toMatchObject({ reason: 'the receiver answered HTTP 500', attempt: 1 });
    await api('POST', 'vm/remove', { id: vmId });
    await until(() => status(vmId), (s) => s === 'deleted');
    await api('DELETE', 'user/webhook');
  }, 90_000);

  it('refuses receivers at private addresses unless the operator allows their range, and bad input changes nothing', async () => {
    for (const url of ['http://10.0.0.7/hooks', 'http://169.254.169.254/latest', 'http://[fd00::1]/x', 'http://192.168.1.1/']) {
      const answer = await api('POST', 'user/webhook', { url });
      expect(answer.json.status, url).toBe('denied');
      expect(answer.json.message).toMatch(/^url: .* is not a public address/);
    }
    for (const body of [{}, { url: 'ftp://example.com/' }, { url: 'not a url' }, { url: `https://example.com/${'a'.repeat(2100)}` }]) {
      const answer = await api('POST', 'user/webhook', body);
      expect(answer.json).toMatchObject({ status: 'denied', message: expect.stringMatching(/^url: /) });
    }
    expect((await api('GET', 'user/webhook')).json).toEqual({ status: 'ok', webhook: null });
    // Loopback is allowed here (webhooks.allow: 127.0.0.0/8).
    expect((await api('POST', 'user/webhook', { url: 'http://127.0.0.1:9/x' })).json.status).toBe('ok');
    await api('DELETE', 'user/webhook');
    // v7 has no webhooks.
    const v7 = await fetch(`${engine.url}/v7/user/webhook`, { headers: { authorization: `Bearer ${key}` } });
    expect(v7.status).toBe(404);
  });
});

describe('the logs of the whole run', () => {
  it('are JSON lines, and never carry the key, a share link id or a webhook secret', async () => {
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    // Every request line has a request id and a route template.
    const requests = logged().filter((l) => l.msg === 'request');
    expect(requests.length).toBeGreaterThan(5);
    for (const line of requests) expect(line).toMatchObject({ reqId: expect.any(String), route: expect.any(String), status: expect.any(Number) });
    const created = await api('POST', 'vm/create', { browser: 'chromium', url: pageUrl });
    const linkId = new URL(created.json.shareUrl as string).search.slice(1);
    await api('POST', 'vm/remove', { id: created.json.vmId });
    await until(() => status(created.json.vmId), (s) => s === 'deleted');
    await fetch(`${engine.url}/share/${linkId}`);
    const all = lines.join('\n');
    expect(all).not.toContain(key);
    expect(all).not.toContain(linkId);
    expect(all).not.toContain('whsec_');
  }, 60_000);
});
