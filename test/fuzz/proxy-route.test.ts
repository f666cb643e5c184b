// Property-based fuzzing of the proxy route (createProxyRoute behind the node:http adapter, as a
// customer mounts it) in front of a real engine started as a child process: generated paths
// under and outside the base path, methods, handles (own, another user's, forged, altered, cut,
// badly encoded), headers (signed-in or not, Origin and Sec-Fetch-Site, Content-Type,
// Idempotency-Key, X-Forwarded-*, Host) and create bodies. Every answer must be JSON in the
// route's envelope with a status of docs/proxy-route.md's table, the security headers, and
// nothing the browser must not see (the API key, the secret, the engine's address, a vmId, a
// stack trace); the operator's onError must hear of nothing. Replay a failure with FUZZ_SEED=<seed>.
import fc from 'fast-check';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureSchema, imageListResponseSchema, userQuotaResponseSchema } from '../../src/protocol/index.js';
import { toNodeHandler } from '../../src/server/adapters/node.js';
import { createProxyRoute, createServiceClient, proxyCreateResponseSchema, proxyEndResponseSchema, proxySessionResponseSchema } from '../../src/server/index.js';
import { useEngine } from '../api/context.js';
import { testConfig, type PlanConfig } from '../api/harness.js';
import {
  bodyBytes,
  createBodyOf,
  describeAnswer,
  describeExchange,
  exchange,
  expectJson,
  expectNothingLeaked,
  expectSecurityHeaders,
  fuzz,
  headerValue,
  headSize,
  junkString,
  maybe,
  pathJunk,
  runs,
  Tally,
  type Answer,
  type Exchange,
} from './fuzz.js';

/** The site's account: one running session and three a cycle, so valid creates cannot pile up browsers. */
const SITE_PLAN: PlanConfig = {
  id: 'site',
  name: 'Site',
  running_session_limit: 1,
  cycle_session_limit: 3,
  residential_cycle_mb_limit: null,
  location_access: false,
  programmatic_access: true,
  max_session_minutes: 60,
  idle_timeout_minutes: 30,
};
const SECRET = 'fuzz-proxy-route-secret-0123456789abcdef';
const BASE = '/api/remote-browser';
const LISTED_ORIGIN = 'https://app.example.com';
/** The user whose creations are limited tightly (three a minute): the route's own 429. */
const LIMITED_USER = 'eve';

const ctx = useEngine({ config: testConfig({ plans: [SITE_PLAN] }) });
const tally = new Tally();
const outcomes = new Tally();
const startedAt = Date.now();
/** What reached the operator's onError: must stay empty. */
const reported: unknown[] = [];

let apiKey = '';
let server: Server;
let routeOrigin = '';
let hostHeader = '';
/** Handles the route gave out, with the user they belong to. */
const handles: { handle: string; user: string }[] = [];

beforeAll(async () => {
  apiKey = (await ctx.account([SITE_PLAN])).account.key;
  const route = createProxyRoute<{ id: string; role: string }>({
    service: createServiceClient({ baseUrl: ctx.engine.url, apiKey }),
    authorize: (request) => {
      const id = request.headers.get('x-user');
      return id ? { id, role: request.headers.get('x-role') ?? 'member' } : null;
    },
    secret: SECRET,
    allowedOrigins: [LISTED_ORIGIN],
    policy: {
      browsers: ['chromium'],
      usage: ({ user }) => user.role === 'admin',
      create: (request) => (request.url?.includes('blocked') ? { status: 'denied', message: 'url: this site does not open that page' } : { ...request, callbackUrl: 'https://app.example.com/done' }),
    },
    rateLimit: {
      requests: 100_000,
      // One user runs into the creation limit at once; the others never do, so that creates go on to the service.
      createLimiter: (() => {
        const tight = new RateLimiterMemory({ points: 3, duration: 60 });
        return { consume: (key: string) => (key === LIMITED_USER ? tight.consume(key) : Promise.resolve()) };
      })(),
    },
    onError: (error) => reported.push(error),
  });
  const handler = toNodeHandler(route);
  server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hostHeader = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  routeOrigin = `http://${hostHeader}`;
});

