// createProxyRoute(): the customer's backend route between their web app and the service. One
// Web-standard handler: authorize, cross-site checks, rate limits, policy, signed session handles.
// Its options (end user, policy, rate limits) are declared in proxy-options.ts.
// The memory limiter's own file, not the package's main entry, which also loads the cluster limiter
// and with it Node's `cluster` and `crypto`: the route stays importable on Web-standard runtimes.
import RateLimiterMemory from 'rate-limiter-flexible/lib/RateLimiterMemory.js';
import { JSON_CONTENT_TYPE, retryAfterSeconds, SECURITY_HEADERS } from '../http/headers.js';
import { readJsonRequest } from '../http/json-body.js';
import { parseCreateRequest, parseVmDataWait, type CreateRequest, type ImageListResponse, type UserQuotaResponse } from '../protocol/index.js';
import { RemoteBrowserError } from './errors.js';
import { serveFiles } from './proxy-files.js';
import { endpointOf, type Endpoint } from './proxy-endpoints.js';
import { serveRecording } from './proxy-recordings.js';
import { serveControl } from './proxy-control.js';
import { serveEmbed } from './proxy-embed.js';
import { readJsonObject } from './proxy-body.js';
import { openProfileHandle, serveProfiles, UNKNOWN_PROFILE } from './proxy-profiles.js';
import { createSessionHandles, SECRET_MIN_CHARS, type SessionHandles } from './session-handles.js';
import type { ProxyCreateResponse, ProxyEndResponse, ProxySessionResponse } from './wire.js';
import type { EndUser, PolicyContext, PolicyRefusal, ProxyRouteOptions, RouteLimiter } from './proxy-options.js';

/** The handler, and where it is mounted (adapters pass other paths on). */
export type ProxyRoute = ((request: Request) => Promise<Response>) & { readonly basePath: string };

export const DEFAULT_BASE_PATH = '/api/remote-browser';
export const SECRET_VARIABLE = 'REMOTE_BROWSER_SECRET';

const JSON_HEADERS = { ...SECURITY_HEADERS, 'content-type': JSON_CONTENT_TYPE };

type Answer = { status: 'ok' } | { status: 'denied' | 'upgrade' | 'error'; message: string } | { status: 'insecure'; reason: string; message: string };

