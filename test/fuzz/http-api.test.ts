// Property-based fuzzing of the engine's whole HTTP surface, started as a real child process:
// every endpoint of v8, v7 and v6, the share API, the viewer site, /healthz and unknown paths,
// with generated methods, paths (encoded junk, dot segments, huge, junk queries), headers (every
// kind of Authorization, browser headers, X-Forwarded-For, junk) and bodies (create and remove
// bodies with fields of the wrong type, huge, NUL, lone surrogates, deep nesting, invalid UTF-8,
// cut short, not JSON). Every answer must come from a live engine, with a documented HTTP status,
// in its version's envelope, with the security headers. Afterwards the fuzzed account's meters
// must equal a recount of its sessions. Replay a failure with FUZZ_SEED=<seed>.
import fc from 'fast-check';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createResponseSchema,
  failureSchema,
  imageListResponseSchema,
  removeResponseSchema,
  isShareTab,
  SHARE_LANGUAGES,
  userApiResponseSchema,
  userQuotaResponseSchema,
  v6FailureSchema,
  v6GetKeyResponseSchema,
  v6ShortUrlResponseSchema,
  v7CreateResponseSchema,
  v7UserApiResponseSchema,
  v7UserQuotaResponseSchema,
  v7VmDataResponseSchema,
  viewerStateSchema,
  vmDataResponseSchema,
} from '../../src/protocol/index.js';
import { useEngine } from '../api/context.js';
import { Api, createKey, PLANS, revokeKey, ROOT, testConfig, type PlanConfig } from '../api/harness.js';
import {
  bodyBytes,
  createBodyOf,
  describeAnswer,
  describeExchange,
  exchange,
  expectJson,
  field,
  expectNothingLeaked,
  expectSecurityHeaders,
  fuzz,
  headerName,
  headSize,
  headerValue,
  junkString,
  maybe,
  pathJunk,
  runs,
  sleep,
  Tally,
  wrongType,
  type Answer,
  type Exchange,
} from './fuzz.js';

/** The fuzzed account's plan: one running session and four a cycle, so valid creates cannot pile up browsers. */
const FUZZ_PLAN: PlanConfig = {
  id: 'fuzz',
  name: 'Fuzz',
  running_session_limit: 1,
  cycle_session_limit: 4,
  residential_cycle_mb_limit: null,
  location_access: false,
  programmatic_access: true,
  max_session_minutes: 120,
  idle_timeout_minutes: 60,
};

// 127.0.0.1 is a trusted proxy, so a generated X-Forwarded-For spreads the unknown share links over
// many client addresses (some requests still exhaust their address's look-ups: 429 is fuzzed too).
const ctx = useEngine({ config: testConfig({ plans: [...Object.values(PLANS), FUZZ_PLAN], trustedProxies: ['127.0.0.1/32'] }) });
const tally = new Tally();
/** What the answers were, by family, HTTP status and envelope status: shows how deep the fuzzing got. */
const outcomes = new Tally();
const startedAt = Date.now();
const SITE_BUILT = existsSync(join(ROOT, 'dist', 'viewer-site', 'index.html'));

/** What the fuzzer knows of the engine: keys, a live share link, and what valid answers handed out. */
const known = {
  /** The account fuzzed through v8 and v7 (plan FUZZ_PLAN). */
  fuzzKey: '',
  fuzzApi: undefined as unknown as Api,
  /** The account fuzzed through v6 (plan FUZZ_PLAN too): its /b launches do not use up the other's cycle. */
  v6Key: '',
  v6Api: undefined as unknown as Api,
  /** A second key of the fuzzed account, revoked before the fuzzing. */
  revokedKey: '',
  /** An account without programmatic access. */
  viewerKey: '',
  /** Another account's session and its share link: it stays live throughout. */
  foreignVmId: '',
  liveLink: '',
  /** getKey session keys of the v6 account. */
  tokens: [] as string[],
  /** What valid answers handed out to the fuzzer. */
  vmIds: [] as string[],
  links: [] as string[],
  shortUrls: [] as string[],
  browsers: ['chromium'] as string[],
  /** The tab ids the live link's state told (the tab actions name them). */
  tabIds: [] as string[],
};

const pick = <T>(pool: readonly T[], index: number, fallback: T): T => (pool.length === 0 ? fallback : pool[index % pool.length]!);

beforeAll(async () => {
  const fuzzed = await ctx.account([FUZZ_PLAN]);
  known.fuzzKey = fuzzed.account.key;
  known.fuzzApi = fuzzed.api;
  const v6 = await ctx.account([FUZZ_PLAN]);
  known.v6Key = v6.account.key;
  known.v6Api = v6.api;
  const second = await createKey(ctx.engine.workspace, fuzzed.account.id);
  await revokeKey(ctx.engine.workspace, second.id);
  known.revokedKey = second.key;
  known.viewerKey = (await ctx.account([PLANS.noApi])).account.key;
  const other = await ctx.account([PLANS.basic]);
  const created = await other.api.create({ browser: 'chromium', url: ctx.pages.page });
  expect(created.json?.status, created.text).toBe('ok');
  ctx.track(other.api, created.json.vmId);
  known.foreignVmId = created.json.vmId;
  known.liveLink = new URL(created.json.shareUrl).search.slice(1);
  const token = await exchange(ctx.engine.url, { method: 'GET', path: `/api/v6/getKey?key=${encodeURIComponent(known.v6Key)}` });
  expect(token.json?.success, token.text).toBe(true);
  known.tokens.push(token.json.token);
  const images = await ctx.anon.image();
  known.browsers = images.json.images.filter((image: { enabled: boolean }) => image.enabled).map((image: { id: string }) => image.id);
}, 60_000);

afterAll(async () => {
  // The fuzzed account's sessions that a vmId names go now; a /b launch has none to name and ends with the engine.
  if (ctx.engine?.alive()) for (const vmId of known.vmIds) ctx.track(known.fuzzApi, vmId);
  tally.print('test/fuzz/http-api.test.ts', startedAt);
  outcomes.print('outcomes of test/fuzz/http-api.test.ts', startedAt);
});

// ---------------------------------------------------------------------------------------------
// Arbitraries

