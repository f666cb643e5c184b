// The HTTP interface (v8 current, v7 for older callers) over the session service: image list,
// authentication, browser-origin refusal, per-key rate limits, and each endpoint's envelope.
// v7's own names and codes are added at its edge (v7.ts); the deprecated v6 lives in v6.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { discardRest, readJsonBody } from '../../http/node-body.js';
import {
  parseCreateRequest,
  parseEmbedRequest,
  parseRecordingLinkRequest,
  parseRemoveRequest,
  parseVmDataWait,
  parseWebhookRequest,
  uniqueOrigins,
  type EmbedResponse,
  type ImageListResponse,
  type UserApiResponse,
  type UserQuotaResponse,
} from '../../protocol/index.js';
import type { AccountUsage } from '../accounts/usage.js';
import type { Accounts } from '../accounts/accounts.js';
import { hashSecret } from '../accounts/accounts.js';
import type { EngineConfig } from '../config.js';
import type { EngineRuntime } from '../sessions/node-runtime.js';
import type { AccountRow, SessionRow, Store } from '../store/store.js';
import type { SessionService } from '../sessions/service.js';
import type { LimitSettings } from './limits.js';
import type { ApiObserver } from '../operations/api-observer.js';
import type { RecordingsAccess } from '../recordings/recordings.js';
import type { ReplayLinks } from '../recordings/replay-links.js';
import type { Logger } from '../operations/logger.js';
import type { SessionWebhooks } from '../webhooks/webhooks.js';
import { answer, isBrowserRequest, takePoint, type ApiAnswer, type ApiRequest } from './calls.js';
import { sendJson } from './respond.js';
import { removalAnswer } from './outcomes.js';
import { createV6Api, isV6Path } from './v6.js';
import { V7_TERMS, v7CreateAnswer, v7CreateRequest, v7SessionList, v7UserApi, v7UserQuota } from './v7.js';
import { V8_TERMS, v8CreateAnswer, v8SessionList } from './v8.js';
import { receiveSessionFile, sendSessionFile, type FileTransferOptions } from './files.js';
import { answerProfileCall, PROFILE_ROUTES } from './profiles.js';
import { answerControlCall, CONTROL_ROUTES, type SessionControl } from './control.js';
import type { ProfileService } from '../profiles/profiles.js';

/** The file endpoints that stream (node:http only): `vm/files/download` and `vm/files/upload`. */
const FILE_TRANSFER = /^\/(v8|v7)\/vm\/files\/(download|upload)$/;
/** The recording's media (v8 only), which streams (node:http only). */
const RECORDING_MEDIA = '/v8/vm/recording/media';

export interface ApiOptions {
  config: EngineConfig;
  store: Store;
  accounts: Accounts;
  /** An account's pools, meters and programmatic access (accounts/usage.ts). */
  usage: AccountUsage;
  sessions: SessionService;
  runtime: Pick<EngineRuntime, 'images'>;
  openapi: () => unknown;
  /** The engine's clock (tests move it). */
  now: () => number;
  /** Makes the rate limiters (limits.ts: shared by every node of a cluster). */
  limiter: (settings: LimitSettings) => RateLimiterAbstract;
  /** The client's address behind trusted proxies (client-address.ts). */
  clientAddress: (request: IncomingMessage) => string;
  /** Files in and out of sessions (files.ts, decisions.md 55); absent: the endpoints say they are not offered. */
  files?: FileTransferOptions;
  /** A running session's DevTools address for programs (automation.ts); absent: the endpoint says it is not offered. */
  automation?: (account: AccountRow, id: string | null, version: 'v8' | 'v7') => Promise<unknown>;
  /** The account's webhook receiver (webhooks/webhooks.ts, decisions.md 61); absent: v8 user/webhook says it is not offered. */
  webhooks?: Pick<SessionWebhooks, 'get' | 'set' | 'remove'>;
  /** Logs and metrics of creates and rate-limit refusals (operations/api-observer.ts). */
  observer?: ApiObserver;
  /** Sessions' recordings (recordings/recordings.ts, issue 35): v8 only. */
  recordings?: RecordingsAccess;
  /** Replay links to recordings (recordings/replay-links.ts, decisions.md 110): v8 only; absent, the call says they are not offered. */
  replayLinks?: ReplayLinks;
  /** Saved profiles (http/profiles.ts, decisions.md 85); absent: v8's profile calls say they are not offered. */
  profiles?: ProfileService;
  /** Who drives a session (issue 36): `POST /v8/vm/control` and `vm/viewer`. */
  control?: SessionControl;
}

