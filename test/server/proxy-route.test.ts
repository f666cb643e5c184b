// The proxy route in front of a real engine, in-process (engineService) and over HTTP
// (createServiceClient): sessions through handles, refused handles, cross-site requests, rate
// limits, policy, every upstream status, configuration, and no key in anything a browser sees.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureSchema, imageListResponseSchema, userQuotaResponseSchema } from '../../src/protocol/index.js';
import {
  createProxyRoute,
  createServiceClient,
  engineService,
  proxyCreateResponseSchema,
  proxySessionResponseSchema,
  RemoteBrowserError,
  type ProxyRouteOptions,
  type RemoteBrowserService,
  type ServiceFetch,
} from '../../src/server/index.js';
import { APP_ORIGIN, BASE_PATH, Exposure, poll, SECRET, startTestEngine, type Seen, type TestEngine } from './fixtures.js';

interface User {
  id: string;
  role: string;
}

let t: TestEngine;
let limitedEngine: TestEngine;
let key: string;
let accountId: string;
const keys: string[] = [];
const exposure = new Exposure();
/** Headers of every request the HTTP client sent upstream. */
const upstreamHeaders: Headers[] = [];
const recordingFetch: ServiceFetch = (url, init) => {
  upstreamHeaders.push(new Headers(init.headers));
  return fetch(url, init);
};

const authorize = (request: Request): User | null => {
  const id = request.headers.get('x-user');
  return id ? { id, role: request.headers.get('x-role') ?? 'member' } : null;
};

function routeWith(service: RemoteBrowserService, options: Partial<ProxyRouteOptions<User>> = {}) {
  return createProxyRoute<User>({ service, authorize, secret: SECRET, onError: () => undefined, ...options });
}