/** Percent-encodes every byte of the text's UTF-8 but unreserved characters (lone surrogates become U+FFFD). */
function encodeQuery(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((b) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

const validUrl = fc.oneof(
  fc.constant('page').map(() => ctx.pages.page),
  fc.nat().map((i) => pick(known.shortUrls, i, ctx.pages.page)),
  fc.webUrl(),
  fc.constantFrom('http://127.0.0.1:9/', 'https://example.com/', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]:9/'),
);

const createBody = createBodyOf({
  browser: fc.oneof(fc.nat().map((i) => pick(known.browsers, i, 'chromium')), fc.constantFrom('chromium', 'firefox-esr', 'chrome', 'Chrome', 'lynx')),
  url: validUrl,
});

/** A create that passes every check: it starts a session while the plan has room. */
const cleanCreateBody = fc.record({
  browser: fc.constant('chromium'),
  url: fc.constant('page').map(() => ctx.pages.page),
  language: maybe(fc.constantFrom('en', 'de', 'pt-BR')),
  shareLanguage: maybe(fc.constantFrom(...SHARE_LANGUAGES)),
  idempotencyKey: maybe(fc.string({ minLength: 1, maxLength: 8, unit: 'grapheme-ascii' })),
}).map((body) => Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)));

const vmIdValue = fc.oneof(
  { weight: 4, arbitrary: fc.nat().map((i) => pick(known.vmIds, i, '0'.repeat(32))) },
  { weight: 1, arbitrary: fc.constant('foreign').map(() => known.foreignVmId) },
  { weight: 1, arbitrary: fc.nat().map((i) => pick(known.vmIds, i, 'abcd').replace(/^(.{4}).*(.{4})$/, (_, a, b) => `${a}${'*'.repeat(24)}${b}`)) },
  { weight: 1, arbitrary: fc.stringMatching(/^[0-9a-f]{32}$/) },
  { weight: 2, arbitrary: junkString },
  { weight: 2, arbitrary: wrongType },
);
const removeBody = fc.oneof(vmIdValue.map((id) => ({ id })), fc.jsonValue({ maxDepth: 2 }));
const shortUrlBody = fc.oneof(field(validUrl).map((url) => ({ url })), fc.jsonValue({ maxDepth: 2 }));

/** How a path may be spelt besides its plain form. */
const spelling = fc.oneof(
  { weight: 12, arbitrary: fc.constant('plain') },
  { weight: 1, arbitrary: fc.constantFrom('dot', 'dotdot', 'query', 'fragment', 'absolute') },
  { weight: 1, arbitrary: fc.constantFrom('slash', 'encoded', 'upper', 'double') },
);
function spell(path: string, how: string, junk: string): string {
  const [pathname, query = ''] = path.split(/\?(.*)/s) as [string, string?];
  const q = query === '' ? '' : `?${query}`;
  switch (how) {
    case 'slash': return `${pathname}/${q}`;
    case 'dot': return `${pathname.replace(/\/([^/]*)$/, '/./$1')}${q}`;
    case 'dotdot': return `/junk/..${pathname}${q}`;
    case 'encoded': return `${pathname.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`)}${q}`;
    case 'upper': return `${pathname.toUpperCase()}${q}`;
    case 'double': return `/${path}`;
    case 'query': return `${pathname}?${junk}${q === '' ? '' : `&${query}`}`;
    case 'fragment': return `${path}#${junk}`;
    case 'absolute': return `http://engine.example${path}`;
    default: return path;
  }
}

const ROUTES = ['image', 'openapi.json', 'vm/create', 'vm/data', 'vm/remove', 'user/api', 'user/quota'] as const;
const METHOD_OF = new Map([['vm/create', 'POST'], ['vm/remove', 'POST']]);
const anyMethod = fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS');
const methodFor = (usual: string) => fc.oneof({ weight: 5, arbitrary: fc.constant(usual) }, { weight: 1, arbitrary: anyMethod });

interface Target {
  method: string;
  path: string;
  body?: Buffer;
}

const apiTarget: fc.Arbitrary<Target> = fc.tuple(
  fc.oneof({ weight: 12, arbitrary: fc.constantFrom('v8', 'v7') }, { weight: 1, arbitrary: fc.constantFrom('V8', 'v9', 'v8/v8', 'v6') }),
  fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...ROUTES, 'vm/create', 'vm/create', 'vm/remove', 'vm/data') }, { weight: 1, arbitrary: pathJunk }),
  fc.oneof(fc.constant(''), vmIdValue.map((id) => `?id=${encodeQuery(typeof id === 'string' ? id : JSON.stringify(id) ?? '')}`), fc.constant('?id=a&id=b'), fc.constant('?id[]=x'), pathJunk.map((j) => `?${j}`)),
).chain(([version, route, query]) => fc.record({
  method: methodFor(METHOD_OF.get(route) ?? 'GET'),
  path: fc.tuple(spelling, pathJunk).map(([how, junk]) => spell(`/${version}/${route}${route === 'vm/data' ? query : ''}`, how, junk)),
  body: route === 'vm/create' ? bodyBytes(fc.oneof({ weight: 4, arbitrary: createBody }, { weight: 1, arbitrary: cleanCreateBody })) : route === 'vm/remove' ? bodyBytes(removeBody) : maybe(bodyBytes(fc.jsonValue({ maxDepth: 2 }))),
}));

