// The browser-side client of the proxy route: typed calls over fetch, every failure as a
// RemoteBrowserClientError. The route checked the service's answers with the protocol schemas;
// here a light shape check keeps the schema library out of the browser bundle. It never holds
// an API key: the route on the customer's server does.
import type { CreateRequest, ImageListResponse, UserQuotaResponse } from '../protocol/index.js';
import type { SessionFileEntry } from '../protocol/files.js';
import { IDEMPOTENCY_HEADER, PROXY_PATHS, type ProxyCreateResponse, type ProxyProfile, type ProxyRecording, type ProxyRecordingLink, type ProxySession } from '../protocol/proxy.js';
import { fieldOf, RemoteBrowserClientError } from './error.js';

export interface RemoteBrowserClientOptions {
  /** Where the proxy route is mounted, e.g. `/api/remote-browser`. */
  endpoint: string;
  fetch?: typeof fetch;
  /** Extra headers for every request (for example a CSRF token of the host app). */
  headers?: Record<string, string>;
}

export interface RemoteBrowserClient {
  readonly endpoint: string;
  images(): Promise<ImageListResponse>;
  /** `launchId` makes retries of one launch safe: the route starts at most one session for it. */
  create(request: CreateRequest, launchId: string): Promise<ProxyCreateResponse>;
  /**
   * One session. `wait` (ms) lets the route hold the answer while the session is starting: it
   * comes the moment the status moves on (decisions.md 82), so following a start takes one request.
   */
  session(handle: string, options?: { wait?: number; signal?: AbortSignal }): Promise<ProxySession>;
  end(handle: string): Promise<void>;
  usage(): Promise<UserQuotaResponse>;
  /** A session's files: what its browser downloaded and what it was given (issue 23). */
  files(handle: string): Promise<SessionFileEntry[]>;
  /** Where the browser saves one of them from: a real download with the file's own name. */
  fileUrl(handle: string, name: string): string;
  /** The signed-in user's saved profiles (issue 34), by handle; a create sends one as `profile.id`. */
  profiles(): Promise<ProxyProfile[]>;
  createProfile(name: string, browser: string): Promise<ProxyProfile>;
  renameProfile(handle: string, name: string): Promise<ProxyProfile>;
  removeProfile(handle: string): Promise<void>;
  /** A session's recording (issue 35): its state, length and timeline; refused with `reason` `not_recorded` or `removed`. */
  recording(handle: string): Promise<ProxyRecording>;
  /** Where a <video> plays the recording from (MP4 through the route, with byte ranges once it is whole). */
  recordingMediaUrl(handle: string): string;
  /** Removes an ended session's recording. */
  removeRecording(handle: string): Promise<void>;
  /**
   * A replay link to the recording (decisions.md 110): a page of the service's viewer site that
   * plays it without signing in, until `expires` (a week unless `expiresInS` says otherwise, never
   * past the recording's removal). Whoever holds it can watch the whole recording.
   */
  recordingLink(handle: string, expiresInS?: number): Promise<ProxyRecordingLink>;
  /**
   * Why the recording's media did not play (a <video> cannot tell): its first bytes asked for,
   * the answer's status with its Retry-After (503: busy) or refusal `reason` (404).
   */
  recordingMediaStatus(handle: string): Promise<{ httpStatus: number; retryAfter?: number; reason?: string }>;
}

// An API key has no place in a browser: refuse anything that looks like one.
const SECRET_LOOKING = /(^|\s)(rbk_[A-Za-z0-9_-]{20,}|Bearer\s+\S+)/i;

/** The recording calls of a replay link's API (`<link>/recording`, `<link>/media`); `<SessionReplay link>` makes them. */
export type ReplayLinkClient = Pick<RemoteBrowserClient, 'endpoint' | 'recording' | 'recordingMediaUrl' | 'recordingMediaStatus'>;

/**
 * A client of a replay link's API on the service's viewer site (`link`: `<share base>/replay/<token>`,
 * its token the only credential); the handle its calls take names nothing.
 */
export function createReplayLinkClient(link: string, options: Omit<RemoteBrowserClientOptions, 'endpoint'> = {}): ReplayLinkClient {
  return clientOf({ ...options, endpoint: link }, { ...PROXY_PATHS, recording: () => '/recording', recordingMedia: () => '/media' });
}

export function createRemoteBrowserClient(options: RemoteBrowserClientOptions): RemoteBrowserClient {
  return clientOf(options, PROXY_PATHS);
}