afterAll(async () => {
  tally.print('test/fuzz/proxy-route.test.ts', startedAt);
  outcomes.print('outcomes of test/fuzz/proxy-route.test.ts', startedAt);
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

// ---------------------------------------------------------------------------------------------
// Arbitraries

const USERS = ['alice', 'bob', LIMITED_USER];
const pick = <T>(pool: readonly T[], index: number): T | undefined => (pool.length === 0 ? undefined : pool[index % pool.length]);

/** A handle as a browser might send it back: its own, another's, or spoilt. */
const handleArb = fc.oneof(
  { weight: 4, arbitrary: fc.nat().map((i) => ({ kind: 'given', ...(pick(handles, i) ?? { handle: 'none', user: '' }) })) },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.nat(), fc.nat(), fc.constantFrom('flip', 'cut', 'longer', 'upper', 'padded')).map(([i, at, how]) => {
      const given = pick(handles, i)?.handle ?? 'AAAA';
      const spot = at % given.length;
      const changed = how === 'flip' ? `${given.slice(0, spot)}${given[spot] === 'A' ? 'B' : 'A'}${given.slice(spot + 1)}`
        : how === 'cut' ? given.slice(0, spot) : how === 'longer' ? `${given}A` : how === 'upper' ? given.toUpperCase() : `${given}==`;
      return { kind: 'spoilt', handle: changed, user: '' };
    }),
  },
  { weight: 1, arbitrary: fc.base64String({ minLength: 4, maxLength: 120 }).map((b) => ({ kind: 'forged', handle: b.replace(/\+/g, '-').replace(/\//g, '_').replace(/=/g, ''), user: '' })) },
  { weight: 1, arbitrary: fc.oneof(pathJunk, junkString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '')))).map((junk) => ({ kind: 'junk', handle: junk, user: '' })) },
);

interface Planned extends Exchange {
  /** The handle's owner when the request names one the route gave out unchanged. */
  owner?: string;
}

const target: fc.Arbitrary<{ method: string; path: string; owner?: string; body?: Buffer }> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ method: fc.oneof({ weight: 8, arbitrary: fc.constant('GET') }, { weight: 1, arbitrary: fc.constantFrom('POST', 'HEAD', 'OPTIONS') }), path: fc.constantFrom(`${BASE}/images`, `${BASE}/images/`, `${BASE}/usage`) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      method: fc.oneof({ weight: 8, arbitrary: fc.constant('POST') }, { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE') }),
      path: fc.constantFrom(`${BASE}/sessions`, `${BASE}/sessions/`),
      body: bodyBytes(fc.oneof(
        { weight: 3, arbitrary: createBodyOf({ browser: fc.constantFrom('chromium', 'chromium', 'firefox-esr', 'lynx'), url: fc.oneof(fc.constant('page').map(() => ctx.pages.page), fc.constant('https://blocked.example/'), fc.webUrl()) }) },
        { weight: 1, arbitrary: fc.constant('page').map(() => ({ browser: 'chromium', url: ctx.pages.page })) },
      )),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ method: fc.oneof({ weight: 8, arbitrary: fc.constantFrom('GET', 'GET', 'POST', 'DELETE') }, { weight: 1, arbitrary: fc.constantFrom('PUT', 'PATCH', 'HEAD') }), handle: handleArb, slash: fc.boolean(), body: maybe(bodyBytes(fc.jsonValue({ maxDepth: 1 }))) })
      .map(({ method, handle, slash, body }) => ({ method, path: `${BASE}/sessions/${handle.handle}${slash ? '/' : ''}`, ...(handle.kind === 'given' ? { owner: handle.user } : {}), ...(body ? { body } : {}) })),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      method: fc.constantFrom('GET', 'POST', 'DELETE', 'PUT'),
      path: fc.oneof(
        pathJunk.map((junk) => `${BASE}/${junk}`),
        pathJunk.map((junk) => `/${junk}`),
        fc.constantFrom(BASE, `${BASE}/`, `${BASE}x/images`, `/API/remote-browser/images`, `${BASE}/sessions/a/b`, `${BASE}//images`, `${BASE}/./images`, `${BASE}/../remote-browser/images`, `//${BASE}/images`, '//', `${BASE}/images?x=${'y'.repeat(3000)}`),
      ),
      body: maybe(bodyBytes(fc.jsonValue({ maxDepth: 1 }))),
    }),
  },
);