const keyInQuery = fc.oneof(
  fc.constant('v6').map(() => known.v6Key),
  fc.constant('v6').map(() => known.v6Key),
  fc.constant('revoked').map(() => known.revokedKey),
  fc.constant('viewer').map(() => known.viewerKey),
  fc.constant(''),
  junkString,
);
const launchQuery = fc.record({
  key: fc.oneof({ weight: 6, arbitrary: fc.nat().map((i) => pick(known.tokens, i, 'v6t_none')) }, { weight: 1, arbitrary: keyInQuery }, { weight: 1, arbitrary: fc.constant(undefined) }),
  browser: maybe(field(fc.constantFrom('Chrome', 'Chrome', 'Firefox', 'Edge', 'Tor', 'chrome', 'Lynx'))),
  url: maybe(field(validUrl)),
  language: maybe(field(fc.constantFrom('de', 'pt-BR', 'xx'))),
  layout: maybe(field(fc.constantFrom('de', 'zz'))),
  callbackUrl: maybe(field(fc.webUrl())),
}).map((params) => Object.entries(params).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${encodeQuery(typeof v === 'string' ? v : JSON.stringify(v) ?? '')}`).join('&'));

const v6Target: fc.Arbitrary<Target> = fc.oneof(
  fc.record({ method: methodFor('GET'), path: fc.tuple(keyInQuery, spelling, pathJunk).map(([key, how, junk]) => spell(`/api/v6/getKey?key=${encodeQuery(key)}`, how, junk)) }),
  fc.record({ method: methodFor('GET'), path: fc.tuple(launchQuery, spelling, pathJunk).map(([query, how, junk]) => spell(`/b?${query}`, how, junk)) }),
  fc.record({ method: methodFor('POST'), path: fc.tuple(spelling, pathJunk).map(([how, junk]) => spell('/api/v6/shortUrl', how, junk)), body: bodyBytes(shortUrlBody) }),
  fc.record({ method: anyMethod, path: pathJunk.map((junk) => `/api/v6/${junk}`), body: maybe(bodyBytes(fc.jsonValue({ maxDepth: 2 }))) }),
);

const linkId = fc.oneof(
  { weight: 3, arbitrary: fc.constant('live').map(() => known.liveLink) },
  { weight: 2, arbitrary: fc.nat().map((i) => pick(known.links, i, known.liveLink)) },
  { weight: 3, arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/) },
  { weight: 1, arbitrary: fc.constant('live').map(() => `${known.liveLink.slice(0, -1)}${known.liveLink.endsWith('A') ? 'B' : 'A'}`) },
  { weight: 1, arbitrary: pathJunk },
);

const shareTarget: fc.Arbitrary<Target> = fc.record({
  method: methodFor('GET'),
  path: fc.tuple(linkId, fc.constantFrom('', '', '/ping', '/events', '/rfb', '/junk', '/'), spelling, pathJunk).map(([id, suffix, how, junk]) => spell(`/share/${id}${suffix}`, how, junk)),
  body: maybe(bodyBytes(fc.jsonValue({ maxDepth: 1 }))),
});

// A tab action (protocol/tabs.ts) on the share API: `go` (an app window's address, issue 44) most,
// each field valid, junk or of the wrong type, the addresses a stranger would try (other schemes,
// the engine's own loopback); `open` and `close` rarely (a real browser runs the live link's session).
const tabActionBody = fc.record({
  action: field(fc.constantFrom('go', 'go', 'go', 'switch', 'open', 'close', 'jump')),
  tab: maybe(field(fc.oneof(fc.nat().map((i) => pick(known.tabIds, i, 'no-such-tab')), fc.stringMatching(/^[A-F0-9]{32}$/)))),
  url: maybe(field(fc.oneof(
    { weight: 4, arbitrary: fc.constant('page').map(() => ctx.pages.page) },
    { weight: 1, arbitrary: fc.webUrl() },
    { weight: 3, arbitrary: fc.constantFrom('javascript:alert(1)', 'file:///etc/passwd', 'data:text/html,<title>x</title>', 'about:blank', 'chrome://settings', 'view-source:http://a.example/', 'blob:http://a.example/x', 'http://127.0.0.1:1/', 'ftp://a.example/', `https://a.example/${'a'.repeat(2100)}`) },
  ))),
  extra: maybe(fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'tabs', 'x'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 })),
}).map(({ extra, ...fields }) => {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) body[name] = value;
  for (const [name, value] of Object.entries(extra ?? {})) Object.defineProperty(body, name, { value, enumerable: true, configurable: true, writable: true });
  return body;
});

// Mostly the live link with a well-formed body, so that the actions reach the browser's tabs.
const tabsTarget: fc.Arbitrary<Target> = fc.record({
  method: methodFor('POST'),
  path: fc.tuple(fc.oneof({ weight: 4, arbitrary: fc.constant('live').map(() => known.liveLink) }, { weight: 1, arbitrary: linkId }), spelling, pathJunk).map(([id, how, junk]) => spell(`/share/${id}/tabs`, how, junk)),
  body: fc.oneof(
    { weight: 4, arbitrary: tabActionBody.map((body) => Buffer.from(JSON.stringify(body), 'utf8')) },
    { weight: 1, arbitrary: maybe(bodyBytes(fc.oneof({ weight: 3, arbitrary: tabActionBody }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) }))) },
  ),
});

// Replay links (decisions.md 110): no token the fuzz makes is signed, so none opens a recording.
const replayToken = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,119}$/),
  fc.tuple(fc.stringMatching(/^[0-9a-f]{32}$/), fc.nat(), fc.stringMatching(/^[A-Za-z0-9_-]{43}$/)).map(([id, expires, signature]) => `${id}.${Date.now() + expires}.${signature}`),
  fc.constant('known').map(() => `${known.vmIds[0] ?? known.foreignVmId}.${Date.now() + 60_000}.${'A'.repeat(43)}`),
  pathJunk,
);

const replayTarget: fc.Arbitrary<Target> = fc.record({
  method: methodFor('GET'),
  path: fc.tuple(replayToken, fc.constantFrom('', '/recording', '/media', '/media', '/junk', '/'), spelling, pathJunk).map(([token, suffix, how, junk]) => spell(`/replay/${token}${suffix}`, how, junk)),
  body: maybe(bodyBytes(fc.jsonValue({ maxDepth: 1 }))),
});

const siteTarget: fc.Arbitrary<Target> = fc.record({
  method: methodFor('GET'),
  path: fc.oneof(
    fc.constant('/'),
    fc.tuple(fc.oneof(fc.constantFrom('', ...SHARE_LANGUAGES.map((l) => `${l}/`)), fc.stringMatching(/^[A-Za-z-]{1,10}\/$/)), linkId, fc.oneof(fc.constant(''), pathJunk.map((j) => `&${j}`))).map(([lang, id, rest]) => `/${lang}s?${id}${rest}`),
    fc.constantFrom('/s', '/s?', '/en/s?', '/favicon.ico', '/index.html', '/launch.html', '/assets/', '/assets/../../package.json', '/assets/%2e%2e/%2e%2e/package.json', '/assets/..%2f..%2fpackage.json'),
    pathJunk.map((junk) => `/assets/${junk}`),
  ),
});