interface Send {
  user?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One browser request to the route: same-origin JSON by default, recorded for the leak scan. */
async function send(route: (request: Request) => Promise<Response>, method: string, path: string, options: Send = {}): Promise<Seen> {
  const headers: Record<string, string> = {};
  if (options.user !== null) headers['x-user'] = options.user ?? 'alice';
  if (method === 'POST' || method === 'DELETE') headers['content-type'] = 'application/json';
  Object.assign(headers, options.headers);
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return exposure.record(await route(new Request(`${APP_ORIGIN}${BASE_PATH}${path}`, { method, headers, ...(body === undefined ? {} : { body }) })));
}

/** Sessions the test account has ever had: refused requests must not add one. */
const sessionCount = async () => (await t.engine.store.sessionsOf(accountId, 0, 10_000)).length;

function expectFailure(seen: Seen, http: number, status: string, message?: RegExp): void {
  expect(seen.status, seen.text).toBe(http);
  expect(failureSchema.safeParse(seen.json).success, seen.text).toBe(true);
  expect(seen.json.status).toBe(status);
  if (message) expect(seen.json.message).toMatch(message);
}

beforeAll(async () => {
  t = await startTestEngine();
  ({ key, accountId } = await t.key('std'));
  keys.push(key);
  // A second engine whose per-key limit is tiny, for the service's own rate_limited answer.
  limitedEngine = await startTestEngine({ rateLimit: { requests: 2, perSeconds: 60 } });
});

afterAll(async () => {
  await t?.close();
  await limitedEngine?.close();
});

const modes: Array<[string, (apiKey: string) => RemoteBrowserService]> = [
  ['in-process (engineService)', (apiKey) => engineService(t.engine, { apiKey })],
  ['over HTTP (createServiceClient)', (apiKey) => createServiceClient({ baseUrl: t.engine.url, apiKey, fetch: recordingFetch })],
];

describe.each(modes)('the route in front of a real engine, %s', (_mode, serviceFor) => {
  let route: ReturnType<typeof routeWith>;
  const accountOn = async (planId: string) => {
    const account = await t.key(planId);
    keys.push(account.key);
    return serviceFor(account.key);
  };
  beforeAll(() => {
    // Polling adds up: the limits here are tested on their own below.
    route = routeWith(serviceFor(key), { policy: { usage: ({ user }) => user.role === 'admin' }, rateLimit: { requests: 10_000, creates: 100 } });
  });

  it('lists browsers and locations', async () => {
    const seen = await send(route, 'GET', '/images');
    expect(seen.status).toBe(200);
    const list = imageListResponseSchema.parse(seen.json);
    expect(list.images.find((image) => image.id === 'chromium')?.enabled).toBe(true);
  });

  it('creates, reads and ends a session through its handle; the vmId never reaches the browser', async () => {
    const created = await send(route, 'POST', '/sessions', { body: { browser: 'chromium', url: t.pageUrl }, headers: { origin: APP_ORIGIN, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' } });
    expect(created.status, created.text).toBe(200);
    const answer = proxyCreateResponseSchema.parse(created.json);
    expect(answer.shareUrl).toMatch(/^https:\/\/share\.example\.test\/en\/s\?/);
    expect(answer.shareUrlPath).toMatch(/^\/en\/s\?/);
    expect(answer.quota.running_sessions_used).toBeGreaterThanOrEqual(1);
    const vmId = (await t.engine.store.sessionsOf(accountId, 0, 10))[0]!.id;
    expect(created.text).not.toContain(vmId);
    expect(created.json).not.toHaveProperty('vmId');

    const path = `/sessions/${answer.handle}`;
    // One held read follows the start (decisions.md 82): the route passes `wait` to the service.
    const running = await send(route, 'GET', `${path}?wait=30000`);
    const read = proxySessionResponseSchema.parse(running.json);
    expect(read.session).toMatchObject({ handle: answer.handle, status: 'running', name: 'Chromium' });
    expect(running.text).not.toContain(vmId);
    expect(running.text).not.toContain(vmId.slice(0, 4) + '*');

    // Another user's request with this handle, a forged and an altered one: all refused alike.
    const middle = Math.floor(answer.handle.length / 2);
    const altered = answer.handle.slice(0, middle) + (answer.handle[middle] === 'A' ? 'B' : 'A') + answer.handle.slice(middle + 1);
    const forged = Buffer.from(`\x01${vmId}`).toString('base64url').padEnd(130, 'A');
    for (const [handle, user] of [[answer.handle, 'mallory'], [altered, 'alice'], [forged, 'alice'], [answer.handle.slice(0, -4), 'alice'], ['%E0%A4%A', 'alice'], ['x'.repeat(600), 'alice']] as const) {
      expectFailure(await send(route, 'GET', `/sessions/${handle}`, { user }), 404, 'denied', /unknown session/);
      expectFailure(await send(route, 'DELETE', `/sessions/${handle}`, { user }), 404, 'denied', /unknown session/);
      expectFailure(await send(route, 'POST', `/sessions/${handle}`, { user }), 404, 'denied', /unknown session/);
    }
    expect((await t.engine.store.session(vmId))!.status).toBe('running');
    for (const wait of ['abc', '-5', '1.5', '']) expectFailure(await send(route, 'GET', `${path}?wait=${wait}`), 400, 'denied', /^wait: /);

    const ended = await send(route, 'POST', path, { headers: { origin: APP_ORIGIN } });
    expect(ended.status, ended.text).toBe(200);
    expect(ended.json).toEqual({ status: 'ok' });
    const gone = await poll(() => send(route, 'GET', path), (seen) => seen.json.session?.status === 'deleted');
    expect(gone.json.session.status).toBe('deleted');
    // Ending an ended session is still fine (DELETE this time).
    expect((await send(route, 'DELETE', path)).json).toEqual({ status: 'ok' });
  });

  it('makes browser-side create retries safe: the idempotency key is per user', async () => {
    const launchKey = `launch-${Math.random().toString(36).slice(2)}`;
    const before = (await t.engine.store.sessionsOf(accountId, 0, 1000)).length;
    const launch = { browser: 'chromium', url: t.pageUrl };
    const first = await send(route, 'POST', '/sessions', { body: launch, headers: { 'idempotency-key': launchKey } });
    const again = await send(route, 'POST', '/sessions', { body: { ...launch, idempotencyKey: launchKey } });
    expect(first.status, first.text).toBe(200);
    expect(again.status, again.text).toBe(200);
    expect(again.json.shareUrl).toBe(first.json.shareUrl);
    expect((await t.engine.store.sessionsOf(accountId, 0, 1000)).length).toBe(before + 1);
    // The same key from another user is another launch.
    const bob = await send(route, 'POST', '/sessions', { user: 'bob', body: launch, headers: { 'idempotency-key': launchKey } });
    expect(bob.status, bob.text).toBe(200);
    expect(bob.json.shareUrl).not.toBe(first.json.shareUrl);
    expect((await t.engine.store.sessionsOf(accountId, 0, 1000)).length).toBe(before + 2);
    // The service never saw the browser's own key, only the route's per-user one.
    expect((await t.engine.store.idempotency(accountId, launchKey, 0))).toBeUndefined();
    // Same key, different request: the service's refusal reaches the browser.
    expectFailure(await send(route, 'POST', '/sessions', { body: { ...launch, language: 'de' }, headers: { 'idempotency-key': launchKey } }), 400, 'denied', /idempotency key reused/);
    expectFailure(await send(route, 'POST', '/sessions', { body: { ...launch, idempotencyKey: 'a' }, headers: { 'idempotency-key': 'b' } }), 400, 'denied', /differ/);
    expectFailure(await send(route, 'POST', '/sessions', { body: launch, headers: { 'idempotency-key': 'k'.repeat(129) } }), 400, 'denied', /^idempotencyKey:/);

    for (const [created, user] of [[first, 'alice'], [bob, 'bob']] as const) {
      expect((await send(route, 'DELETE', `/sessions/${created.json.handle}`, { user })).status).toBe(200);
    }
    for (const session of (await t.engine.store.sessionsOf(accountId, 0, 1000))) {
      expect(await poll(async () => (await t.engine.store.session(session.id))!.status, (s) => s === 'deleted' || s === 'error')).toMatch(/deleted|error/);
    }
  });

  it('reads usage only for users the policy allows', async () => {
    expectFailure(await send(route, 'GET', '/usage'), 403, 'denied', /not shared/);
    const seen = await send(route, 'GET', '/usage', { headers: { 'x-role': 'admin' } });
    expect(seen.status).toBe(200);
    expect(userQuotaResponseSchema.parse(seen.json).has_plan).toBe(true);
    expect(seen.json).not.toHaveProperty('contact');
  });

  it('passes the service refusals through: denied 400, upgrade 402', async () => {
    expectFailure(await send(route, 'POST', '/sessions', { body: { browser: 'netscape' } }), 400, 'denied', /^browser: unknown browser "netscape"/);
    const spent = routeWith(await accountOn('spent'));
    expectFailure(await send(spent, 'POST', '/sessions', { body: { browser: 'chromium' } }), 402, 'upgrade', /cycle session limit reached/);
    const viewer = routeWith(await accountOn('viewer'));
    expectFailure(await send(viewer, 'POST', '/sessions', { body: { browser: 'chromium' } }), 402, 'upgrade', /programmatic access/);
  });
});

describe('requests from other sites', () => {
  let route: ReturnType<typeof routeWith>;
  beforeAll(() => {
    route = routeWith(engineService(t.engine, { apiKey: key }), { allowedOrigins: ['https://app.example.com'] });
  });

  it('refuses another Origin, Origin null and Sec-Fetch-Site cross-site, for reads and actions', async () => {
    const sessionsBefore = (await sessionCount());
    const elsewhere: Array<Record<string, string>> = [{ origin: 'https://evil.example' }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }, { origin: 'http://app.example.test:8080' }, { origin: 'https://app.example.test.evil.example' }];
    for (const headers of elsewhere) {
      for (const [method, path] of [['GET', '/images'], ['POST', '/sessions'], ['DELETE', '/sessions/abc'], ['GET', '/usage']]) {
        const seen = await send(route, method!, path!, { headers, body: method === 'POST' ? { browser: 'chromium' } : undefined });
        expectFailure(seen, 403, 'insecure');
        expect(seen.json.reason).toBe('cross_site');
      }
    }
    expect((await sessionCount())).toBe(sessionsBefore);
  });

  it('refuses actions that are not JSON: what a cross-site form could send', async () => {
    const sessionsBefore = (await sessionCount());
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', undefined]) {
      for (const [method, path] of [['POST', '/sessions'], ['POST', '/sessions/abc'], ['DELETE', '/sessions/abc']]) {
        const headers = new Headers({ 'x-user': 'alice' });
        if (type) headers.set('content-type', type);
        const seen = await exposure.record(await route(new Request(`${APP_ORIGIN}${BASE_PATH}${path}`, { method: method!, headers, body: method === 'POST' ? '{"browser":"chromium"}' : null })));
        expectFailure(seen, 415, 'insecure');
        expect(seen.json.reason).toBe('content_type');
      }
    }
    expect((await sessionCount())).toBe(sessionsBefore);
  });

  it('lets same-origin requests and listed origins through', async () => {
    expect((await send(route, 'GET', '/images', { headers: { origin: APP_ORIGIN, 'sec-fetch-site': 'same-origin' } })).status).toBe(200);
    expect((await send(route, 'GET', '/images', { headers: { origin: 'https://app.example.com', 'sec-fetch-site': 'same-site' } })).status).toBe(200);
    expect((await send(route, 'GET', '/images', { headers: { 'content-type': 'application/json; charset=utf-8', 'sec-fetch-site': 'same-origin' } })).status).toBe(200);
    // The scheme is not compared (TLS often ends at a proxy in front); the host is.
    expect((await send(route, 'GET', '/images', { headers: { origin: 'https://app.example.test' } })).status).toBe(200);
    // The Host header the browser sent counts as this site too (frameworks build request.url from their listen address).
    expect((await send(route, 'GET', '/images', { headers: { origin: 'https://shop.example.test', host: 'shop.example.test' } })).status).toBe(200);
    expect((await send(route, 'GET', '/images', { headers: { origin: 'https://shop.example.test', 'x-forwarded-host': 'shop.example.test, proxy.internal' } })).status).toBe(200);
  });
});

describe('the route itself', () => {
  let route: ReturnType<typeof routeWith>;
  beforeAll(() => {
    route = routeWith(engineService(t.engine, { apiKey: key }));
  });

  it('refuses without a signed-in user, and when authorize throws', async () => {
    expectFailure(await send(route, 'GET', '/images', { user: null }), 401, 'denied', /sign in/);
    const errors: unknown[] = [];
    const throwing = routeWith(engineService(t.engine, { apiKey: key }), { authorize: () => { throw new Error('session store down'); }, onError: (error) => errors.push(error) });
    expectFailure(await send(throwing, 'GET', '/images'), 401, 'denied');
    expect(errors).toHaveLength(1);
    const noId = routeWith(engineService(t.engine, { apiKey: key }), { authorize: () => ({ id: '', role: 'x' }), onError: (error) => errors.push(error) });
    expectFailure(await send(noId, 'GET', '/images'), 500, 'error');
    expect(errors[1]).toBeInstanceOf(RemoteBrowserError);
  });

  it('answers unknown paths 404 and wrong methods 405 with Allow', async () => {
    expectFailure(await send(route, 'GET', '/nothing'), 404, 'denied');
    expectFailure(await exposure.record(await route(new Request(`${APP_ORIGIN}/elsewhere/images`, { headers: { 'x-user': 'a' } }))), 404, 'denied');
    const put = await send(route, 'PUT', '/sessions', { headers: { 'content-type': 'application/json' } });
    expectFailure(put, 405, 'denied');
    expect(put.headers.allow).toBe('POST');
    expect((await send(route, 'PATCH', '/sessions/abc')).headers.allow).toBe('POST, DELETE');
    expect((await send(route, 'GET', '/images/')).status).toBe(200);
  });

  it('checks create bodies with the protocol schemas before anything happens', async () => {
    const sessionsBefore = (await sessionCount());
    expectFailure(await send(route, 'POST', '/sessions', { body: 'not json' }), 400, 'denied', /not valid JSON/);
    expectFailure(await send(route, 'POST', '/sessions', { body: [1] }), 400, 'denied', /JSON object/);
    expectFailure(await send(route, 'POST', '/sessions', { body: { browser: 'chromium', url: 'javascript:alert(1)' } }), 400, 'denied', /^url: /);
    expectFailure(await send(route, 'POST', '/sessions', { body: { browser: 'chromium', callbackUrl: 'ftp://x' } }), 400, 'denied', /^callbackUrl: /);
    expectFailure(await send(route, 'POST', '/sessions', { body: { url: 'https://example.com' } }), 400, 'denied', /^browser: /);
    expectFailure(await send(route, 'POST', '/sessions', { body: { browser: 'chromium', url: `https://example.com/${'a'.repeat(70_000)}` } }), 413, 'denied', /larger than 64 KiB/);
    expect((await sessionCount())).toBe(sessionsBefore);
  });

  it('applies the policy: allowed browsers, URL rules, a forced callbackUrl', async () => {
    const sessionsBefore = (await sessionCount());
    const errors: unknown[] = [];
    const strict = routeWith(engineService(t.engine, { apiKey: key }), {
      onError: (error) => errors.push(error),
      policy: {
        browsers: ({ user }) => (user.role === 'admin' ? undefined : ['firefox-esr']),
        create: (request, { user }) => {
          if (user.id === 'broken') return { ...request, callbackUrl: 'not a url' };
          if (request.url?.startsWith('https://blocked.example')) return { status: 'denied', message: 'url: this site is not allowed' };
          if (request.country) return { status: 'upgrade', message: 'country: exit locations come with the team plan' };
          return { ...request, callbackUrl: 'https://app.example.test/done' };
        },
      },
    });
    const images = await send(strict, 'GET', '/images');
    expect(images.json.images.map((i: { id: string }) => i.id)).toEqual(['firefox-esr']);
    expect((await send(strict, 'GET', '/images', { headers: { 'x-role': 'admin' } })).json.images.length).toBeGreaterThan(1);
    expectFailure(await send(strict, 'POST', '/sessions', { body: { browser: 'chromium' } }), 403, 'denied', /^browser: "chromium" is not available to you; choose one of: firefox-esr/);
    expectFailure(await send(strict, 'POST', '/sessions', { body: { browser: 'firefox-esr', url: 'https://blocked.example/x' } }), 403, 'denied', /not allowed/);
    expectFailure(await send(strict, 'POST', '/sessions', { body: { browser: 'firefox-esr', country: 'us' } }), 402, 'upgrade', /team plan/);
    expectFailure(await send(strict, 'POST', '/sessions', { user: 'broken', body: { browser: 'firefox-esr' } }), 500, 'error');
    expect(errors).toHaveLength(1);
    expect((errors[0] as RemoteBrowserError).message).toMatch(/policy\.create returned a request the service would refuse: callbackUrl/);
    expect((await sessionCount())).toBe(sessionsBefore);

    const created = await send(strict, 'POST', '/sessions', { headers: { 'x-role': 'admin' }, body: { browser: 'chromium', url: t.pageUrl, callbackUrl: 'https://elsewhere.example/' } });
    expect(created.status, created.text).toBe(200);
    const row = (await t.engine.store.sessionsOf(accountId, 0, 1))[0]!;
    expect(row.callback_url).toBe('https://app.example.test/done');
    expect((await send(strict, 'DELETE', `/sessions/${created.json.handle}`, { headers: { 'x-role': 'admin' } })).status).toBe(200);
    expect(await poll(async () => (await t.engine.store.session(row.id))!.status, (s) => s === 'deleted' || s === 'error')).toMatch(/deleted|error/);
  });

  it('rate-limits per user, creates more tightly, and with a shared limiter across servers', async () => {
    const limited = routeWith(engineService(t.engine, { apiKey: key }), { rateLimit: { requests: 3, creates: 1, perSeconds: 60 } });
    for (let i = 0; i < 3; i++) expect((await send(limited, 'GET', '/images', { user: 'carol' })).status).toBe(200);
    const refused = await send(limited, 'GET', '/images', { user: 'carol' });
    expectFailure(refused, 429, 'insecure', /retry after \d+ s/);
    expect(refused.json.reason).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await send(limited, 'GET', '/images', { user: 'dave' })).status).toBe(200);
    // Creations: the second within the window is refused before it reaches the service.
    expectFailure(await send(limited, 'POST', '/sessions', { user: 'erin', body: { browser: 'netscape' } }), 400, 'denied');
    expectFailure(await send(limited, 'POST', '/sessions', { user: 'erin', body: { browser: 'netscape' } }), 429, 'insecure');

    // Two servers sharing one limiter (RateLimiterRedis in production) share the count.
    const shared = new RateLimiterMemory({ points: 1, duration: 60 });
    const [one, two] = [0, 1].map(() => routeWith(engineService(t.engine, { apiKey: key }), { rateLimit: { limiter: shared } }));
    expect((await send(one!, 'GET', '/images', { user: 'frank' })).status).toBe(200);
    expectFailure(await send(two!, 'GET', '/images', { user: 'frank' }), 429, 'insecure');

    // A limiter that fails (its store is down) refuses with "try again later" and reports it.
    const errors: unknown[] = [];
    const broken = routeWith(engineService(t.engine, { apiKey: key }), { onError: (e) => errors.push(e), rateLimit: { limiter: { consume: () => Promise.reject(new Error('redis down')) } } });
    expectFailure(await send(broken, 'GET', '/images'), 503, 'error', /try again later/);
    expect(errors).toHaveLength(1);
    // Turned off: no limit at all.
    const open = routeWith(engineService(t.engine, { apiKey: key }), { rateLimit: false });
    for (let i = 0; i < 150; i++) expect((await open(new Request(`${APP_ORIGIN}${BASE_PATH}/images`, { headers: { 'x-user': 'gina' } }))).status).toBe(200);
  });
});