/** The client over the route's paths (or a replay link's, whose recording paths differ). */
function clientOf(options: RemoteBrowserClientOptions, paths: typeof PROXY_PATHS): RemoteBrowserClient {
  const endpoint = options.endpoint.replace(/\/+$/, '');
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (name.toLowerCase() === 'authorization' || SECRET_LOOKING.test(value)) {
      throw new RemoteBrowserClientError('configuration', `the "${name}" header looks like an API key: keep the key on your server, in the proxy route (createProxyRoute), never in the browser`);
    }
  }
  if (SECRET_LOOKING.test(endpoint)) throw new RemoteBrowserClientError('configuration', 'the endpoint contains what looks like an API key: keep the key on your server');

  async function call<T>(path: string, fits: (body: any) => boolean, init: RequestInit = {}): Promise<T> {
    let response: Response;
    try {
      response = await (options.fetch ?? fetch)(`${endpoint}${path}`, {
        ...init,
        credentials: 'same-origin',
        headers: { accept: 'application/json', ...options.headers, ...(init.headers as Record<string, string> | undefined) },
      });
    } catch (cause) {
      throw new RemoteBrowserClientError('network', 'the remote browser service could not be reached; check your connection and try again', { cause });
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (cause) {
      throw new RemoteBrowserClientError('service_error', `the remote browser route answered HTTP ${response.status} without JSON; try again later`, { cause, httpStatus: response.status });
    }
    const envelope = body as { status?: string; message?: string; reason?: string };
    if (envelope?.status !== 'ok') {
      const message = typeof envelope?.message === 'string' ? envelope.message : `the remote browser route answered HTTP ${response.status}`;
      const retryAfter = Number(response.headers.get('retry-after')) || undefined;
      const details = { httpStatus: response.status, ...(envelope?.reason ? { reason: envelope.reason } : {}), ...(retryAfter ? { retryAfter } : {}) };
      if (response.status === 401) throw new RemoteBrowserClientError('unauthorized', message, details);
      switch (envelope?.status) {
        case 'denied':
          throw new RemoteBrowserClientError('denied', message, { ...details, ...(fieldOf(message) ? { field: fieldOf(message) } : {}) });
        case 'upgrade':
          throw new RemoteBrowserClientError('upgrade', message, details);
        case 'insecure':
          throw new RemoteBrowserClientError(envelope.reason === 'rate_limited' ? 'rate_limited' : 'insecure', message, details);
        default:
          throw new RemoteBrowserClientError('service_error', message, details);
      }
    }
    if (!fits(body)) throw new RemoteBrowserClientError('service_error', 'the remote browser route answered in an unexpected shape; update remote-browser-kit on both sides');
    return body as T;
  }

  const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

  return {
    endpoint,
    images: () => call<ImageListResponse>(PROXY_PATHS.images, (b) => Array.isArray(b.images) && Array.isArray(b.vpnLocations) && typeof b.residential === 'object'),
    create: (request, launchId) =>
      call<ProxyCreateResponse>(PROXY_PATHS.sessions, (b) => typeof b.handle === 'string' && typeof b.quota === 'object', json(request, { [IDEMPOTENCY_HEADER]: launchId })),
    session: async (handle, read = {}) => {
      const path = `${PROXY_PATHS.session(handle)}${read.wait ? `?wait=${Math.max(0, Math.floor(read.wait))}` : ''}`;
      return (await call<{ session: ProxySession }>(path, (b) => typeof b.session?.handle === 'string' && typeof b.session?.status === 'string', read.signal ? { signal: read.signal } : {})).session;
    },
    end: async (handle) => {
      await call(PROXY_PATHS.session(handle), () => true, { method: 'DELETE', headers: { 'content-type': 'application/json' } });
    },
    files: async (handle) => (await call<{ files: SessionFileEntry[] }>(PROXY_PATHS.files(handle), (b) => Array.isArray(b.files))).files,
    fileUrl: (handle, name) => `${endpoint}${PROXY_PATHS.fileDownload(handle, name)}`,
    profiles: async () => (await call<{ profiles: ProxyProfile[] }>(PROXY_PATHS.profiles, (b) => Array.isArray(b.profiles))).profiles,
    createProfile: async (name, browser) => (await call<{ profile: ProxyProfile }>(PROXY_PATHS.profiles, (b) => typeof b.profile?.handle === 'string', json({ name, browser }))).profile,
    renameProfile: async (handle, name) => (await call<{ profile: ProxyProfile }>(PROXY_PATHS.profile(handle), (b) => typeof b.profile?.handle === 'string', json({ name }))).profile,
    removeProfile: async (handle) => {
      await call(PROXY_PATHS.profile(handle), () => true, { method: 'DELETE', headers: { 'content-type': 'application/json' } });
    },
    recording: async (handle) =>
      (await call<{ recording: ProxyRecording }>(paths.recording(handle), (b) => typeof b.recording?.duration_ms === 'number' && Array.isArray(b.recording?.timeline))).recording,
    recordingMediaUrl: (handle) => `${endpoint}${paths.recordingMedia(handle)}`,
    recordingMediaStatus: async (handle) => {
      let response: Response;
      try {
        response = await (options.fetch ?? fetch)(`${endpoint}${paths.recordingMedia(handle)}`, { credentials: 'same-origin', headers: { ...options.headers, range: 'bytes=0-1' } });
      } catch (cause) {
        throw new RemoteBrowserClientError('network', 'the remote browser service could not be reached; check your connection and try again', { cause });
      }
      const retryAfter = Number(response.headers.get('retry-after')) || undefined;
      const reason = response.ok ? undefined : ((await response.json().catch(() => null)) as { reason?: unknown } | null)?.reason;
      if (response.ok) void response.body?.cancel().catch(() => undefined);
      return { httpStatus: response.status, ...(retryAfter ? { retryAfter } : {}), ...(typeof reason === 'string' ? { reason } : {}) };
    },
    removeRecording: async (handle) => {
      await call(PROXY_PATHS.recording(handle), () => true, { method: 'DELETE', headers: { 'content-type': 'application/json' } });
    },
    recordingLink: async (handle, expiresInS) => {
      const { url, expires } = await call<ProxyRecordingLink>(PROXY_PATHS.recordingLink(handle), (b) => typeof b.url === 'string' && typeof b.expires === 'string', json(expiresInS === undefined ? {} : { expires_in_s: expiresInS }));
      return { url, expires };
    },
    usage: () => call<UserQuotaResponse>(PROXY_PATHS.usage, (b) => typeof b.running_session_limit === 'number' && Array.isArray(b.pools)),
  };
}