const otherTarget: fc.Arbitrary<Target> = fc.record({
  method: anyMethod,
  path: fc.oneof(
    fc.constantFrom('/healthz', '/healthz', '/healthz/', '/HEALTHZ', '/healthz?x=1', '//', '///', '//v8/image', '//x:y@z/v8/image', '//[', '*', '/v8', '/v7/', '/api/v6', '/share', '/share/', '/nodes/x'),
    pathJunk.map((junk) => `/${junk}`),
  ),
  body: maybe(bodyBytes(fc.jsonValue({ maxDepth: 2 }))),
});

const authorization = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 10, arbitrary: fc.constantFrom('Bearer %s', 'Bearer %s', 'bearer %s', 'BEARER   %s  ', 'Bearer\t%s').map((form) => form.replace('%s', known.fuzzKey)) },
  { weight: 1, arbitrary: fc.constant('viewer').map(() => `Bearer ${known.viewerKey}`) },
  { weight: 1, arbitrary: fc.constant('revoked').map(() => `Bearer ${known.revokedKey}`) },
  { weight: 1, arbitrary: fc.constantFrom('Basic %s', '%s', 'Bearer %s extra', 'Bearer %sx', 'Bearer', 'Bearer ', 'Token %s').map((form) => form.replace('%s', known.fuzzKey)) },
  { weight: 2, arbitrary: headerValue },
  { weight: 1, arbitrary: headerValue.map((junk) => `Bearer ${junk}`) },
);

const browserHeaders = fc.oneof(
  { weight: 8, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.oneof(fc.constantFrom('https://evil.example', 'null', 'http://127.0.0.1', ''), headerValue).map((origin) => ({ origin })) },
  {
    weight: 2,
    arbitrary: fc.record({
      'sec-fetch-mode': fc.constantFrom('cors', 'navigate', 'no-cors', 'same-origin', 'websocket', 'CORS', 'Navigate'),
      'sec-fetch-site': maybe(fc.constantFrom('cross-site', 'same-origin', 'none')),
      'sec-fetch-dest': maybe(fc.constantFrom('empty', 'document')),
    }).map((h) => Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Record<string, string>),
  },
);