function reply(body: Answer | ProxyCreateResponse | ProxySessionResponse | ProxyEndResponse | ImageListResponse | UserQuotaResponse, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

const refused = (status: number, message: string) => reply({ status: 'denied', message }, status);
const UNKNOWN_SESSION = 'unknown session: it may belong to someone else or have been deleted; start a new session';
const TRY_LATER = 'remote browser sessions are unavailable right now; try again later';

function secretProblem(secret: string | undefined): RemoteBrowserError | null {
  if (secret === undefined || secret === '') {
    return new RemoteBrowserError('configuration', `secret is missing: pass createProxyRoute({ secret }) or set ${SECRET_VARIABLE} to at least ${SECRET_MIN_CHARS} random characters (for example: openssl rand -base64 32), the same on every server`);
  }
  if (secret.length < SECRET_MIN_CHARS) {
    return new RemoteBrowserError('configuration', `secret is too short: use at least ${SECRET_MIN_CHARS} random characters (for example: openssl rand -base64 32)`);
  }
  return null;
}

/** The host of an Origin header; '' for `null` and anything unparsable. */
function hostOf(origin: string): string {
  try {
    return new URL(origin).host;
  } catch {
    return '';
  }
}

function isRefusal(value: CreateRequest | PolicyRefusal): value is PolicyRefusal {
  return 'status' in value;
}

/** Whether a path (query string allowed) is the route's: adapters pass other paths on. */
export function isUnderBasePath(path: string, basePath: string): boolean {
  const pathname = path.split('?')[0]!;
  return pathname === basePath || pathname.startsWith(`${basePath}/`);
}

export function createProxyRoute<User extends EndUser>(options: ProxyRouteOptions<User>): ProxyRoute {
  if (!options?.service) throw new RemoteBrowserError('configuration', 'service is missing: pass createProxyRoute({ service: createServiceClient({ baseUrl, apiKey }) })');
  if (typeof options.authorize !== 'function') {
    throw new RemoteBrowserError('configuration', 'authorize is missing: pass createProxyRoute({ authorize: (request) => the signed-in user as { id } or null })');
  }
  // A secret written into the code is checked now; one from the environment at the first request.
  const explicitProblem = options.secret === undefined ? null : secretProblem(options.secret);
  if (explicitProblem) throw explicitProblem;

  const { service, policy = {} } = options;
  const basePath = `/${(options.basePath ?? DEFAULT_BASE_PATH).replace(/^\/+|\/+$/g, '')}`.replace(/^\/$/, '');
  const allowedOrigins = new Set(options.allowedOrigins ?? []);
  const report = options.onError ?? ((error: unknown) => console.error('[remote-browser-kit] proxy route:', error));
  const limits = options.rateLimit === false ? null : (() => {
    const settings = options.rateLimit ?? {};
    const duration = settings.perSeconds ?? 60;
    return {
      requests: settings.limiter ?? new RateLimiterMemory({ keyPrefix: 'rbk-route', points: settings.requests ?? 120, duration }),
      creates: settings.createLimiter ?? new RateLimiterMemory({ keyPrefix: 'rbk-route-create', points: settings.creates ?? 10, duration }),
    };
  })();

  let handles: { secret: string; ready: Promise<SessionHandles> } | undefined;
  const sessionHandles = (): Promise<SessionHandles> => {
    const secret = options.secret ?? (typeof process === 'undefined' ? undefined : process.env[SECRET_VARIABLE]);
    const problem = secretProblem(secret);
    if (problem || secret === undefined) return Promise.reject(problem);
    const current = handles?.secret === secret ? handles : { secret, ready: createSessionHandles(secret) };
    handles = current;
    return current.ready;
  };

  /**
   * Refuses what another site could make a signed-in browser send (null: the request may go on).
   * The Origin's host must be this request's host: the URL's, the Host header's, or that of
   * X-Forwarded-Host (which another site's page cannot set without a preflight this route never
   * grants). The scheme is not compared, as Next.js compares server actions' origins: TLS often
   * ends at a proxy, and frameworks build request.url from their own listen address.
   */
  const crossSiteRefusal = (request: Request, url: URL, method: string, endpoint: Endpoint['name']): Response | null => {
    const origin = request.headers.get('origin');
    const ownHosts = [url.host, request.headers.get('host'), request.headers.get('x-forwarded-host')?.split(',')[0]!.trim()];
    // An Origin without a host (`null`, junk) is nobody's own, even where an own host is empty.
    const originHost = origin === null ? '' : hostOf(origin);
    const fromElsewhere = origin === null
      ? request.headers.get('sec-fetch-site') === 'cross-site'
      : !allowedOrigins.has(origin) && (originHost === '' || !ownHosts.includes(originHost));
    if (fromElsewhere) {
      return reply({ status: 'insecure', reason: 'cross_site', message: 'requests from other sites are refused: call this route from pages of this site (or list the origin in allowedOrigins)' }, 403);
    }
    // A cross-site form can post text/plain or form data, never JSON (nor a file as
    // application/octet-stream, which uploads take) without a preflight.
    const mediaType = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const expected = endpoint === 'upload' ? 'application/octet-stream' : 'application/json';
    if ((method === 'POST' || method === 'DELETE') && mediaType !== expected) {
      return reply({ status: 'insecure', reason: 'content_type', message: endpoint === 'upload' ? 'send uploads with Content-Type: application/octet-stream' : 'send POST and DELETE requests with Content-Type: application/json' }, 415);
    }
    return null;
  };

  /** The service's refusals pass through; what only the operator can fix becomes "try again later". */
  const upstreamFailure = (error: unknown, request: Request, endpoint: Endpoint['name']): Response => {
    if (!(error instanceof RemoteBrowserError)) {
      if (!request.signal.aborted) report(error, request);
      return reply({ status: 'error', message: 'something went wrong on this server; try again later' }, 500);
    }
    switch (error.code) {
      case 'denied':
        return refused(endpoint === 'end' || endpoint === 'read' ? 404 : 400, endpoint === 'end' ? UNKNOWN_SESSION : error.message);
      case 'upgrade':
        return reply({ status: 'upgrade', message: error.message }, 402);
      case 'insecure':
        if (error.reason === 'rate_limited') {
          const wait = Math.max(1, error.retryAfter ?? 1);
          return reply({ status: 'insecure', reason: 'rate_limited', message: `the service is busy: too many requests; retry after ${wait} s` }, 429, { 'retry-after': String(wait) });
        }
        // Anything else (client_side_key, ...) is the server's configuration, not the user's doing.
        report(error, request);
        return reply({ status: 'error', message: TRY_LATER }, 502);
      case 'service_error':
        return reply({ status: 'error', message: error.message }, 502);
      case 'timeout':
        report(error, request);
        return reply({ status: 'error', message: 'the remote browser service did not answer in time; try again' }, 504);
      case 'configuration':
        report(error, request);
        return reply({ status: 'error', message: 'remote browser sessions are not set up on this server yet; try again later' }, 500);
      default:
        report(error, request);
        return reply({ status: 'error', message: TRY_LATER }, 502);
    }
  };

  const limited = async (limiter: RouteLimiter, user: EndUser, request: Request): Promise<Response | null> => {
    try {
      await limiter.consume(user.id);
      return null;
    } catch (rejection) {
      const wait = retryAfterSeconds(rejection);
      if (wait === null) {
        report(rejection, request);
        return reply({ status: 'error', message: TRY_LATER }, 503);
      }
      return reply({ status: 'insecure', reason: 'rate_limited', message: `too many requests; retry after ${wait} s` }, 429, { 'retry-after': String(wait) });
    }
  };

  const allowedBrowsers = async (context: PolicyContext<User>): Promise<readonly string[] | undefined> =>
    typeof policy.browsers === 'function' ? policy.browsers(context) : policy.browsers;

  const create = async (request: Request, context: PolicyContext<User>): Promise<Response> => {
    const body = await readJsonObject(request);
    if (!body.ok) return refused(body.status, body.message);
    const headerKey = request.headers.get('idempotency-key');
    if (headerKey !== null && body.value.idempotencyKey !== undefined && body.value.idempotencyKey !== headerKey) {
      return refused(400, 'idempotencyKey: the Idempotency-Key header and the idempotencyKey field differ; send one of them');
    }
    const asked = parseCreateRequest(headerKey === null ? body.value : { ...body.value, idempotencyKey: headerKey });
    if (!asked.ok) return refused(400, asked.message);

    const decided = policy.create ? await policy.create(asked.value, context) : asked.value;
    if (isRefusal(decided)) return reply({ status: decided.status, message: decided.message }, decided.status === 'upgrade' ? 402 : 403);
    const checked = parseCreateRequest(decided);
    if (!checked.ok) throw new RemoteBrowserError('configuration', `policy.create returned a request the service would refuse: ${checked.message}`);
    const browsers = await allowedBrowsers(context);
    if (browsers && !browsers.includes(checked.value.browser)) {
      return refused(403, `browser: "${checked.value.browser.slice(0, 50)}" is not available to you; choose one of: ${browsers.join(', ')}`);
    }
    const handles = await sessionHandles();
    const upstream: CreateRequest = { ...checked.value };
    // A saved profile is named by the user's handle (proxy-profiles.ts): only their own opens.
    if (upstream.profile) {
      const profileId = await openProfileHandle({ userId: context.user.id, handles }, upstream.profile.id);
      if (profileId === null) return refused(400, UNKNOWN_PROFILE);
      upstream.profile = { ...upstream.profile, id: profileId };
    }
    if (upstream.idempotencyKey !== undefined) upstream.idempotencyKey = await handles.scopeIdempotencyKey(upstream.idempotencyKey, context.user.id);
    const created = await service.create(upstream, { signal: request.signal });
    const answer: ProxyCreateResponse = {
      status: 'ok',
      handle: await handles.seal(created.vmId, context.user.id),
      ...(created.shareUrl === undefined ? {} : { shareUrl: created.shareUrl }),
      ...(created.shareUrlPath === undefined ? {} : { shareUrlPath: created.shareUrlPath }),
      quota: created.quota,
    };
    return reply(answer);
  };

  const serve = async (request: Request, endpoint: Endpoint, context: PolicyContext<User>): Promise<Response> => {
    switch (endpoint.name) {
      case 'images': {
        const [list, browsers] = await Promise.all([service.images({ signal: request.signal }), allowedBrowsers(context)]);
        return reply(browsers ? { ...list, images: list.images.filter((image) => browsers.includes(image.id)) } : list);
      }
      case 'usage': {
        if (!(await policy.usage?.(context))) return refused(403, 'usage meters are not shared with you');
        return reply(await service.userQuota({ signal: request.signal }));
      }
      case 'embed':
        return serveEmbed(service, request, await policy.embed?.(context), (body, status) => reply(body as Answer, status));
      case 'create':
        return create(request, context);
      case 'profiles':
      case 'profile':
        return serveProfiles(service, endpoint, request.method.toUpperCase(), async () => {
          const body = await readJsonObject(request);
          return body.ok ? body.value : refused(body.status, body.message);
        }, { userId: context.user.id, handles: await sessionHandles() }, request.signal, (body, status) => reply(body as Answer, status));
      case 'files':
      case 'download':
      case 'upload': {
        // A user reaches only files of their own sessions: the handle is sealed to them.
        const vmId = await (await sessionHandles()).open(endpoint.handle, context.user.id);
        if (vmId === null) return refused(404, UNKNOWN_SESSION);
        return serveFiles(service, endpoint.name, vmId, request, (body, status) => reply(body as Answer, status));
      }
      case 'recording':
      case 'recording-media':
      case 'recording-link': {
        // A user reaches only recordings of their own sessions, as with files.
        const vmId = await (await sessionHandles()).open(endpoint.handle, context.user.id);
        if (vmId === null) return refused(404, UNKNOWN_SESSION);
        return serveRecording(service, endpoint.name, vmId, request, (body, status, headers) => reply(body as Answer, status, headers));
      }
      case 'control':
      case 'viewer': {
        // Only the user the handle is sealed to (the session's owner) hands control over or gets its pass.
        const vmId = await (await sessionHandles()).open(endpoint.handle, context.user.id);
        if (vmId === null) return refused(404, UNKNOWN_SESSION);
        return serveControl(service, endpoint.name, vmId, request, async () => policy.viewerName?.(context), (body, status) => reply(body as Answer, status));
      }
      case 'read':
      case 'end': {
        const vmId = await (await sessionHandles()).open(endpoint.handle, context.user.id);
        if (vmId === null) return refused(404, UNKNOWN_SESSION);
        if (endpoint.name === 'end') {
          await service.remove(vmId, { signal: request.signal });
          return reply({ status: 'ok' });
        }
        // `?wait=`: the browser follows a starting session with one held request, not a poll (decisions.md 82).
        const wait = parseVmDataWait(new URL(request.url).searchParams.get('wait'), vmId);
        if (!wait.ok) return refused(400, wait.message);
        const session = await service.session(vmId, { signal: request.signal, ...(wait.value > 0 ? { wait: wait.value } : {}) });
        if (!session) return refused(404, UNKNOWN_SESSION);
        const { id: _masked, ...entry } = session;
        return reply({ status: 'ok', session: { handle: endpoint.handle, ...entry } });
      }
    }
  };

  const route = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const method = request.method.toUpperCase();
    const endpoint = isUnderBasePath(url.pathname, basePath) ? endpointOf(method, url.pathname.slice(basePath.length)) : null;
    if (!endpoint) return refused(404, `no endpoint ${method} ${url.pathname.slice(0, 100)}`);
    if ('allow' in endpoint) return reply({ status: 'denied', message: `use ${endpoint.allow} here` }, 405, { allow: endpoint.allow });

    const crossSite = crossSiteRefusal(request, url, method, endpoint.name);
    if (crossSite) return crossSite;

    let user: User | null | undefined;
    try {
      user = await options.authorize(request);
    } catch (error) {
      report(error, request);
      user = null;
    }
    if (!user) return refused(401, 'sign in to use remote browser sessions');
    if (typeof user.id !== 'string' || user.id === '') {
      report(new RemoteBrowserError('configuration', 'authorize() must return the user as an object with a non-empty string id, or null'), request);
      return reply({ status: 'error', message: 'something went wrong on this server; try again later' }, 500);
    }

    if (limits) {
      const refusal = (await limited(limits.requests, user, request)) ?? (endpoint.name === 'create' ? await limited(limits.creates, user, request) : null);
      if (refusal) return refusal;
    }

    try {
      return await serve(request, endpoint, { user, request });
    } catch (error) {
      return upstreamFailure(error, request, endpoint.name);
    }
  };

  return Object.assign(route, { basePath });
}
