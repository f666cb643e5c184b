// The deprecated v6 interface, kept so that older callers keep working (service-interface.md,
// Versioning, v6): getKey turns the organization's API key into a two-hour session key; the
// client's browser opens /b with that key, which ends the client's earlier session, starts a new
// one and sends the browser on to its share link, where the viewer shows the start's progress and
// then the session; shortUrl keeps a long first address for an hour under a `url_` id.
// Answers carry `success` instead of `status`. A failure's `message` is one of the three v6
// messages (auth-failed, quota-exceeded, srv-error), and `detail` says what is wrong and what to do.
// Every answer carries the Deprecation, Sunset and successor Link headers (decisions.md 35).
import { randomBytes } from 'node:crypto';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import {
  CALLBACK_URL_MAX,
  V6_DEPRECATED_ON,
  V6_SHORT_URL_ID_DIGITS,
  V6_SUCCESSOR_PATH,
  V6_TOKEN_TTL_HOURS,
  isShareLanguage,
  isWebAddress,
  parseRequest,
  v6LaunchQuerySchema,
  v6ShortUrlRequestSchema,
  type V6Browser,
  type V6LaunchQuery,
  type V6ErrorMessage,
} from '../../protocol/index.js';
import type { AccountUsage } from '../accounts/usage.js';
import { hashSecret, type Accounts } from '../accounts/accounts.js';
import type { EngineConfig } from '../config.js';
import type { EngineRuntime } from '../sessions/node-runtime.js';
import type { CreateTerms } from '../sessions/outcomes.js';
import type { SessionService } from '../sessions/service.js';
import type { AccountRow, Store } from '../store/store.js';
import { V6Store } from '../store/v6-store.js';
import type { LimitSettings } from './limits.js';
import { isBrowserRequest, takePoint, type ApiAnswer, type ApiRequest } from './calls.js';
import { refusalMessage } from './outcomes.js';

/** v6 launches under v8's terms: its idempotency records, if it had any, would be v8's. */
const V6_TERMS: CreateTerms = { idempotencyScope: 'v8', exitUnavailable: 'refuse', linkLanguageByDefault: 'en', windowByDefault: 'browser' };

const TOKEN_PREFIX = 'v6t_';

export interface V6Options {
  config: EngineConfig;
  store: Store;
  limiter: (settings: LimitSettings) => RateLimiterAbstract;
  /** The API keys' limiter of v8 and v7, keyed by the key's hash: a session key spends its API key's budget. */
  keyLimiter: RateLimiterAbstract;
  /** Counts a request a limit turned away (the metrics). */
  onRateLimited?: (limit: 'api_key' | 'v6_client') => void;
  accounts: Accounts;
  usage: AccountUsage;
  sessions: SessionService;
  runtime: Pick<EngineRuntime, 'images'>;
  now: () => number;
}

const success = (body: Record<string, unknown>, status = 200, headers?: Record<string, string>): ApiAnswer => ({ status, body: { success: true, ...body }, ...(headers ? { headers } : {}) });

const failure = (message: V6ErrorMessage, detail: string, status = 200, extra: Record<string, unknown> = {}, headers?: Record<string, string>): ApiAnswer => ({
  status,
  body: { success: false, message, ...extra, detail },
  ...(headers ? { headers } : {}),
});

const midnightUtc = (day: string) => new Date(`${day}T00:00:00Z`);

/**
 * The headers that say v6 is deprecated: `Deprecation` (RFC 9745: a structured-field date, `@`
 * and Unix seconds), `Sunset` (RFC 8594: an HTTP date, from 00:00 UTC of the operator's day) and
 * the current interface's description as `successor-version`, relative to the request's address.
 */
export function v6DeprecationHeaders(sunset: string): Record<string, string> {
  return {
    deprecation: `@${midnightUtc(V6_DEPRECATED_ON).getTime() / 1000}`,
    sunset: midnightUtc(sunset).toUTCString(),
    link: `<${V6_SUCCESSOR_PATH}>; rel="successor-version"`,
  };
}

/** The v6 paths: `/api/v6/...` and `/b`. */
export function isV6Path(pathname: string): boolean {
  return pathname === '/b' || pathname.startsWith('/api/v6/');
}