const headers = fc.record({
  authorization,
  'content-type': maybe(fc.oneof(fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16'), headerValue)),
  accept: maybe(fc.constantFrom('application/json', 'text/html', '*/*', 'text/event-stream')),
  'x-forwarded-for': maybe(fc.oneof(fc.ipV4(), fc.ipV6(), fc.tuple(fc.ipV4(), fc.ipV4()).map(([a, b]) => `${a}, ${b}`), headerValue)),
  browser: browserHeaders,
  extra: fc.dictionary(headerName, headerValue, { maxKeys: 3 }),
}).map(({ browser, extra, ...named }) => {
  const result: Record<string, string> = { ...extra, ...browser };
  for (const [name, value] of Object.entries(named)) if (value !== undefined) result[name] = value;
  return result;
});

const request: fc.Arbitrary<Exchange> = fc.tuple(
  fc.oneof({ weight: 12, arbitrary: apiTarget }, { weight: 5, arbitrary: v6Target }, { weight: 4, arbitrary: shareTarget }, { weight: 2, arbitrary: tabsTarget }, { weight: 2, arbitrary: replayTarget }, { weight: 3, arbitrary: siteTarget }, { weight: 1, arbitrary: otherTarget }),
  headers,
  fc.boolean(),
).map(([target, h, chunked]) => ({ ...target, headers: h, chunked: target.body !== undefined && target.body.length > 0 && chunked && target.method !== 'GET' && target.method !== 'HEAD' }));

// ---------------------------------------------------------------------------------------------
// What each answer must be (docs/decisions.md, docs/openapi.json, docs/viewer.md)

/** The request target as a server must read it: an origin-form path is a path, whatever it holds. */
function targetOf(path: string): URL | null {
  try {
    return path.startsWith('/') ? new URL(`http://engine${path}`) : new URL(path, 'http://engine');
  } catch {
    return null;
  }
}

/** decisions.md 20: what makes a request a web browser's. */
function isBrowser(h: Record<string, string>): boolean {
  if (h.origin !== undefined) return true;
  const mode = (h['sec-fetch-mode'] ?? '').toLowerCase();
  if (mode === 'navigate' || mode === 'no-cors') return true;
  return ['cors', 'navigate', 'no-cors'].includes(mode) && (h['sec-fetch-site'] !== undefined || h['sec-fetch-dest'] !== undefined);
}

/** Whose key the Authorization header carries, as decisions.md 17 reads it. */
function keyHolder(h: Record<string, string>): 'fuzz' | 'viewer' | 'none' {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(h.authorization ?? '');
  return match?.[1] === known.fuzzKey ? 'fuzz' : match?.[1] === known.viewerKey ? 'viewer' : 'none';
}

const SHARE_PATH = /^\/share\/([A-Za-z0-9_-]{1,64})(\/events|\/rfb|\/ping|\/tabs)?$/;
const SHARE_PAGE = /^\/(?:[A-Za-z-]{1,10}\/)?s$/;
const REPLAY_PATH = /^\/replay\/([A-Za-z0-9_.-]{1,200})(?:\/(recording|media))?$/;
const okSchemas = {
  v8: { 'POST vm/create': createResponseSchema, 'GET vm/data': vmDataResponseSchema, 'POST vm/remove': removeResponseSchema, 'GET user/api': userApiResponseSchema, 'GET user/quota': userQuotaResponseSchema },
  v7: { 'POST vm/create': v7CreateResponseSchema, 'GET vm/data': v7VmDataResponseSchema, 'POST vm/remove': removeResponseSchema, 'GET user/api': v7UserApiResponseSchema, 'GET user/quota': v7UserQuotaResponseSchema },
} as const;

function expectFailureEnvelope(answer: Answer, context: string): void {
  expect(failureSchema.safeParse(answer.json).success, `${context}: not the failure envelope`).toBe(true);
  // decisions.md 37: `error` only when no node can take a session, which this engine never is.
  expect(answer.json.status, `${context}: the engine says it failed`).not.toBe('error');
}

function judgeApi(req: Exchange, answer: Answer, version: 'v8' | 'v7', route: string, context: string): void {
  const head = req.method === 'HEAD';
  const known8 = ['GET image', 'GET openapi.json', ...Object.keys(okSchemas.v8)];
  if (!known8.includes(route)) {
    expect(answer.http, context).toBe(404);
    if (!head) expect(answer.json?.status, context).toBe('denied');
    return;
  }
  if (route === 'GET image' || route === 'GET openapi.json') {
    expect(answer.http, context).toBe(200);
    if (route === 'GET image') expect(imageListResponseSchema.safeParse(answer.json).success, context).toBe(true);
    else expect(typeof answer.json?.openapi, context).toBe('string');
    return;
  }
  const h = req.headers ?? {};
  if (isBrowser(h)) {
    expect(answer.http, context).toBe(403);
    expect(answer.json, context).toMatchObject({ status: 'insecure', reason: 'client_side_key' });
    return;
  }
  const holder = keyHolder(h);
  if (holder === 'none') {
    expect(answer.http, context).toBe(401);
    expect(answer.json?.status, context).toBe('denied');
    expectFailureEnvelope(answer, context);
    return;
  }
  if (answer.http === 429) {
    expect(answer.json, context).toMatchObject({ status: 'insecure', reason: 'rate_limited' });
    expect(answer.headers['retry-after'], context).toMatch(/^[1-9]\d*$/);
    return;
  }
  expect(answer.http, context).toBe(200);
  const status = answer.json?.status;
  const ok = okSchemas[version][route as keyof (typeof okSchemas)['v8']];
  if (status === 'ok') {
    const parsed = ok.safeParse(answer.json);
    expect(parsed.success, `${context}: not the ${version} ${route} answer: ${parsed.error?.message.slice(0, 300)}`).toBe(true);
  } else {
    expectFailureEnvelope(answer, context);
  }
  const programmatic = route === 'GET user/api' || route === 'GET user/quota';
  if (holder === 'viewer') {
    // decisions.md 18: the meters answer, everything else is `upgrade`.
    expect(status, context).toBe(programmatic ? 'ok' : 'upgrade');
    return;
  }
  const allowed: Record<string, string[]> = { 'POST vm/create': ['ok', 'denied', 'upgrade'], 'POST vm/remove': ['ok', 'denied'], 'GET vm/data': ['ok'], 'GET user/api': ['ok'], 'GET user/quota': ['ok'] };
  expect(allowed[route], `${context}: status ${status}`).toContain(status);
  if (status !== 'ok') return;
  if (route === 'POST vm/create') {
    known.vmIds.push(answer.json.vmId);
    if (answer.json.shareUrl) known.links.push(new URL(answer.json.shareUrl).search.slice(1));
    // The plan's one running slot is never exceeded, whatever arrived at the same time.
    expect(answer.json.quota.running_sessions_used, context).toBeLessThanOrEqual(FUZZ_PLAN.running_session_limit);
    expect(answer.json.quota.cycle_sessions_used, context).toBeLessThanOrEqual(FUZZ_PLAN.cycle_session_limit!);
  }
  if (route === 'GET vm/data') {
    const id = targetOf(req.path)!.searchParams.get('id');
    // decisions.md 3 and 4: another account's session is not shown; ids are masked.
    if (id === known.foreignVmId) expect(answer.json.data, context).toEqual([]);
    for (const entry of answer.json.data) expect(entry.id, context).toMatch(/^.{4}\*+.{4}$|^.{1,8}$/);
  }
  if (route === 'GET user/quota' || route === 'GET user/api') {
    expect(answer.json.running_sessions_used, context).toBeLessThanOrEqual(FUZZ_PLAN.running_session_limit);
  }
}

function judgeV6(req: Exchange, answer: Answer, url: URL, context: string): void {
  // decisions.md 35: every v6 answer says v6 is deprecated.
  expect(answer.headers.deprecation, context).toBe('@1795219200');
  expect(answer.headers.sunset, context).toMatch(/GMT$/);
  expect(answer.headers.link, context).toBe('</v8/openapi.json>; rel="successor-version"');
  const head = req.method === 'HEAD';
  const route = `${req.method} ${url.pathname}`;
  const v6Failure = () => {
    expect(v6FailureSchema.safeParse(answer.json).success, `${context}: not a v6 failure`).toBe(true);
    expect(typeof answer.json.detail, `${context}: a v6 failure says what is wrong in detail`).toBe('string');
  };
  if (!['GET /api/v6/getKey', 'GET /b', 'POST /api/v6/shortUrl'].includes(route)) {
    expect(answer.http, context).toBe(404);
    if (!head) expect(answer.json, context).toMatchObject({ success: false, message: 'srv-error' });
    return;
  }
  if (answer.http === 429) {
    expect(answer.json, context).toMatchObject({ success: false, message: 'srv-error' });
    expect(answer.headers['retry-after'], context).toMatch(/^[1-9]\d*$/);
    return;
  }
  if (answer.json?.success === true) {
    const schema = route === 'GET /api/v6/getKey' ? v6GetKeyResponseSchema : route === 'POST /api/v6/shortUrl' ? v6ShortUrlResponseSchema : undefined;
    if (schema) {
      expect(answer.http, context).toBe(200);
      expect(schema.safeParse(answer.json).success, context).toBe(true);
    }
  } else {
    v6Failure();
  }
  if (route === 'GET /api/v6/getKey') {
    const key = url.searchParams.get('key') ?? '';
    const h = req.headers ?? {};
    if (isBrowser(h)) return void expect([answer.http, answer.json.message], context).toEqual([403, 'auth-failed']);
    if (key !== known.v6Key && key !== known.viewerKey) return void expect([answer.http, answer.json.message], context).toEqual([401, 'auth-failed']);
    if (key === known.viewerKey) return void expect([answer.http, answer.json.message], context).toEqual([200, 'auth-failed']);
    expect([answer.http, answer.json.success], context).toEqual([200, true]);
    known.tokens.push(answer.json.token);
  } else if (route === 'GET /b') {
    if (answer.json.success === true) {
      // decisions.md 27: a launch answers 302 to its share link.
      expect(answer.http, context).toBe(302);
      expect(answer.headers.location, context).toBe(answer.json.shareUrl);
      known.links.push(new URL(answer.json.shareUrl).search.slice(1));
      return;
    }
    const byMessage: Record<string, number[]> = { 'auth-failed': [401], 'quota-exceeded': [200], 'srv-error': [400, 200] };
    expect(byMessage[answer.json.message], context).toContain(answer.http);
  } else {
    if (answer.json.success === true) return void known.shortUrls.push(answer.json.id);
    expect([answer.http, answer.json.message], context).toEqual([400, 'srv-error']);
  }
}

/** `/replay/<token>` and its API (decisions.md 110): nothing the fuzz sends opens a recording. */
function judgeReplay(req: Exchange, answer: Answer, match: RegExpExecArray, context: string): void {
  const api = match[2];
  if (!api) {
    if (req.method !== 'GET' && req.method !== 'HEAD') return void expect(answer.http, context).toBe(404);
    if (!SITE_BUILT) return void expect(answer.http, context).toBe(503);
    expect(answer.headers['content-type'], context).toMatch(/^text\/html/);
    expect(answer.headers['referrer-policy'], context).toBe('no-referrer');
    return void expect([404, 429], context).toContain(answer.http);
  }
  expect(answer.headers['access-control-allow-origin'], context).toBe('*');
  if (req.method === 'OPTIONS') return void expect(answer.http, context).toBe(204);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    expect(answer.http, context).toBe(405);
    return void expect(answer.json?.status, context).toBe('denied');
  }
  // HEAD is answered as GET, its headers without the body.
  if (answer.http === 429) {
    if (req.method === 'GET') expect(answer.json, context).toMatchObject({ status: 'insecure', reason: 'rate_limited' });
    return void expect(answer.headers['retry-after'], context).toMatch(/^[1-9]\d*$/);
  }
  expect(answer.http, context).toBe(404);
  if (req.method === 'GET') expect(answer.json, context).toMatchObject({ status: 'denied', reason: 'invalid' });
  else expect(answer.text, context).toBe('');
}

function judgeShare(req: Exchange, answer: Answer, match: RegExpExecArray, context: string): void {
  expect(answer.headers['access-control-allow-origin'], context).toBe('*');
  const [, id, suffix] = match;
  if (req.method === 'OPTIONS') {
    expect(answer.http, context).toBe(204);
    expect(answer.text, context).toBe('');
    return;
  }
  if (suffix === '/tabs') return judgeTabs(req, answer, id!, context);
  if (req.method !== 'GET' || suffix === '/rfb') {
    expect(answer.http, context).toBe(405);
    if (req.method !== 'HEAD') expect(answer.json?.status, context).toBe('denied');
    return;
  }
  // decisions.md 41: a valid link always answers, even from an address that guessed too much.
  if (id === known.liveLink) expect(answer.http, context).toBe(200);
  if (answer.http === 429) {
    expect(answer.json, context).toMatchObject({ status: 'insecure', reason: 'rate_limited' });
    expect(answer.headers['retry-after'], context).toMatch(/^[1-9]\d*$/);
    return;
  }
  if (answer.http === 404) return void expectFailureEnvelope(answer, context);
  expect(answer.http, context).toBe(200);
  if (suffix === '/events') {
    expect(answer.streamed, context).toBe(true);
    const first = /^event: state\ndata: (.*)\n\n/.exec(answer.text);
    expect(first, context).not.toBeNull();
    expect(viewerStateSchema.safeParse(JSON.parse(first![1]!)).success, context).toBe(true);
  } else if (suffix === '/ping') {
    expect(answer.json, context).toEqual({ status: 'ok' });
  } else {
    expect(answer.json?.status, context).toBe('ok');
    expect(viewerStateSchema.safeParse(answer.json).success, context).toBe(true);
    if (id === known.liveLink) rememberTabs(answer.json.tabs);
  }
}

function rememberTabs(tabs: unknown): void {
  if (!Array.isArray(tabs)) return;
  for (const tab of tabs) if (isShareTab(tab) && !known.tabIds.includes(tab.id)) known.tabIds.push(tab.id);
}

/**
 * A tab action (protocol/tabs.ts, `go` among them): POST only; a live link's answer is the tabs
 * (each one a tab) or a refusal in the envelope with a documented status, never a browser left on
 * an address that is not http or https.
 */
function judgeTabs(req: Exchange, answer: Answer, id: string, context: string): void {
  if (req.method === 'OPTIONS') {
    expect(answer.http, context).toBe(204);
    return;
  }
  if (req.method !== 'POST') {
    expect(answer.http, context).toBe(405);
    if (req.method !== 'HEAD') expect(answer.json?.status, context).toBe('denied');
    return;
  }
  if (answer.http === 429) {
    expect(answer.json, context).toMatchObject({ status: 'insecure', reason: 'rate_limited' });
    return;
  }
  // How deep each action got: the tally names the answer's first words.
  let sent: unknown;
  try {
    sent = (JSON.parse(req.body?.toString('utf8') ?? '') as { action?: unknown }).action;
  } catch {
    sent = undefined;
  }
  outcomes.add(`  tab action ${typeof sent === 'string' ? sent.slice(0, 10) : '?'} (${typeof answer.json?.message === 'string' ? answer.json.message.split(/[:;(]/)[0]!.slice(0, 60) : answer.json?.status}) -> ${answer.http}`);
  // The live link is valid: a 404 is a tab the browser does not have, never the link.
  if (id === known.liveLink && answer.http === 404) expect(answer.json?.message, context).not.toMatch(/share link is not valid/);
  if (answer.http === 200) {
    expect(answer.json?.status, context).toBe('ok');
    expect(Array.isArray(answer.json.tabs) && answer.json.tabs.every(isShareTab), context).toBe(true);
    for (const tab of answer.json.tabs) expect(/^(https?:|about:blank$|chrome-error:)/.test(tab.url) || tab.url === '', `${context}: a tab at ${tab.url}`).toBe(true);
    rememberTabs(answer.json.tabs);
    return;
  }
  expect([400, 403, 404, 409, 502, 503], context).toContain(answer.http);
  expect(answer.json?.status, context).toBe(answer.http >= 500 ? 'error' : 'denied');
  expect(typeof answer.json?.message, context).toBe('string');
}

/** The page of a share link or the launch page (decisions.md 8, 9); false when the path is none of the site's. */
function judgeSite(req: Exchange, answer: Answer, url: URL, context: string): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const share = SHARE_PAGE.test(url.pathname);
  if (share || url.pathname === '/') {
    if (!SITE_BUILT) return void expect(answer.http, context).toBe(503), true;
    expect(answer.headers['content-type'], context).toMatch(/^text\/html/);
    expect(answer.headers['content-security-policy'], context).toContain("default-src 'self'");
    if (!share) return void expect(answer.http, context).toBe(200), true;
    const id = url.search.slice(1).split('&')[0];
    if (id === known.liveLink) expect(answer.http, context).toBe(200);
    else if (!/^[A-Za-z0-9_-]{1,64}$/.test(id ?? '')) expect(answer.http, context).toBe(404);
    else expect([200, 404, 410, 429], context).toContain(answer.http);
    return true;
  }
  if (url.pathname === '/favicon.ico') return void expect(answer.http, context).toBe(204), true;
  if (url.pathname.startsWith('/assets/') && answer.http === 200 && !answer.json) return true;
  return false;
}