/** Absent six times in seven. */
const rarely = <T>(arbitrary: fc.Arbitrary<T>) => fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });

const headers = fc.record({
  'x-user': fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...USERS, 'alice', 'bob') }, { weight: 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: headerValue }),
  'x-role': maybe(fc.constantFrom('admin', 'member', 'Admin')),
  origin: fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: fc.constant('same').map(() => routeOrigin) },
    { weight: 1, arbitrary: fc.constantFrom(LISTED_ORIGIN, 'https://evil.example', 'null', 'http://127.0.0.1', `${LISTED_ORIGIN}/`) },
    { weight: 1, arbitrary: headerValue },
  ),
  'sec-fetch-site': rarely(fc.constantFrom('same-origin', 'same-site', 'cross-site', 'none', 'CROSS-SITE')),
  'content-type': fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'Application/JSON') },
    { weight: 2, arbitrary: fc.constantFrom(undefined, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', ' application/json ') },
    { weight: 1, arbitrary: headerValue },
  ),
  'idempotency-key': maybe(fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), fc.constant('k'.repeat(200)), headerValue)),
  'x-forwarded-host': rarely(fc.oneof(fc.constantFrom('app.example.com', 'evil.example', 'a, b'), headerValue)),
  'x-forwarded-proto': rarely(fc.oneof(fc.constantFrom('https', 'http', 'javascript'), headerValue)),
  host: rarely(fc.oneof(fc.constantFrom('app.example.com', 'localhost:1', '[::1]:80'), headerValue)),
  cookie: maybe(headerValue),
  authorization: maybe(fc.constant('Bearer stolen').map(() => `Bearer ${apiKey}`)),
}).map((h) => Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Record<string, string>);

const request: fc.Arbitrary<Planned> = fc.tuple(target, headers, fc.boolean()).map(([t, h, chunked]) => ({
  method: t.method,
  path: t.path,
  headers: h,
  ...(t.body && t.method !== 'GET' && t.method !== 'HEAD' ? { body: t.body, chunked: chunked && t.body.length > 0 } : {}),
  ...(t.owner !== undefined ? { owner: t.owner } : {}),
}));

// ---------------------------------------------------------------------------------------------
// What each answer must be (docs/proxy-route.md: endpoints, the outcome table, security choices)

const first = (value: string | undefined) => (value ?? '').split(',')[0]!.trim();

/** The origin check of docs/proxy-route.md, Security choices: what makes a request another site's. */
function isCrossSite(h: Record<string, string>): boolean {
  const origin = h.origin;
  if (origin === undefined) return h['sec-fetch-site'] === 'cross-site';
  if (origin === LISTED_ORIGIN) return false;
  let originHost = '';
  try {
    originHost = new URL(origin).host;
  } catch {
    return true;
  }
  // `null`, `A:`: an Origin without a host is nobody's own.
  if (originHost === '') return true;
  // An empty Host is replaced by Node's client with its own.
  const host = h.host || hostHeader;
  // The host of the URL the node adapter builds: X-Forwarded-Host or Host, when it is a host.
  const proto = first(h['x-forwarded-proto']).toLowerCase();
  const urlHost = (() => {
    try {
      return new URL(`${proto === 'https' ? 'https' : 'http'}://${first(h['x-forwarded-host']) || host}`).host;
    } catch {
      return 'localhost';
    }
  })();
  return ![urlHost, host, first(h['x-forwarded-host'])].includes(originHost);
}