/** The node:http entry (false when the path is not the API's), plus the transport-free core. */
export interface Api {
  (request: IncomingMessage, response: ServerResponse, url: URL, log?: () => Logger): Promise<boolean>;
  answer(request: ApiRequest): Promise<ApiAnswer | null>;
}

export function createApi(options: ApiOptions): Api {
  const { config, store, accounts, usage, sessions, runtime } = options;
  // One budget per API key (decisions.md 19), whatever carries the key: v8, v7, or a v6 session key made from it.
  const keyLimiter = options.limiter({ points: config.rateLimit.requests, duration: config.rateLimit.perSeconds, keyPrefix: 'api' });
  const v6 = createV6Api({ config, store, accounts, usage, sessions, runtime, now: options.now, limiter: options.limiter, keyLimiter, ...(options.observer ? { onRateLimited: options.observer.rateLimited } : {}) });

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

  const notOffered = { status: 'denied', message: 'this service does not send webhooks' };
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

  /** `vm/files/download` and `vm/files/upload`: the key, its rate limit and the plan checked as for any call, then the bytes streamed. */
  const transfer = async (request: IncomingMessage, response: ServerResponse, url: URL, apiRequest: ApiRequest): Promise<void> => {
    const [, version, direction] = FILE_TRANSFER.exec(url.pathname)!;
    const method = direction === 'download' ? 'GET' : 'POST';
    const refuse = async (reply: ApiAnswer) => {
      await discardRest(request);
      sendJson(response, reply.body, reply.status, reply.headers);
    };
    if (request.method !== method) return refuse(answer({ status: 'denied', message: `use ${method} for /${version}/vm/files/${direction}` }, 405));
    const account = await programmatic(apiRequest);
    if (!isAccount(account)) return refuse(account);
    const row = await ownSession(account, url.searchParams.get('id'), version!);
    if ('message' in row) return refuse(answer(row, direction === 'download' ? 403 : 200));
    if (!options.files) return refuse(answer({ status: 'denied', message: 'files cannot be moved on this service' }, 403));
    return direction === 'download' ? sendSessionFile(request, response, row, url, options.files) : receiveSessionFile(request, response, row, url, options.files);
  };

  /** `vm/recording/media` (v8): the key and its session checked as for any call, then the MP4 streamed (http/recordings.ts). */
  const recordingMedia = async (request: IncomingMessage, response: ServerResponse, url: URL, apiRequest: ApiRequest): Promise<void> => {
    const refuse = async (reply: ApiAnswer) => {
      await discardRest(request);
      sendJson(response, reply.body, reply.status, reply.headers);
    };
    if (request.method !== 'GET') return refuse(answer({ status: 'denied', message: 'use GET for /v8/vm/recording/media' }, 405));
    const account = await programmatic(apiRequest);
    if (!isAccount(account)) return refuse(account);
    const row = await ownSession(account, url.searchParams.get('id'), 'v8');
    if ('message' in row) return refuse(answer(row, 403));
    if (!options.recordings) return refuse(answer({ status: 'denied', message: 'sessions are not recorded on this service' }, 404));
    await discardRest(request);
    await options.recordings.sendMedia(request.headers.range, response, row);
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

  const respond = async (request: ApiRequest): Promise<ApiAnswer | null> => {
    const { url } = request;
    if (isV6Path(url.pathname)) return v6(request);
    const match = /^\/(v8|v7)\/(.+)$/.exec(url.pathname);
    if (!match) return null;
    const version = match[1] as 'v8' | 'v7';
    const route = `${request.method} ${match[2]}`;
    if (version === 'v8' && PROFILE_ROUTES.has(route)) return answerProfileCall(route, request, { programmatic, read, profiles: options.profiles });
    if (version === 'v8' && CONTROL_ROUTES.has(route)) return answerControlCall(route, request, { programmatic, ownSession, control: options.control });
    switch (route) {
      case 'GET image':
        return answer(imageList());
      case 'GET openapi.json':
        return answer(options.openapi());
      case 'POST vm/create': {
        const account = await programmatic(request);
        if (!isAccount(account)) return account;
        const body = await request.body();
        if (!body.ok) return answer({ status: 'denied', message: body.message });
        // `profile` is v8's (decisions.md 85): v7 reads its requests as before it existed.
        const parsed = parseCreateRequest(version === 'v8' || typeof body.value !== 'object' || body.value === null || Array.isArray(body.value) ? body.value : { ...body.value, profile: undefined });
        if (!parsed.ok) return answer({ status: 'denied', message: parsed.message });
        const wanted = version === 'v8' ? parsed.value : v7CreateRequest(parsed.value, config);
        const outcome = await sessions.create(account, wanted, version === 'v8' ? V8_TERMS : V7_TERMS);
        options.observer?.created(request.log?.(), account, wanted, outcome, version);
        return answer(version === 'v8' ? v8CreateAnswer(outcome) : v7CreateAnswer(outcome));
      }
      case 'GET vm/data': {
        const id = url.searchParams.get('id');
        // v8 only: `wait` answers a starting session once it moves on (decisions.md 82); v7 is as it was.
        const wait = version === 'v8' ? parseVmDataWait(url.searchParams.get('wait'), id) : { ok: true as const, value: 0 };
        return read(request, true, async (account) => {
          if (!wait.ok) return { status: 'denied', message: wait.message };
          const rows = id === null || id === '' ? await sessions.list(account, undefined) : await sessions.readWhenStarted(account, id, wait.value, request.signal);
          return version === 'v7' ? v7SessionList(rows) : v8SessionList(rows);
        });
      }
      case 'POST vm/remove':
        return sessionByBody(request, async (account, id) => answer(removalAnswer(await sessions.remove(account, id))));
      // Programs driving a session (decisions.md 54): a short-lived DevTools address, never the key.
      case 'GET vm/automation': {
        const id = url.searchParams.get('id');
        const { automation } = options;
        return read(request, true, async (account) =>
          automation ? automation(account, id, version) : { status: 'denied', message: 'programs cannot drive sessions on this service' });
      }
      // Session webhooks (decisions.md 61): v8 only.
      case 'GET user/webhook':
      case 'POST user/webhook':
      case 'DELETE user/webhook': {
        const { webhooks } = options;
        if (version !== 'v8') break;
        if (request.method === 'GET') return read(request, true, async (account) => (webhooks ? webhooks.get(account.id) : notOffered));
        const account = await programmatic(request);
        if (!isAccount(account)) return account;
        if (!webhooks) return answer(notOffered);
        if (request.method === 'DELETE') return answer(await webhooks.remove(account.id));
        const body = await request.body();
        if (!body.ok) return answer({ status: 'denied', message: body.message });
        const parsed = parseWebhookRequest(body.value);
        if (!parsed.ok) return answer({ status: 'denied', message: parsed.message });
        return answer(await webhooks.set(account.id, parsed.value.url));
      }
      // The origins that may frame the account's share links (issue 44, decisions.md 134): v8 only.
      case 'GET user/embed':
      case 'POST user/embed': {
        if (version !== 'v8') break;
        if (request.method === 'GET') return read(request, true, async (account) => ({ status: 'ok', origins: await store.embedOrigins(account.id) } satisfies EmbedResponse));
        const account = await programmatic(request);
        if (!isAccount(account)) return account;
        const body = await request.body();
        const parsed = body.ok ? parseEmbedRequest(body.value) : body;
        if (!parsed.ok) return answer({ status: 'denied', message: parsed.message });
        const origins = uniqueOrigins(parsed.value.origins);
        await store.setEmbedOrigins(account.id, origins);
        return answer({ status: 'ok', origins } satisfies EmbedResponse);
      }
      // Files in and out of a session (decisions.md 55): the list here; the bytes stream (api below).
      case 'GET vm/files': {
        const id = url.searchParams.get('id');
        return read(request, true, async (account) => {
          const row = await ownSession(account, id, version);
          if ('message' in row) return row;
          return options.files ? options.files.files.list(row) : { status: 'denied', message: 'files cannot be moved on this service' };
        });
      }
      // A session's recording (issue 35, decisions.md 96): v8 only; the media streams (api below).
      case 'GET vm/recording': {
        if (version !== 'v8') break;
        const id = url.searchParams.get('id');
        return read(request, true, async (account) => {
          const row = await ownSession(account, id, version);
          if ('message' in row) return row;
          return options.recordings ? options.recordings.read(row) : { status: 'denied', message: 'sessions are not recorded on this service' };
        });
      }
      case 'POST vm/recording/remove':
        if (version !== 'v8') break;
        return sessionByBody(request, async (account, id) => {
          const row = await ownSession(account, id, version);
          if ('message' in row) return answer(row);
          return answer(options.recordings ? await options.recordings.remove(row) : { status: 'denied', message: 'sessions are not recorded on this service' });
        });
      // A signed, expiring link to watch the recording on the viewer site (decisions.md 110).
      case 'POST vm/recording/link': {
        if (version !== 'v8') break;
        const account = await programmatic(request);
        if (!isAccount(account)) return account;
        const body = await request.body();
        const parsed = body.ok ? parseRecordingLinkRequest(body.value) : body;
        if (!parsed.ok) return answer({ status: 'denied', message: parsed.message });
        const row = await ownSession(account, parsed.value.id, version);
        if ('message' in row) return answer(row);
        return answer(options.replayLinks ? await options.replayLinks.mint(row, parsed.value.expires_in_s) : { status: 'denied', message: 'sessions are not recorded on this service' });
      }
      case 'GET vm/files/download':
      case 'POST vm/files/upload':
        return answer({ status: 'denied', message: `${route.split(' ')[1]} streams its bytes: call it over HTTP, not in-process` });
      case 'GET user/api':
      case 'GET user/quota':
        return read(request, false, async (account) => {
          const accountUsage = await usage.usage(account);
          // v7's quota answers are v8's with its own names added (decisions.md 32): the profile meters too.
          const profileMeters = await options.profiles?.meters(account);
          const recordingMeters = await options.recordings?.meters(account.id);
          const quota: UserQuotaResponse = { status: 'ok', has_plan: accountUsage.has_plan, ...accountUsage.meters, pools: accountUsage.pools, ...(profileMeters ?? {}), ...(recordingMeters ?? {}) };
          if (route === 'GET user/quota') return version === 'v7' ? v7UserQuota(quota) : quota;
          const { status, ...meters } = quota;
          const user: UserApiResponse = { status, contact: account.contact, feature_programmatic_access: await usage.hasProgrammaticAccess(account), ...meters };
          return version === 'v7' ? v7UserApi(user) : user;
        });
    }
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
    if (FILE_TRANSFER.test(url.pathname)) {
      await transfer(request, response, url, apiRequest);
      return true;
    }
    if (url.pathname === RECORDING_MEDIA) {
      await recordingMedia(request, response, url, apiRequest);
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

function isAccount(value: AccountRow | ApiAnswer): value is AccountRow {
  return !('status' in value && 'body' in value);
}