/** Every property of one answer; the context names the request, so a failure shows it whole. */
function judge(req: Exchange, answer: Answer): void {
  const context = `${describeExchange(req)}\n  -> ${describeAnswer(answer)}`;
  expect(ctx.engine.alive(), `${context}: the engine died`).toBe(true);
  expect(answer.http, `${context}: a server error`).toBeLessThan(500);
  if (answer.http === 431) return void expect(headSize(req), `${context}: 431 for a short request head`).toBeGreaterThan(15_000);
  const url = targetOf(req.path);
  const asset = url?.pathname.startsWith('/assets/') && answer.http === 200;
  expectSecurityHeaders(answer, context, { cacheable: asset === true });
  expectNothingLeaked(answer, context, [known.fuzzKey, known.v6Key, known.viewerKey, known.revokedKey, ctx.engine.workspace.dataDir]);
  const isJson = String(answer.headers['content-type'] ?? '').startsWith('application/json');
  if (req.method !== 'HEAD' && isJson) expectJson(answer, context);
  if (req.method !== 'HEAD' && answer.http !== 204 && answer.http !== 302 && !answer.streamed && !isJson && !String(answer.headers['content-type']).startsWith('text/html')) {
    expect(asset, `${context}: neither JSON, a page nor an asset`).toBe(true);
  }
  if (!url) {
    expect(answer.http, context).toBe(404);
    return;
  }
  const path = url.pathname;
  const api = /^\/(v8|v7)\/(.+)$/.exec(path);
  const share = SHARE_PATH.exec(path);
  const replay = REPLAY_PATH.exec(path);
  const envelope = answer.json?.status ?? (answer.json?.success === true ? 'success' : answer.json?.message) ?? String(answer.headers['content-type'] ?? '').split(';')[0];
  const v6Route = ['/b', '/api/v6/getKey', '/api/v6/shortUrl'].includes(path) ? path : '/api/v6/<other>';
  const apiRoute = api && (ROUTES as readonly string[]).includes(api[2]!) ? `${req.method} /${api[1]}/${api[2]}` : `/${api?.[1]}/<other>`;
  const site = SHARE_PAGE.test(path) ? 'share page' : path === '/' ? 'launch page' : path.startsWith('/assets/') ? 'assets' : path;
  const family = path === '/b' || path.startsWith('/api/v6/') ? v6Route : api ? apiRoute : share ? `${req.method === 'GET' ? '' : 'not GET '}/share/<id>${share[2] ?? ''}` : replay ? `${req.method === 'GET' || (req.method === 'HEAD' && replay[2]) ? '' : 'not GET '}/replay/<token>${replay[2] ? `/${replay[2]}` : ''}` : ['share page', 'launch page', 'assets', '/healthz', '/favicon.ico'].includes(site) ? site : 'other paths';
  outcomes.add(`${family} -> ${answer.http} ${envelope}`);
  if (path === '/b' || path.startsWith('/api/v6/')) return judgeV6(req, answer, url, context);
  if (api) return judgeApi(req, answer, api[1] as 'v8' | 'v7', `${req.method} ${api[2]}`, context);
  if (share) return judgeShare(req, answer, share, context);
  if (replay) return judgeReplay(req, answer, replay, context);
  if (judgeSite(req, answer, url, context)) return;
  // A load balancer's probe may be GET or HEAD (decisions.md 60).
  if ((req.method === 'GET' || req.method === 'HEAD') && path === '/healthz') {
    expect(answer.http, context).toBe(200);
    if (req.method === 'GET') expect(answer.json, context).toMatchObject({ status: 'ok', node: expect.any(String), sessions: expect.any(Number) });
    return;
  }
  // Anything else: 404 in the envelope.
  expect(answer.http, context).toBe(404);
  if (req.method !== 'HEAD') expect(answer.json?.status, context).toBe('denied');
}

