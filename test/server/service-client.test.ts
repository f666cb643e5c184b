// createServiceClient against a real engine over HTTP (and engineService in-process), and against
// small loopback servers that misbehave on purpose: retries only where safe, timeouts, typed errors.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceClient, engineService, RemoteBrowserError, type RemoteBrowserService } from '../../src/server/index.js';
import { poll, startTestEngine, type TestEngine } from './fixtures.js';

let t: TestEngine;
let key: string;

beforeAll(async () => {
  t = await startTestEngine();
  key = (await t.key('std')).key;
});
afterAll(async () => {
  await t?.close();
});

async function failure(work: Promise<unknown>): Promise<RemoteBrowserError> {
  const error = await work.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(RemoteBrowserError);
  return error as RemoteBrowserError;
}

describe.each([
  ['over HTTP', () => createServiceClient({ baseUrl: t.engine.url, apiKey: key })],
  ['in-process', () => engineService(t.engine, { apiKey: key })],
])('the v8 API, %s', (_mode, make: () => RemoteBrowserService) => {
  it('answers every call with checked, typed values', async () => {
    const client = make();
    const images = await client.images();
    expect(images.images.some((image) => image.id === 'chromium')).toBe(true);
    const created = await client.create({ browser: 'chromium', url: t.pageUrl });
    expect(created.vmId).toMatch(/^[0-9a-f]{32}$/);
    expect(created.quota.running_sessions_used).toBeGreaterThanOrEqual(1);
    expect((await client.session(created.vmId))?.status).toMatch(/starting|running/);
    expect((await client.list())[0]?.id).toBe(`${created.vmId.slice(0, 4)}${'*'.repeat(24)}${created.vmId.slice(-4)}`);
    expect((await client.userApi()).feature_programmatic_access).toBe(true);
    expect((await client.userQuota()).has_plan).toBe(true);
    expect(await client.remove(created.vmId)).toEqual({ status: 'ok' });
    expect(await poll(async () => (await client.session(created.vmId))?.status, (s) => s === 'deleted')).toBe('deleted');
    expect(await client.remove(created.vmId)).toEqual({ status: 'ok' });
  });

  it('follows a start with one held read (wait): the answer is the status the session moved to', async () => {
    const client = make();
    const created = await client.create({ browser: 'chromium', url: t.pageUrl });
    // One call, held by the service until the session is no longer starting (a start ends within 20 s).
    expect((await client.session(created.vmId, { wait: 30_000 }))?.status).toBe('running');
    expect(await client.remove(created.vmId)).toEqual({ status: 'ok' });
  });

  it('turns refusals into RemoteBrowserError with the service code and message', async () => {
    const client = make();
    expect(await client.session('0'.repeat(32))).toBeNull();
    const unknown = await failure(client.remove('0'.repeat(32)));
    expect(unknown).toMatchObject({ code: 'denied', message: 'id: unknown session', httpStatus: 200 });
    const browser = await failure(client.create({ browser: 'netscape' }));
    expect(browser.code).toBe('denied');
    expect(browser.message).toMatch(/^browser: unknown browser/);
  });
});

describe('keys and configuration', () => {
  it('reads the key at each call: missing and weak keys are configuration errors naming the option', async () => {
    const saved = process.env.REMOTE_BROWSER_API_KEY;
    delete process.env.REMOTE_BROWSER_API_KEY;
    try {
      const client = createServiceClient({ baseUrl: t.engine.url });
      // No key needed for the image list.
      expect((await client.images()).status).toBe('ok');
      const missing = await failure(client.userQuota());
      expect(missing.code).toBe('configuration');
      expect(missing.message).toMatch(/^apiKey is missing: pass createServiceClient\(\{ apiKey \}\) or set REMOTE_BROWSER_API_KEY/);
      process.env.REMOTE_BROWSER_API_KEY = key;
      expect((await client.userQuota()).status).toBe('ok');

      for (const weak of ['short', `${key.slice(0, 10)} ${key.slice(10)}`]) {
        const error = await failure(createServiceClient({ baseUrl: t.engine.url, apiKey: () => weak }).userQuota());
        expect(error.code).toBe('configuration');
        expect(error.message).toMatch(/^apiKey does not look like an API key/);
        expect(error.message).not.toContain(weak);
      }
    } finally {
      if (saved === undefined) delete process.env.REMOTE_BROWSER_API_KEY;
      else process.env.REMOTE_BROWSER_API_KEY = saved;
    }
  });

  it('refuses a baseUrl that is not an http address at once', () => {
    expect(() => createServiceClient({ baseUrl: 'not a url', apiKey: key })).toThrow(/^baseUrl must be/);
    expect(() => createServiceClient({ baseUrl: 'ftp://x', apiKey: key })).toThrow(RemoteBrowserError);
  });

  it('says "unauthorized" for a refused key, without the key', async () => {
    const wrong = 'rbk_this-key-was-never-issued-anywhere';
    const error = await failure(createServiceClient({ baseUrl: t.engine.url, apiKey: wrong }).userQuota());
    expect(error).toMatchObject({ code: 'unauthorized', httpStatus: 401 });
    expect(error.message).toMatch(/check apiKey/);
    expect(error.message).not.toContain(wrong);
  });
});