/** The endpoint a path and method name (docs/proxy-route.md, Endpoints); null for none. */
function endpointOf(method: string, path: string): { name: string; allow?: string; handle?: string } | null {
  // The path as a URL reads it: dot segments resolved, an origin-form `//` kept as a path.
  const pathname = new URL(`http://route${path}`).pathname;
  if (pathname !== BASE && !pathname.startsWith(`${BASE}/`)) return null;
  const rest = pathname.slice(BASE.length).replace(/\/$/, '');
  const only = (allow: string, name: string) => (allow.split(', ').includes(method) ? { name } : { name, allow });
  if (rest === '/images') return only('GET', 'images');
  if (rest === '/usage') return only('GET', 'usage');
  if (rest === '/sessions') return only('POST', 'create');
  const session = /^\/sessions\/([^/]+)$/.exec(rest);
  if (!session) return null;
  return method === 'GET' ? { name: 'read', handle: session[1]! } : { ...only('POST, DELETE', 'end'), handle: session[1]! };
}

const BY_HTTP: Record<number, { status: string; reason?: string }> = {
  400: { status: 'denied' },
  401: { status: 'denied' },
  402: { status: 'upgrade' },
  404: { status: 'denied' },
  405: { status: 'denied' },
  413: { status: 'denied' },
  415: { status: 'insecure', reason: 'content_type' },
  429: { status: 'insecure', reason: 'rate_limited' },
};

