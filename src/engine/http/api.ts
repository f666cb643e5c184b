// The HTTP interface (v8 current, v7 for older callers) over the session service: authentication,
// browser-origin refusal, per-key rate limits and each endpoint's envelope; the endpoints are one
// table of routes (routes.ts): the engine's own beside this file (session-routes.ts,
// account-routes.ts, file-routes.ts) and the features' from their folders, given to createApi; a
// route whose bytes stream is served over node:http by its `stream`. v7's own names and codes are added at its edge (v7.ts); the deprecated v6 lives in v6.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { discardRest, readJsonBody } from '../../http/node-body.js';
import { parseRemoveRequest } from '../../protocol/index.js';
import { hashSecret } from '../accounts/accounts.js';
import type { AccountRow, SessionRow } from '../store/store.js';
import type { Logger } from '../operations/logger.js';
import { answer, isBrowserRequest, takePoint, type ApiAnswer, type ApiRequest } from './calls.js';
import { sendJson } from './respond.js';
import { createV6Api, isV6Path } from './v6.js';
import { ACCOUNT_ROUTES } from './account-routes.js';
import { FILE_ROUTES } from './file-routes.js';
import { isAccount, routeTable, type ApiRoute, type ApiVersion, type RouteTools } from './routes.js';
import { SESSION_ROUTES } from './session-routes.js';

import type { ApiOptions } from './api-options.js';

export type { ApiOptions };

/** The node:http entry (false when the path is not the API's), plus the transport-free core. */
export interface Api {
  (request: IncomingMessage, response: ServerResponse, url: URL, log?: () => Logger): Promise<boolean>;
  answer(request: ApiRequest): Promise<ApiAnswer | null>;
}