// ---------------------------------------------------------------------------------------------
// Properties

describe('the HTTP interface under fuzzed requests', () => {
  it('answers every request, alone or several at once, with a documented status in its envelope', async () => {
    await fuzz('http-api: requests', 1, fc.array(request, { minLength: 1, maxLength: 4 }), runs(3000), async (batch) => {
      const answers = await Promise.all(batch.map(async (req) => {
        tally.add('HTTP requests');
        try {
          return await exchange(ctx.engine.url, req);
        } catch (error) {
          if (headSize(req) > 15_000 && ctx.engine.alive()) return undefined;
          throw new Error(`${describeExchange(req)}: no answer (${(error as Error).message}); engine alive: ${ctx.engine.alive()}\n${ctx.engine.output().slice(-2000)}`);
        }
      }));
      batch.forEach((req, index) => {
        const answer = answers[index];
        if (answer) judge(req, answer);
        else tally.add('(of which: request heads over 16 KiB, reset by the HTTP parser)');
      });
    });
  }, 120_000);

  it('survives malformed HTTP on a raw socket: an answer with a 4xx status, or the connection closed', async () => {
    const junkRequest = fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
      fc.tuple(fc.constantFrom('GET', 'FOO', 'get', 'G\u00e9T', 'POST', 'CONNECT', 'PRI'), fc.uint8Array({ maxLength: 40 }), fc.constantFrom('HTTP/1.1', 'HTTP/9.9', 'HTTP/1.1 extra', '', 'http/1.1'), fc.array(fc.tuple(fc.string({ maxLength: 10 }), fc.uint8Array({ maxLength: 20 })), { maxLength: 4 }))
        .map(([method, target, version, lines]) => Buffer.concat([
          Buffer.from(`${method} /`), Buffer.from(target), Buffer.from(` ${version}\r\nHost: engine\r\n`),
          ...lines.map(([name, value]) => Buffer.concat([Buffer.from(`${name}: `), Buffer.from(value), Buffer.from('\r\n')])),
          Buffer.from('\r\n'),
        ])),
      fc.constantFrom(
        'GET /v8/image HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
        'POST /v8/vm/create HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n',
        'POST /v8/vm/create HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
        'GET /v8/image HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n',
        'GET /v8/image HTTP/1.1\r\n Folded: header\r\n\r\n',
        'GET /\u00ff HTTP/1.1\r\nHost: a\r\n\r\n',
        `GET /${'a'.repeat(100_000)} HTTP/1.1\r\nHost: a\r\n\r\n`,
        `GET / HTTP/1.1\r\nHost: a\r\nX: ${'b'.repeat(100_000)}\r\n\r\n`,
      ).map((text) => Buffer.from(text, 'latin1')),
    );
    await fuzz('http-api: raw sockets', 2, junkRequest, runs(150), async (bytes) => {
      tally.add('raw socket requests');
      const reply = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(ctx.engine.url).port), '127.0.0.1');
        let text = '';
        const timer = setTimeout(() => {
          socket.destroy();
          reject(new Error('the engine neither answered nor closed the connection within 10 s'));
        }, 10_000);
        socket.on('data', (chunk) => (text += chunk.toString('latin1')));
        socket.on('error', () => undefined);
        socket.on('close', () => {
          clearTimeout(timer);
          resolve(text);
        });
        socket.end(bytes);
      });
      const context = `${JSON.stringify(bytes.subarray(0, 200).toString('latin1'))} -> ${JSON.stringify(reply.slice(0, 300))}`;
      expect(ctx.engine.alive(), context).toBe(true);
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(reply)?.[1];
      if (status) expect(Number(status), context).toBeLessThan(500);
    });
    // Still serving.
    expect((await ctx.anon.image()).json?.status).toBe('ok');
  }, 120_000);
});