describe('upstream statuses and failures', () => {
  let fake: Server;
  let fakeUrl: string;
  let fakeAnswer: { status: number; body: string; headers?: Record<string, string> } = { status: 200, body: '{}' };

  beforeAll(async () => {
    fake = createServer((_, response) => response.writeHead(fakeAnswer.status, { 'content-type': 'application/json', ...fakeAnswer.headers }).end(fakeAnswer.body));
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => fake.close(() => resolve())));

  it("passes the service's rate_limited through as 429 with Retry-After", async () => {
    const limitedKey = (await limitedEngine.key('std')).key;
    keys.push(limitedKey);
    const route = routeWith(createServiceClient({ baseUrl: limitedEngine.engine.url, apiKey: limitedKey }), { policy: { usage: () => true } });
    let seen: Seen | undefined;
    for (let i = 0; i < 4 && seen?.status !== 429; i++) seen = await send(route, 'GET', '/usage');
    expectFailure(seen!, 429, 'insecure', /retry after \d+ s/);
    expect(seen!.json.reason).toBe('rate_limited');
    expect(Number(seen!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it("passes the service's error status through as 502", async () => {
    fakeAnswer = { status: 200, body: JSON.stringify({ status: 'error', message: 'the service failed; try again later' }) };
    const route = routeWith(createServiceClient({ baseUrl: fakeUrl, apiKey: key, retries: 0 }));
    expectFailure(await send(route, 'GET', '/images'), 502, 'error', /^the service failed; try again later$/);
  });

  it('answers error 502 when the engine is down, and 504 when it does not answer in time', async () => {
    const errors: unknown[] = [];
    const down = await startTestEngine();
    const downKey = (await down.key('std')).key;
    keys.push(downKey);
    const downUrl = down.engine.url;
    await down.close();
    const route = routeWith(createServiceClient({ baseUrl: downUrl, apiKey: downKey, retries: 1 }), { onError: (e) => errors.push(e) });
    expectFailure(await send(route, 'GET', '/images'), 502, 'error', /try again later/);
    expectFailure(await send(route, 'POST', '/sessions', { body: { browser: 'chromium' } }), 502, 'error');
    expect(errors.map((e) => (e as RemoteBrowserError).code)).toEqual(['unreachable', 'unreachable']);
    exposure.seen.slice(-2).forEach((seen) => expect(seen.text).not.toContain(new URL(downUrl).host));

    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const slow = routeWith(createServiceClient({ baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, apiKey: key, timeoutMs: 200, retries: 0 }));
    expectFailure(await send(slow, 'GET', '/images'), 504, 'error', /did not answer in time/);
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it("turns what only the operator can fix (the key refused, the service's browser check) into error 502", async () => {
    const errors: unknown[] = [];
    const revoked = routeWith(createServiceClient({ baseUrl: t.engine.url, apiKey: 'rbk_not-a-real-key-but-long-enough' }), { onError: (e) => errors.push(e) });
    const seen = await send(revoked, 'POST', '/sessions', { body: { browser: 'chromium' } });
    expectFailure(seen, 502, 'error');
    expect(seen.text).not.toMatch(/API key/i);
    expect((errors[0] as RemoteBrowserError).code).toBe('unauthorized');

    fakeAnswer = { status: 403, body: JSON.stringify({ status: 'insecure', reason: 'client_side_key', message: 'this request came from a web browser' }) };
    const route = routeWith(createServiceClient({ baseUrl: fakeUrl, apiKey: key }), { onError: (e) => errors.push(e) });
    expectFailure(await send(route, 'GET', '/images'), 502, 'error', /try again later/);
    fakeAnswer = { status: 200, body: '<html>gateway</html>' };
    expectFailure(await send(route, 'GET', '/images'), 502, 'error', /try again later/);
  });

  it('reports configuration mistakes to the operator, never to the browser', async () => {
    expect(() => routeWith(engineService(t.engine, { apiKey: key }), { secret: 'short' })).toThrow(/secret is too short: use at least 32/);
    const errors: unknown[] = [];
    const saved = process.env.REMOTE_BROWSER_SECRET;
    const savedKey = process.env.REMOTE_BROWSER_API_KEY;
    delete process.env.REMOTE_BROWSER_SECRET;
    delete process.env.REMOTE_BROWSER_API_KEY;
    try {
      const noSecret = createProxyRoute<User>({ service: engineService(t.engine, { apiKey: key }), authorize, onError: (e) => errors.push(e) });
      expectFailure(await send(noSecret, 'GET', '/sessions/abc'), 500, 'error', /not set up/);
      expect((errors[0] as RemoteBrowserError).message).toMatch(/^secret is missing: pass createProxyRoute\(\{ secret \}\) or set REMOTE_BROWSER_SECRET/);
      // Read at the request, not at creation: setting it now is enough.
      process.env.REMOTE_BROWSER_SECRET = SECRET;
      expectFailure(await send(noSecret, 'GET', '/sessions/abc'), 404, 'denied');

      const noKey = routeWith(engineService(t.engine), { onError: (e) => errors.push(e) });
      expectFailure(await send(noKey, 'POST', '/sessions', { body: { browser: 'chromium' } }), 500, 'error');
      expect((errors[1] as RemoteBrowserError).message).toMatch(/^apiKey is missing: .*REMOTE_BROWSER_API_KEY/);
      process.env.REMOTE_BROWSER_API_KEY = key;
      expect((await send(noKey, 'GET', '/usage')).status).toBe(403);
      expectFailure(await send(noKey, 'POST', '/sessions', { body: { browser: 'netscape' } }), 400, 'denied', /unknown browser/);
    } finally {
      if (saved === undefined) delete process.env.REMOTE_BROWSER_SECRET;
      else process.env.REMOTE_BROWSER_SECRET = saved;
      if (savedKey === undefined) delete process.env.REMOTE_BROWSER_API_KEY;
      else process.env.REMOTE_BROWSER_API_KEY = savedKey;
    }
  });
});

describe('what reaches the browser and the service', () => {
  it('never shows the API key, the secret, upstream addresses or stack traces', () => {
    exposure.expectClean([...keys, SECRET], [new URL(t.engine.url).host, new URL(limitedEngine.engine.url).host, 'engine.in-process', '127.0.0.1']);
  });

  it("never forwards the browser's Origin, Sec-Fetch-Site or cookies upstream", () => {
    expect(upstreamHeaders.length).toBeGreaterThan(5);
    for (const headers of upstreamHeaders) {
      expect(headers.get('origin')).toBeNull();
      expect(headers.get('sec-fetch-site')).toBeNull();
      expect(headers.get('cookie')).toBeNull();
      expect(headers.get('x-user')).toBeNull();
    }
  });
});