export function createV6Api(options: V6Options): (request: ApiRequest) => Promise<ApiAnswer> {
  const { config, store, accounts, usage, sessions, runtime, now } = options;
  const v6Store = new V6Store(store);
  // Requests without a key (short URLs) have a budget per client address.
  const clientLimiter = options.limiter({ points: config.rateLimit.requests, duration: config.rateLimit.perSeconds, keyPrefix: 'v6-client' });

  /** One point from a budget: null when the request may go on, else the 429 answer. */
  const admitOn = async (limiter: RateLimiterAbstract, key: string): Promise<ApiAnswer | null> => {
    const wait = await takePoint(limiter, key);
    if (wait !== null) options.onRateLimited?.(limiter === clientLimiter ? 'v6_client' : 'api_key');
    return wait === null ? null : failure('srv-error', `too many requests; retry after ${wait} s`, 429, {}, { 'retry-after': String(wait) });
  };

  /** The quota fields v6 shows: the account's cycle sessions (`null` = no cap). */
  const meters = async (account: AccountRow) => {
    const { meters: m } = await usage.usage(account);
    return { quota: m.cycle_session_limit, count: m.cycle_sessions_used, remaining: m.cycle_sessions_remaining };
  };

  /** The enabled image for a v6 browser name: the vendor's own build first (Chrome before Chromium). */
  const imageFor = (browser: V6Browser) => {
    const candidates = runtime.images.filter((image) => image.v6Name === browser && image.enabled);
    return candidates.find((image) => image.id === browser.toLowerCase()) ?? candidates[0];
  };

  const getKey = async (request: ApiRequest): Promise<ApiAnswer> => {
    // The browser-origin check of the v8 interface (decisions.md 20).
    if (isBrowserRequest(request.headers)) {
      return failure('auth-failed', 'this request came from a web browser: call getKey from your server, so that the API key stays there, and give the browser only the token', 403);
    }
    const key = request.url.searchParams.get('key') ?? '';
    if (key === '') return failure('auth-failed', 'key: required; send the organization API key as ?key=', 401);
    const keyHash = hashSecret(key);
    const account = await accounts.authenticateHash(key, keyHash);
    if (!account) return failure('auth-failed', 'invalid or revoked API key', 401);
    const limited = await admitOn(options.keyLimiter, keyHash);
    if (limited) return limited;
    if (!(await usage.hasProgrammaticAccess(account))) return failure('auth-failed', 'your plan does not include programmatic access to the API');
    const keyRow = (await store.keyByHash(keyHash))!;
    const token = `${TOKEN_PREFIX}${randomBytes(24).toString('base64url')}`;
    const issued = now();
    await v6Store.insertToken(hashSecret(token), keyRow.id, issued, issued + V6_TOKEN_TTL_HOURS * 3_600_000);
    return success({ token, ...(await meters(account)) });
  };

  // Launches with one session key run one after another: two at once would both end the same
  // earlier session and leave the client with two.
  const launching = new Map<string, Promise<unknown>>();
  const oneAtATime = <T>(tokenHash: string, work: () => Promise<T>): Promise<T> => {
    const run = (launching.get(tokenHash) ?? Promise.resolve()).then(work, work);
    const settled = run.catch(() => undefined);
    launching.set(tokenHash, settled);
    void settled.then(() => {
      if (launching.get(tokenHash) === settled) launching.delete(tokenHash);
    });
    return run;
  };

  const launch = async (request: ApiRequest): Promise<ApiAnswer> => {
    const params = Object.fromEntries(
      ['key', 'browser', 'url', 'language', 'layout', 'callbackUrl'].flatMap((name) => {
        const value = request.url.searchParams.get(name);
        return value === null ? [] : [[name, value]];
      }),
    );
    const parsed = parseRequest(v6LaunchQuerySchema, params);
    if (!parsed.ok) return failure('srv-error', parsed.message, 400);
    const query = parsed.value;
    const tokenHash = hashSecret(query.key);
    return oneAtATime(tokenHash, () => launchFor(query, tokenHash, request));
  };

  const launchFor = async (query: V6LaunchQuery, tokenHash: string, request: ApiRequest): Promise<ApiAnswer> => {
    const client = await v6Store.accountByToken(tokenHash, now());
    if (!client) return failure('auth-failed', 'unknown or expired session key; get a new one from GET /api/v6/getKey (keys last 2 hours)', 401);
    const limited = await admitOn(options.keyLimiter, client.key_hash);
    if (limited) return limited;
    const image = imageFor(query.browser);
    if (!image) {
      const offered = [...new Set(runtime.images.filter((i) => i.enabled).map((i) => i.v6Name))].join(', ');
      return failure('srv-error', `browser: ${query.browser} cannot start on this service; choose one of ${offered}`, 400);
    }
    const { session_id: earlier, key_hash: _keyHash, ...account } = client;
    // Without a callbackUrl, leaving goes back to the application that linked to /b (its Referer).
    const referrer = request.headers.referer;
    const callbackUrl = query.callbackUrl
      ?? (typeof referrer === 'string' && referrer.length <= CALLBACK_URL_MAX && isWebAddress(referrer) ? referrer : undefined);
    // One session per client: the one this key launched before ends first (its slot frees up).
    if (earlier) await sessions.remove(account, earlier);
    const primary = (query.language ?? '').split('-')[0]!;
    const outcome = await sessions.create(account, {
      browser: image.id,
      ...(query.url !== undefined ? { url: query.url } : {}),
      ...(query.language !== undefined ? { language: query.language } : {}),
      ...(query.layout !== undefined ? { layout: query.layout } : {}),
      ...(callbackUrl !== undefined ? { callbackUrl } : {}),
      ...(isShareLanguage(primary) ? { shareLanguage: primary } : {}),
    }, V6_TERMS);
    // `detail` is the sentence v8 would give (decisions.md 29).
    if (outcome.status === 'upgrade') return failure('quota-exceeded', refusalMessage(outcome, 'v8'), 200, await meters(account));
    if (outcome.status !== 'ok') return failure('srv-error', refusalMessage(outcome, 'v8'), outcome.status === 'denied' ? 400 : 200);
    await v6Store.setTokenSession(tokenHash, outcome.sessionId);
    const { shareUrl } = outcome.shareLink;
    return success({ shareUrl }, 302, { location: shareUrl });
  };

  const shortUrl = async (request: ApiRequest): Promise<ApiAnswer> => {
    const limited = await admitOn(clientLimiter, request.client ?? 'unknown');
    if (limited) return limited;
    const body = await request.body();
    if (!body.ok) return failure('srv-error', body.message, 400);
    const parsed = parseRequest(v6ShortUrlRequestSchema, body.value);
    if (!parsed.ok) return failure('srv-error', parsed.message, 400);
    for (let attempt = 0; attempt < 5; attempt++) {
      const id = `url_${String(randomBytes(8).readBigUInt64BE() % 10n ** BigInt(V6_SHORT_URL_ID_DIGITS)).padStart(V6_SHORT_URL_ID_DIGITS, '0')}`;
      if (await v6Store.insertShortUrl(id, parsed.value.url, now())) return success({ id });
    }
    return failure('srv-error', 'no free short-URL id; try again');
  };

  // v6's three calls, a table by method and path like the current versions' (routes.ts).
  const routes = new Map<string, (request: ApiRequest) => Promise<ApiAnswer>>([
    ['GET /api/v6/getKey', getKey],
    ['GET /b', launch],
    ['POST /api/v6/shortUrl', shortUrl],
  ]);
  const route = async (request: ApiRequest): Promise<ApiAnswer> => {
    const path = request.url.pathname;
    const answer = routes.get(`${request.method} ${path}`);
    if (answer) return answer(request);
    return failure('srv-error', `no endpoint ${request.method} ${path.slice(0, 100)}; v6 has GET /api/v6/getKey, GET /b and POST /api/v6/shortUrl`, 404);
  };

  const deprecation = v6DeprecationHeaders(config.v6.sunset);
  return async (request) => {
    const reply = await route(request);
    return { ...reply, headers: { ...reply.headers, ...deprecation } };
  };
}