function judge(req: Planned, answer: Answer): void {
  const context = `${describeExchange(req)}\n  -> ${describeAnswer(answer)}`;
  const h = req.headers ?? {};
  const head = req.method === 'HEAD';
  if (answer.http === 431) return void expect(headSize(req), `${context}: 431 for a short request head`).toBeGreaterThan(15_000);
  expect(reported, `${context}: the operator's onError heard of a failure: ${String(reported[0])}`).toEqual([]);
  expect([200, 400, 401, 402, 403, 404, 405, 413, 415, 429], `${context}: not a status of the route's table`).toContain(answer.http);
  expectSecurityHeaders(answer, context);
  expectNothingLeaked(answer, context, [apiKey, SECRET, ctx.engine.url, new URL(ctx.engine.url).host, 'Bearer']);
  // vmIds (32 hexadecimal digits, decisions.md 36) stay on the server; subscription ids have a prefix.
  expect(answer.text, `${context}: a vmId reached the browser`).not.toMatch(/(?<![_0-9a-f])[0-9a-f]{32}(?![0-9a-f])/);
  if (!head) {
    expectJson(answer, context);
    if (answer.http === 200) expect(answer.json.status, context).toBe('ok');
    else expect(failureSchema.safeParse(answer.json).success, `${context}: not the failure envelope`).toBe(true);
    const expected = BY_HTTP[answer.http];
    if (expected) expect(answer.json, context).toMatchObject(expected);
    if (answer.http === 403) expect(answer.json.status === 'denied' || (answer.json.status === 'insecure' && answer.json.reason === 'cross_site'), context).toBe(true);
  }
  if (answer.http === 429) expect(answer.headers['retry-after'], context).toMatch(/^[1-9]\d*$/);
  const endpoint = endpointOf(req.method, req.path);
  outcomes.add(`${endpoint?.allow ? 'wrong method' : endpoint?.name ?? 'no endpoint'} -> ${answer.http} ${head ? '(HEAD)' : answer.json.status}${answer.json?.reason ? ` ${answer.json.reason}` : ''}`);
  // A body over the cap is refused by the adapter before the route looks at the request.
  if (answer.http === 413) return void expect(req.body?.length ?? 0, context).toBeGreaterThan(64 * 1024);
  if (!endpoint) return void expect(answer.http, context).toBe(404);
  if (endpoint.allow) {
    expect(answer.http, context).toBe(405);
    expect(answer.headers.allow, context).toBe(endpoint.allow);
    return;
  }
  if (isCrossSite(h)) return void expect([answer.http, answer.json?.reason], context).toEqual([403, 'cross_site']);
  const media = (h['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if ((req.method === 'POST' || req.method === 'DELETE') && media !== 'application/json') return void expect(answer.http, context).toBe(415);
  // Header values arrive without the spaces and tabs around them.
  const user = (h['x-user'] ?? '').replace(/^[ \t]+|[ \t]+$/g, '');
  if (!user) return void expect(answer.http, context).toBe(401);

  switch (endpoint.name) {
    case 'images':
      expect(answer.http, context).toBe(200);
      expect(imageListResponseSchema.safeParse(answer.json).success, context).toBe(true);
      // The policy's browsers only.
      expect(answer.json.images.map((image: { id: string }) => image.id), context).toEqual(['chromium']);
      return;
    case 'usage':
      if (h['x-role'] !== 'admin') return void expect(answer.http, context).toBe(403);
      expect(answer.http, context).toBe(200);
      expect(userQuotaResponseSchema.safeParse(answer.json).success, context).toBe(true);
      expect(answer.json.running_sessions_used, context).toBeLessThanOrEqual(SITE_PLAN.running_session_limit);
      return;
    case 'create':
      expect([200, 400, 402, 403, 429], context).toContain(answer.http);
      if (answer.http === 200) {
        expect(proxyCreateResponseSchema.safeParse(answer.json).success, context).toBe(true);
        expect(answer.json.quota.running_sessions_used, context).toBeLessThanOrEqual(SITE_PLAN.running_session_limit);
        handles.push({ handle: answer.json.handle, user });
      }
      return;
    case 'read':
    case 'end': {
      // Your own handle names your session (ended ones too, docs/proxy-route.md); any other is unknown.
      const own = req.owner !== undefined && req.owner === user;
      if (!own) return void expect(answer.http, context).toBe(404);
      expect(answer.http, context).toBe(200);
      if (endpoint.name === 'end') return void expect(proxyEndResponseSchema.safeParse(answer.json).success, context).toBe(true);
      expect(proxySessionResponseSchema.safeParse(answer.json).success, context).toBe(true);
      expect(answer.json.session.handle, context).toBe(decodeURIComponent(endpoint.handle!));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Properties

describe('the proxy route under fuzzed requests', () => {
  it('answers every request in its envelope, with a status of its table, and shows the browser nothing secret', async () => {
    await fuzz('proxy-route: requests', 21, fc.array(request, { minLength: 1, maxLength: 3 }), runs(2500), async (batch) => {
      const answers = await Promise.all(batch.map(async (req) => {
        tally.add('HTTP requests to the route');
        try {
          return await exchange(routeOrigin, req);
        } catch (error) {
          if (headSize(req) > 15_000) return undefined;
          throw new Error(`${describeExchange(req)}: no answer (${(error as Error).message})`);
        }
      }));
      batch.forEach((req, index) => {
        const answer = answers[index];
        if (answer) judge(req, answer);
        else tally.add('(of which: request heads over 16 KiB, reset by the HTTP parser)');
      });
      expect(ctx.engine.alive(), 'the engine died').toBe(true);
    });
  }, 120_000);

  it("leaves the site's account within its plan", async () => {
    tally.add('HTTP requests to the route');
    const usage = await exchange(routeOrigin, { method: 'GET', path: `${BASE}/usage`, headers: { 'x-user': 'alice', 'x-role': 'admin' } });
    expect(usage.http, usage.text).toBe(200);
    expect(usage.json.running_sessions_used).toBeLessThanOrEqual(SITE_PLAN.running_session_limit);
    expect(usage.json.cycle_sessions_used).toBeLessThanOrEqual(SITE_PLAN.cycle_session_limit!);
    console.log(`[fuzz] the site's account after the fuzzing: ${handles.length} sessions created through the route; meters running ${usage.json.running_sessions_used}, cycle ${usage.json.cycle_sessions_used}`);
    // What is still running ends now, through the route, as the user who started it.
    for (const { handle, user } of handles) {
      tally.add('HTTP requests to the route');
      const ended = await exchange(routeOrigin, { method: 'DELETE', path: `${BASE}/sessions/${handle}`, headers: { 'x-user': user, 'content-type': 'application/json' } });
      expect(ended.http, ended.text).toBe(200);
    }
  }, 60_000);
});