describe('the store after the fuzzing', () => {
  /** Polls the account's list until no start or stop is under way (each takes seconds at most). */
  async function settledList(api: Api): Promise<{ status: string; created: string }[]> {
    for (let i = 0; i < 100; i++) {
      const list = (await api.data()).json;
      if (!list.data.some((s: { status: string }) => s.status === 'starting' || s.status === 'stopping')) return list.data;
      await sleep(200);
    }
    throw new Error('sessions still starting or stopping after 20 s');
  }

  it.each([
    ['fuzzed through v8 and v7', () => known.fuzzApi, () => known.fuzzKey],
    ['fuzzed through v6', () => known.v6Api, () => known.v6Key],
  ])("keeps the meters of the account %s equal to a recount of its sessions", async (name, apiOf, keyOf) => {
    const api = apiOf();
    const sessions = await settledList(api);
    const quota = (await api.quota()).json;
    expect(userQuotaResponseSchema.safeParse(quota).success, JSON.stringify(quota)).toBe(true);
    expect(await settledList(api), 'the list changed while the meters were read').toEqual(sessions);

    // decisions.md 2: starting and running sessions are running; 11: totals are the pools' sums;
    // 1 and 13: every session created in the cycle counts, but one that failed to start (`error`).
    const start = Date.parse(`${quota.cycle_start}T00:00:00Z`);
    const end = Date.parse(`${quota.cycle_end}T00:00:00Z`);
    const running = sessions.filter((s) => s.status === 'starting' || s.status === 'running').length;
    const cycle = sessions.filter((s) => s.status !== 'error' && Date.parse(s.created) >= start && Date.parse(s.created) < end).length;
    console.log(`[fuzz] the account ${name}: ${sessions.length} sessions (${sessions.map((s) => s.status).join(', ') || 'none'}); meters: running ${quota.running_sessions_used}, cycle ${quota.cycle_sessions_used}`);
    expect({ running: quota.running_sessions_used, cycle: quota.cycle_sessions_used }).toEqual({ running, cycle });
    expect(quota.running_sessions_remaining).toBe(FUZZ_PLAN.running_session_limit - running);
    expect(quota.cycle_sessions_remaining).toBe(FUZZ_PLAN.cycle_session_limit! - cycle);
    expect(quota.pools).toHaveLength(1);
    expect(quota.pools[0]).toMatchObject({ running_sessions_used: running, cycle_sessions_used: cycle });
    // The same meters under v7's and v6's names.
    const v7 = (await api.get('/v7/user/quota')).json;
    expect([v7.concurrency_used, v7.credits_used]).toEqual([running, cycle]);
    const v6 = await exchange(ctx.engine.url, { method: 'GET', path: `/api/v6/getKey?key=${encodeURIComponent(keyOf())}` });
    expect(v6.json.count).toBe(cycle);
    tally.add('meter checks (requests)', 5);
  }, 60_000);

  it('leaves the account without programmatic access without sessions', async () => {
    const viewer = (await new Api(ctx.engine.url, known.viewerKey).quota()).json;
    expect([viewer.running_sessions_used, viewer.cycle_sessions_used]).toEqual([0, 0]);
    tally.add('meter checks (requests)');
  });
});