/** The interface over the engine's own routes and the features' (`featureRoutes`, module.ts `apiRoutes`). */
export function createApi(options: ApiOptions, featureRoutes?: readonly ApiRoute[]): Api {
  const { config, store, accounts, usage, sessions, runtime } = options;
  // One budget per API key (decisions.md 19), whatever carries the key: v8, v7, or a v6 session key made from it.
  const keyLimiter = options.limiter({ points: config.rateLimit.requests, duration: config.rateLimit.perSeconds, keyPrefix: 'api' });
  const v6 = createV6Api({ config, store, accounts, usage, sessions, runtime, now: options.now, limiter: options.limiter, keyLimiter, ...(options.observer ? { onRateLimited: options.observer.rateLimited } : {}) });

  /** Browser-origin refusal and the key: the account and the key's hash, or the refusal to send. */
  const identify = async (request: ApiRequest): Promise<{ account: AccountRow; keyHash: string } | ApiAnswer> => {
    if (isBrowserRequest(request.headers)) {
      return answer({
        status: 'insecure',
        reason: 'client_side_key',
        message: 'this request came from a web browser: the API key must stay on your server; call the service from your backend (for example through the remote-browser-kit proxy route)',
      }, 403);
    }
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      return answer({ status: 'denied', message: 'missing API key: send the header "Authorization: Bearer <API key>"' }, 401);
    }
    const keyHash = hashSecret(match[1]!);
    const account = await accounts.authenticateHash(match[1]!, keyHash);
    if (!account) {
      return answer({ status: 'denied', message: 'invalid or revoked API key' }, 401);
    }
    return { account, keyHash };
  };

  /**
   * The key's rate limit: null when the request may go on, else the 429 answer. The request's
   * point is taken when this is called, before the promise settles.
   */
  const admit = (keyHash: string): Promise<ApiAnswer | null> =>
    takePoint(keyLimiter, keyHash).then((wait) =>
      wait === null ? null : (options.observer?.rateLimited('api_key'), answer({ status: 'insecure', reason: 'rate_limited', message: `too many requests for this API key; retry after ${wait} s` }, 429, { 'retry-after': String(wait) })));

  const upgradeForApi = () => answer({ status: 'upgrade', message: 'your plan does not include programmatic access to the API' });

  /** Authentication, the rate limit and the plan's programmatic access, before a request that writes. */
  const programmatic = async (request: ApiRequest): Promise<AccountRow | ApiAnswer> => {
    const identity = await identify(request);
    if (!('keyHash' in identity)) return identity;
    const limited = await admit(identity.keyHash);
    if (limited) return limited;
    return (await usage.hasProgrammaticAccess(identity.account)) ? identity.account : upgradeForApi();
  };

  /**
   * A read-only request: the key, then its rate-limit point and the answer at the same time (a
   * limited request's answer is dropped unsent).
   */
  const read = async (request: ApiRequest, needsProgrammatic: boolean, reply: (account: AccountRow) => Promise<unknown>): Promise<ApiAnswer> => {
    const identity = await identify(request);
    if (!('keyHash' in identity)) return identity;
    const admitted = admit(identity.keyHash);
    const outcome = needsProgrammatic && !(await usage.hasProgrammaticAccess(identity.account)) ? upgradeForApi() : answer(await reply(identity.account));
    return (await admitted) ?? outcome;
  };

  /** One session of the caller's account by its id, or the refusal (another account's id is not confirmed). */
  const ownSession = async (account: AccountRow, id: string | null, version: string): Promise<SessionRow | { status: 'denied'; message: string }> => {
    if (id === null || id === '') return { status: 'denied', message: `id: send the session's id (the vmId that POST /${version}/vm/create answered) as ?id=` };
    const row = await store.session(id.slice(0, 200));
    return row && row.account_id === account.id ? row : { status: 'denied', message: 'id: unknown session' };
  };

  /** A programmatic call whose body names a session (`{id}`): the key, then the body checked, then `act`. */
  const sessionByBody = async (request: ApiRequest, act: (account: AccountRow, id: string) => Promise<ApiAnswer>): Promise<ApiAnswer> => {
    const account = await programmatic(request);
    if (!isAccount(account)) return account;
    const body = await request.body();
    if (!body.ok) return answer({ status: 'denied', message: body.message });
    const parsed = parseRemoveRequest(body.value);
    if (!parsed.ok) return answer({ status: 'denied', message: parsed.message });
    return act(account, parsed.value.id);
  };

  const tools: RouteTools = { options, programmatic, read, ownSession, sessionByBody };
  const routes = routeTable([...SESSION_ROUTES, ...ACCOUNT_ROUTES, ...FILE_ROUTES, ...(featureRoutes ?? [])]);

  const respond = async (request: ApiRequest): Promise<ApiAnswer | null> => {
    const { url } = request;
    if (isV6Path(url.pathname)) return v6(request);
    const match = /^\/(v8|v7)\/(.+)$/.exec(url.pathname);
    if (!match) return null;
    const version = match[1] as ApiVersion;
    const route = routes.find(request.method, version, match[2]!);
    if (route) return route.answer(request, version, tools);
    return answer({ status: 'denied', message: `no endpoint ${request.method} /${version}/${match[2]!.slice(0, 100)}` }, 404);
  };

  const api = async (request: IncomingMessage, response: ServerResponse, url: URL, log?: () => Logger): Promise<boolean> => {
    let bodyRead = false;
    // The caller's connection closing ends a read that waits.
    const gone = new AbortController();
    response.once('close', () => gone.abort());
    const apiRequest: ApiRequest = {
      signal: gone.signal,
      method: request.method ?? 'GET',
      url,
      headers: request.headers,
      body: () => ((bodyRead = true), readJsonBody(request)),
      client: options.clientAddress(request),
      ...(log ? { log } : {}),
    };
    // A route whose bytes stream is served here, over node:http (a wrong method is told the right one).
    const streamed = /^\/(v8|v7)\/(.+)$/.exec(url.pathname);
    const streaming = streamed ? routes.streamed(streamed[1] as ApiVersion, streamed[2]!) : undefined;
    if (streaming) {
      const version = streamed![1] as ApiVersion;
      const refuse = async (reply: ApiAnswer) => {
        await discardRest(request);
        sendJson(response, reply.body, reply.status, reply.headers);
      };
      if (request.method !== streaming.method) await refuse(answer({ status: 'denied', message: `use ${streaming.method} for /${version}/${streaming.path}` }, 405));
      else await streaming.stream!({ request, response, api: apiRequest, version, refuse }, tools);
      return true;
    }
    const reply = await respond(apiRequest);
    if (!reply) return false;
    // A body the endpoint did not read (a GET's, an unknown path's) is read first, as a refused one is.
    if (!bodyRead) await discardRest(request);
    sendJson(response, reply.body, reply.status, reply.headers);
    return true;
  };
  return Object.assign(api, { answer: respond });
}