describe('an upstream that misbehaves', () => {
  let server: Server;
  let base: string;
  const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers'] }> = [];
  let answer: (request: IncomingMessage, attempt: number) => { status: number; body: string; headers?: Record<string, string> } | null = () => null;

  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push({ method: request.method!, url: request.url!, headers: request.headers });
      request.resume();
      const reply = answer(request, seen.length);
      if (reply) response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(reply.body);
      // null: never answer (the client's timeout has to end it).
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const quota = { running_session_limit: 1, running_sessions_used: 1, running_sessions_remaining: 0, cycle_session_limit: null, cycle_sessions_used: 1, cycle_sessions_remaining: null, cycle_start: '2026-11-01', cycle_end: '2026-12-01' };
  const unavailable = { status: 503, body: JSON.stringify({ status: 'error', message: 'overloaded' }) };
  const client = (options: { timeoutMs?: number; retries?: number } = {}) => createServiceClient({ baseUrl: base, apiKey: key, ...options });

  it('retries GETs after a 503 and an error status, with the key only in the Authorization header', async () => {
    seen.length = 0;
    answer = (_, attempt) => (attempt < 3 ? unavailable : { status: 200, body: JSON.stringify({ status: 'ok', data: [] }) });
    expect(await client().session('abc')).toBeNull();
    expect(seen).toHaveLength(3);
    for (const request of seen) {
      expect(request.url).toBe('/v8/vm/data?id=abc');
      expect(request.headers.authorization).toBe(`Bearer ${key}`);
      expect(request.headers.origin).toBeUndefined();
    }
  });

  it('never repeats a create without an idempotencyKey; repeats one with it', async () => {
    seen.length = 0;
    answer = () => unavailable;
    const error = await failure(client().create({ browser: 'chromium' }));
    expect(error).toMatchObject({ code: 'service_error', message: 'overloaded', httpStatus: 503 });
    expect(seen).toHaveLength(1);

    seen.length = 0;
    answer = (_, attempt) => (attempt < 2 ? unavailable : { status: 200, body: JSON.stringify({ status: 'ok', vmId: 'v'.repeat(32), quota }) });
    expect((await client().create({ browser: 'chromium', idempotencyKey: 'once' })).vmId).toBe('v'.repeat(32));
    expect(seen).toHaveLength(2);
  });

  it('gives up after the timeout; a create that timed out says how to retry safely', async () => {
    seen.length = 0;
    answer = () => null;
    const started = Date.now();
    const error = await failure(client({ timeoutMs: 150, retries: 0 }).create({ browser: 'chromium' }));
    expect(error.code).toBe('timeout');
    expect(error.message).toMatch(/send an idempotencyKey/);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect((await failure(client({ timeoutMs: 150, retries: 1 }).images())).code).toBe('timeout');
    expect(seen).toHaveLength(3);
  });

  it('asks the service to hold a session read (capped), and allows the held time beyond its timeout', async () => {
    seen.length = 0;
    // Held for 400 ms, as a service waiting on a start would: longer than the 150 ms timeout alone.
    answer = () => null;
    server.once('request', (_request, response) => setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', data: [] })), 400));
    expect(await client({ timeoutMs: 150, retries: 0 }).session('abc', { wait: 1_000 })).toBeNull();
    expect(seen[0]!.url).toBe('/v8/vm/data?id=abc&wait=1000');
    seen.length = 0;
    answer = () => ({ status: 200, body: JSON.stringify({ status: 'ok', data: [] }) });
    await client().session('abc', { wait: 600_000 });
    expect(seen[0]!.url).toBe('/v8/vm/data?id=abc&wait=30000');
  });

  it('stops at once when the caller aborts', async () => {
    answer = () => null;
    const controller = new AbortController();
    const pending = client({ timeoutMs: 5_000 }).userQuota({ signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('reads rate limits with their Retry-After', async () => {
    answer = () => ({ status: 429, headers: { 'retry-after': '7' }, body: JSON.stringify({ status: 'insecure', reason: 'rate_limited', message: 'slow down' }) });
    expect(await failure(client().userQuota())).toMatchObject({ code: 'insecure', reason: 'rate_limited', retryAfter: 7, httpStatus: 429 });
  });

  it('refuses answers that are not the v8 protocol, and keeps the key out of messages', async () => {
    answer = () => ({ status: 200, body: '<html>hello</html>' });
    expect(await failure(client({ retries: 0 }).images())).toMatchObject({ code: 'invalid_response' });
    answer = () => ({ status: 200, body: JSON.stringify({ status: 'ok', images: 'none' }) });
    expect((await failure(client().images())).message).toMatch(/does not follow the v8 protocol \(images:/);
    answer = (request) => ({ status: 200, body: JSON.stringify({ status: 'denied', message: `you sent ${request.headers.authorization}` }) });
    const echoed = await failure(client().userQuota());
    expect(echoed.message).not.toContain(key);
    expect(echoed.message).toBe('you sent Bearer [API key]');
  });

  it('says which address could not be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const address = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await failure(createServiceClient({ baseUrl: address, apiKey: key, retries: 0 }).userQuota());
    expect(error.code).toBe('unreachable');
    expect(error.message).toContain(address);
    expect(error.message).not.toContain(key);
  });
});
