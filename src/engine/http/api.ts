// The HTTP interface (v8 current, v7 for older callers) over the session service: image list,
// authentication, browser-origin refusal, per-key rate limits, and each endpoint's envelope.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { parseCreateRequest, parseRemoveRequest, type ImageListResponse } from '../../protocol/index.js';
import type { Accounts } from '../accounts/accounts.js';
import { hashSecret } from '../accounts/accounts.js';
import type { EngineConfig } from '../config.js';
import type { SessionRuntime } from '../runtime/runtime.js';
import type { AccountRow } from '../store/sqlite-store.js';
import type { ApiVersion, SessionService } from '../sessions/service.js';
import { readJsonBody } from './body.js';
import { sendJson } from './respond.js';

export interface ApiOptions {
  config: EngineConfig;
  accounts: Accounts;
  sessions: SessionService;
  runtime: SessionRuntime;
  openapi: () => unknown;
}

const BROWSER_FETCH_MODES = new Set(['cors', 'navigate', 'no-cors']);

/**
 * Whether a web browser made the request (decisions.md 20). Browsers send Origin on cross-origin
 * and POST requests and the Sec-Fetch-* headers together. Node's own fetch (undici) always sends
 * `Sec-Fetch-Mode: cors` alone, and customers' servers use it: that header alone is not a browser.
 */
export function isBrowserRequest(headers: IncomingMessage['headers']): boolean {
  if (headers.origin !== undefined) return true;
  const mode = String(headers['sec-fetch-mode'] ?? '').toLowerCase();
  if (mode === 'navigate' || mode === 'no-cors') return true;
  return BROWSER_FETCH_MODES.has(mode) && (headers['sec-fetch-site'] !== undefined || headers['sec-fetch-dest'] !== undefined);
}

export function createApi(options: ApiOptions): (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<boolean> {
  const { config, accounts, sessions, runtime } = options;
  const limiter = new RateLimiterMemory({ points: config.rateLimit.requests, duration: config.rateLimit.perSeconds });

  const imageList = (): ImageListResponse => ({
    status: 'ok',
    images: runtime.images.map((image) => ({ id: image.id, name: image.name, enabled: image.enabled })),
    vpnLocations: config.locations.map((location) => ({
      code: location.code,
      name: location.name,
      default: location.default,
      cities: location.cities.map((city) => ({ code: city.code, location: city.location })),
    })),
    residential: { configured: config.residential.upstream !== null, countries: config.residential.countries },
  });

  /** Authentication, browser-origin refusal and the rate limit; null when an answer was sent. */
  const authenticate = async (request: IncomingMessage, response: ServerResponse): Promise<AccountRow | null> => {
    if (isBrowserRequest(request.headers)) {
      sendJson(response, {
        status: 'insecure',
        reason: 'client_side_key',
        message: 'this request came from a web browser: the API key must stay on your server; call the service from your backend (for example through the remote-browser-kit proxy route)',
      }, 403);
      return null;
    }
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      sendJson(response, { status: 'denied', message: 'missing API key: send the header "Authorization: Bearer <API key>"' }, 401);
      return null;
    }
    const keyHash = hashSecret(match[1]!);
    const account = accounts.authenticateHash(match[1]!, keyHash);
    if (!account) {
      sendJson(response, { status: 'denied', message: 'invalid or revoked API key' }, 401);
      return null;
    }
    try {
      await limiter.consume(keyHash);
    } catch (rejection) {
      const wait = rejection instanceof RateLimiterRes ? Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) : 1;
      sendJson(response, { status: 'insecure', reason: 'rate_limited', message: `too many requests for this API key; retry after ${wait} s` }, 429, { 'retry-after': String(wait) });
      return null;
    }
    return account;
  };

  const needsProgrammatic = (account: AccountRow, response: ServerResponse): boolean => {
    if (sessions.hasProgrammaticAccess(account)) return false;
    sendJson(response, { status: 'upgrade', message: 'your plan does not include programmatic access to the API' });
    return true;
  };

  return async (request, response, url) => {
    const match = /^\/(v8|v7)\/(.+)$/.exec(url.pathname);
    if (!match) return false;
    const version = match[1] as ApiVersion;
    const route = `${request.method} ${match[2]}`;
    switch (route) {
      case 'GET image':
        sendJson(response, imageList());
        return true;
      case 'GET openapi.json':
        sendJson(response, options.openapi());
        return true;
      case 'POST vm/create': {
        const account = await authenticate(request, response);
        if (!account || needsProgrammatic(account, response)) return true;
        const body = await readJsonBody(request);
        if (!body.ok) return sendJson(response, { status: 'denied', message: body.message }), true;
        const parsed = parseCreateRequest(body.value);
        if (!parsed.ok) return sendJson(response, { status: 'denied', message: parsed.message }), true;
        sendJson(response, sessions.create(account, parsed.value, version));
        return true;
      }
      case 'GET vm/data': {
        const account = await authenticate(request, response);
        if (!account || needsProgrammatic(account, response)) return true;
        const id = url.searchParams.get('id');
        sendJson(response, sessions.list(account, id === null || id === '' ? undefined : id, version));
        return true;
      }
      case 'POST vm/remove': {
        const account = await authenticate(request, response);
        if (!account || needsProgrammatic(account, response)) return true;
        const body = await readJsonBody(request);
        if (!body.ok) return sendJson(response, { status: 'denied', message: body.message }), true;
        const parsed = parseRemoveRequest(body.value);
        if (!parsed.ok) return sendJson(response, { status: 'denied', message: parsed.message }), true;
        sendJson(response, await sessions.remove(account, parsed.value.id));
        return true;
      }
      case 'GET user/api':
      case 'GET user/quota': {
        const account = await authenticate(request, response);
        if (!account) return true;
        const usage = sessions.usage(account);
        const head = route === 'GET user/api'
          ? { status: 'ok', contact: account.contact, feature_programmatic_access: sessions.hasProgrammaticAccess(account) }
          : { status: 'ok' };
        sendJson(response, { ...head, has_plan: usage.has_plan, ...usage.meters, pools: usage.pools });
        return true;
      }
      default:
        sendJson(response, { status: 'denied', message: `no endpoint ${request.method} /${version}/${match[2]!.slice(0, 100)}` }, 404);
        return true;
    }
  };
}
