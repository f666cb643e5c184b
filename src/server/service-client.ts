// The typed upstream client of the service's v8 API: answers checked against the protocol schemas,
// a timeout per attempt, retries only where a repeat cannot start a second session, typed errors.
// What the proxy route needs of it (RemoteBrowserService) is declared in remote-browser-service.ts.
import type { z } from 'zod';
import {
  createResponseSchema,
  envelopeSchema,
  imageListResponseSchema,
  removeResponseSchema,
  userApiResponseSchema,
  userQuotaResponseSchema,
  vmDataResponseSchema,
  automationResponseSchema,
  filesListResponseSchema,
  fileUploadResponseSchema,
  type AutomationResponse,
  VM_DATA_WAIT_MAX_MS,
} from '../protocol/index.js';
import { RemoteBrowserError } from './errors.js';
import { profileCalls, type ProfileCalls } from './service-profiles.js';
import { recordingCalls, type RecordingCalls } from './service-recordings.js';
import { webhookCalls, type WebhookCalls } from './service-webhook.js';
import { controlCalls } from './service-control.js';
import { embedCalls, type EmbedCalls } from './service-embed.js';
import type { CallOptions, FileBody, RemoteBrowserService } from './remote-browser-service.js';

/**
 * The service as the customer's own server calls it: the proxy route's calls, and the DevTools
 * address for a program (never handed to a browser: the proxy route does not offer it).
 */
export interface ServiceClient extends Omit<RemoteBrowserService, 'files' | 'downloadFile' | 'uploadFile' | 'control' | 'viewerPass' | keyof ProfileCalls | keyof RecordingCalls | keyof EmbedCalls>, Required<Pick<RemoteBrowserService, 'files' | 'downloadFile' | 'uploadFile' | 'control' | 'viewerPass'>>, ProfileCalls, RecordingCalls, WebhookCalls, EmbedCalls {
  /** GET /v8/vm/automation?id=: a short-lived DevTools address of a running Chromium session, for a program on this server. */
  automation(vmId: string, options?: CallOptions): Promise<AutomationResponse>;
}

export type ServiceFetch = (url: string, init: RequestInit) => Promise<Response>;

export interface ServiceClientOptions {
  /** Where the service answers, without the `/v8` segment: `https://browsers.example.com`. */
  baseUrl: string;
  /**
   * The account's API key, read at every call (a function is called then). Default: the
   * `REMOTE_BROWSER_API_KEY` environment variable. Server-side only.
   */
  apiKey?: string | (() => string | undefined);
  /** Time allowed for one attempt, answer body included. Default 10,000 ms. */
  timeoutMs?: number;
  /** Further attempts for calls that are safe to repeat. Default 2. */
  retries?: number;
  /** The fetch to use (tests, instrumentation, an in-process engine). Default: global fetch. */
  fetch?: ServiceFetch;
}

export const API_KEY_VARIABLE = 'REMOTE_BROWSER_API_KEY';
/** Shorter keys are a copy-paste accident, not a key: the engine's are 47 characters. */
const API_KEY_MIN = 20;
const RETRY_STATUSES = new Set([502, 503, 504]);

function environment(name: string): string | undefined {
  return typeof process === 'undefined' ? undefined : process.env[name];
}

/** Reads the key now, so a rotated environment takes effect without a restart. */
function readApiKey(option: ServiceClientOptions['apiKey']): string {
  const key = typeof option === 'function' ? option() : (option ?? environment(API_KEY_VARIABLE));
  if (key === undefined || key === '') {
    throw new RemoteBrowserError(
      'configuration',
      `apiKey is missing: pass createServiceClient({ apiKey }) or set ${API_KEY_VARIABLE} in the server's environment (never in browser code)`,
    );
  }
  if (key.length < API_KEY_MIN || !/^[\x21-\x7e]+$/.test(key)) {
    throw new RemoteBrowserError(
      'configuration',
      `apiKey does not look like an API key (at least ${API_KEY_MIN} printable characters, no spaces): copy it again from where it was created (remote-browser-kit keys create)`,
    );
  }
  return key;
}

/** Seconds from a Retry-After header: a number of seconds or an HTTP date. */
function retryAfterOf(response: Response): number | undefined {
  const value = response.headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/** A fetch that ignores its signal (an in-process handler) still ends when the signal does. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

function retriable(error: unknown): boolean {
  if (!(error instanceof RemoteBrowserError)) return false;
  if (error.code === 'timeout' || error.code === 'unreachable' || error.code === 'service_error') return true;
  return error.code === 'invalid_response' && error.httpStatus !== undefined && RETRY_STATUSES.has(error.httpStatus);
}

interface Call<T> {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** What the call is, for messages: `create`, `session status`... */
  what: string;
  schema: z.ZodType<T>;
  body?: unknown;
  authenticated: boolean;
  /** Whether a repeat after a failed attempt is safe. */
  repeatable: boolean;
  signal: AbortSignal | undefined;
  /** What the service may hold the answer for (vm/data's `wait`): added to the attempt's timeout. */
  heldMs?: number;
}

export function createServiceClient(options: ServiceClientOptions): ServiceClient {
  let base: URL;
  try {
    base = new URL(options.baseUrl);
  } catch (cause) {
    throw new RemoteBrowserError('configuration', 'baseUrl must be an absolute http or https address of the service, for example https://browsers.example.com', { cause });
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new RemoteBrowserError('configuration', 'baseUrl must be an http or https address of the service');
  }
  const root = base.href.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const retries = Math.max(0, options.retries ?? 2);
  const fetchImpl: ServiceFetch = options.fetch ?? ((url, init) => fetch(url, init));

  const attempt = async <T>(call: Call<T>, key: string | undefined): Promise<T> => {
    const timeout = AbortSignal.timeout(timeoutMs + (call.heldMs ?? 0));
    const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'remote-browser-kit' };
    if (key !== undefined) headers.authorization = `Bearer ${key}`;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const url = `${root}/v8/${call.path}`;
    const redact = (text: string) => (key && key.length >= 8 ? text.split(key).join('[API key]') : text);
    let response: Response;
    let text: string;
    try {
      // No redirects: a redirect would carry the Authorization header somewhere else.
      const init: RequestInit = { method: call.method, headers, signal, redirect: 'error' };
      if (call.body !== undefined) init.body = JSON.stringify(call.body);
      response = await untilAborted(fetchImpl(url, init), signal);
      text = await untilAborted(response.text(), signal);
    } catch (cause) {
      if (call.signal?.aborted) throw call.signal.reason;
      if (timeout.aborted) {
        const hint = call.method === 'POST' && call.path === 'vm/create'
          ? call.repeatable
            ? '; it was tried again with the same idempotencyKey'
            : '; the session may have started: send an idempotencyKey with create so a retry cannot start a second one'
          : '';
        throw new RemoteBrowserError('timeout', `the service at ${root} did not answer ${call.what} within ${timeoutMs + (call.heldMs ?? 0)} ms${hint}`, { cause });
      }
      throw new RemoteBrowserError('unreachable', `could not reach the service at ${root} for ${call.what}: ${redact(String((cause as Error)?.message ?? cause))}; check baseUrl and that the service is running`, { cause });
    }

    const httpStatus = response.status;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (cause) {
      throw new RemoteBrowserError('invalid_response', `the service at ${root} answered ${call.what} with HTTP ${httpStatus} and no JSON: check that baseUrl is the service's address (the /v8 paths live under it)`, { cause, httpStatus });
    }
    const envelope = envelopeSchema.safeParse(json);
    if (!envelope.success) {
      throw new RemoteBrowserError('invalid_response', `the service's answer to ${call.what} (HTTP ${httpStatus}) has no valid status field: is baseUrl a v8 service?`, { cause: envelope.error, httpStatus });
    }
    const { status, reason } = envelope.data;
    if (status !== 'ok') {
      const message = redact(envelope.data.message ?? `the service answered ${status}`);
      const retryAfter = retryAfterOf(response);
      const details = { httpStatus, ...(reason === undefined ? {} : { reason }), ...(retryAfter === undefined ? {} : { retryAfter }) };
      if (httpStatus === 401) {
        throw new RemoteBrowserError('unauthorized', `the service refused the API key (${message}): check apiKey; it may be revoked or belong to another service`, details);
      }
      throw new RemoteBrowserError(status === 'error' ? 'service_error' : status, message, details);
    }
    const parsed = call.schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new RemoteBrowserError('invalid_response', `the service's answer to ${call.what} does not follow the v8 protocol (${issue?.path.join('.') || 'body'}: ${issue?.message}); is baseUrl a v8 service?`, { cause: parsed.error, httpStatus });
    }
    return parsed.data;
  };

  const request = async <T>(call: Call<T>): Promise<T> => {
    const key = call.authenticated ? readApiKey(options.apiKey) : undefined;
    for (let tries = 0; ; tries++) {
      try {
        return await attempt(call, key);
      } catch (error) {
        if (!call.repeatable || tries >= retries || !retriable(error) || call.signal?.aborted) throw error;
        // 100 ms, 300 ms, 900 ms... with jitter, so many servers do not retry in step.
        await pause(100 * 3 ** tries * (0.5 + Math.random()), call.signal);
      }
    }
  };

  const get = <T>(path: string, what: string, schema: z.ZodType<T>, options: CallOptions | undefined, authenticated = true) =>
    request({ method: 'GET', path, what, schema, authenticated, repeatable: true, signal: options?.signal });

  return {
    ...profileCalls(request),
    ...webhookCalls(request),
    ...controlCalls(request),
    ...embedCalls(request),
    ...recordingCalls(request, (path, what, headers, callOptions) => transfer(path, 'GET', what, undefined, callOptions, headers)),
    images: (options) => get('image', 'the image list', imageListResponseSchema, options, false),
    create: (body, options) =>
      request({ method: 'POST', path: 'vm/create', what: 'create', schema: createResponseSchema, body, authenticated: true, repeatable: body.idempotencyKey !== undefined, signal: options?.signal }),
    session: async (vmId, options) => {
      const wait = Math.min(VM_DATA_WAIT_MAX_MS, Math.max(0, Math.floor(options?.wait ?? 0)));
      const path = `vm/data?id=${encodeURIComponent(vmId)}${wait > 0 ? `&wait=${wait}` : ''}`;
      const call = { method: 'GET' as const, path, what: 'session status', schema: vmDataResponseSchema, authenticated: true, repeatable: true, signal: options?.signal, heldMs: wait };
      return (await request(call)).data[0] ?? null;
    },
    list: async (options) => (await get('vm/data', 'the session list', vmDataResponseSchema, options)).data,
    remove: (vmId, options) =>
      request({ method: 'POST', path: 'vm/remove', what: 'remove', schema: removeResponseSchema, body: { id: vmId }, authenticated: true, repeatable: true, signal: options?.signal }),
    automation: (vmId, options) => get(`vm/automation?id=${encodeURIComponent(vmId)}`, 'the automation address', automationResponseSchema, options),
    userApi: (options) => get('user/api', 'user/api', userApiResponseSchema, options),
    userQuota: (options) => get('user/quota', 'user/quota', userQuotaResponseSchema, options),
    files: async (vmId, options) => (await get(`vm/files?id=${encodeURIComponent(vmId)}`, 'the file list', filesListResponseSchema, options)).files,
    downloadFile: (vmId, name, options) => transfer(`vm/files/download?id=${encodeURIComponent(vmId)}&name=${encodeURIComponent(name)}`, 'GET', `the file "${name}"`, undefined, options)
      .then((response) => ({ name, size: Number(response.headers.get('content-length') ?? 0), body: response.body! })),
    uploadFile: async (vmId, name, body, options) => {
      const response = await transfer(`vm/files/upload?id=${encodeURIComponent(vmId)}&name=${encodeURIComponent(name)}`, 'POST', `the upload of "${name}"`, body, options);
      return fileUploadResponseSchema.parse(await response.json());
    },
  };

  /**
   * A call whose body or answer streams: the key as for any call, the timeout for the answer's
   * start only (a file takes as long as it takes), never repeated (a stream is read once). An
   * answer in the envelope that is not ok becomes the same typed error as any call's.
   */
  async function transfer(path: string, method: 'GET' | 'POST', what: string, body: FileBody | undefined, callOptions: CallOptions | undefined, headers: Record<string, string> = {}): Promise<Response> {
    const key = readApiKey(options.apiKey);
    const started = new AbortController();
    const timer = setTimeout(() => started.abort(new RemoteBrowserError('timeout', `the service at ${root} did not start answering ${what} within ${timeoutMs} ms`)), timeoutMs);
    const signal = callOptions?.signal ? AbortSignal.any([callOptions.signal, started.signal]) : started.signal;
    const init: RequestInit & { duplex?: 'half' } = { method, headers: { ...headers, authorization: `Bearer ${key}`, 'user-agent': 'remote-browser-kit' }, signal, redirect: 'error' };
    if (body !== undefined) {
      init.body = body as BodyInit;
      (init.headers as Record<string, string>)['content-type'] = 'application/octet-stream';
      if (body instanceof ReadableStream) init.duplex = 'half';
    }
    let response: Response;
    try {
      response = await fetchImpl(`${root}/v8/${path}`, init);
    } catch (cause) {
      if (callOptions?.signal?.aborted) throw callOptions.signal.reason;
      if (started.signal.aborted) throw started.signal.reason;
      throw new RemoteBrowserError('unreachable', `could not reach the service at ${root} for ${what}: ${String((cause as Error)?.message ?? cause)}`, { cause });
    } finally {
      clearTimeout(timer);
    }
    // A range past the end (416) carries no envelope: it is the answer, passed on as it is.
    if ((response.ok && !(response.headers.get('content-type') ?? '').includes('json')) || response.status === 416) return response;
    if (method === 'POST' && response.ok) {
      const text = await response.text();
      const envelope = envelopeSchema.safeParse(JSON.parse(text));
      if (envelope.success && envelope.data.status === 'ok') return new Response(text, { headers: response.headers });
      return refuse(envelope.success ? envelope.data : undefined, response);
    }
    const envelope = envelopeSchema.safeParse(await response.json().catch(() => null));
    return refuse(envelope.success ? envelope.data : undefined, response);
  }

  function refuse(envelope: { status: string; message?: string | undefined; reason?: string | undefined } | undefined, response: Response): never {
    const httpStatus = response.status;
    if (!envelope) throw new RemoteBrowserError('invalid_response', `the service answered HTTP ${httpStatus} without its envelope: is baseUrl a v8 service?`, { httpStatus });
    const message = envelope.message ?? `the service answered ${envelope.status}`;
    if (httpStatus === 401) throw new RemoteBrowserError('unauthorized', `the service refused the API key (${message}): check apiKey`, { httpStatus });
    const code = envelope.status === 'error' ? 'service_error' : envelope.status === 'ok' ? 'invalid_response' : envelope.status;
    const retryAfter = retryAfterOf(response);
    throw new RemoteBrowserError(code as 'denied', message, { httpStatus, ...(envelope.reason === undefined ? {} : { reason: envelope.reason }), ...(retryAfter === undefined ? {} : { retryAfter }) });
  }
}

/** An engine in this process: `createEngine()`'s result, or anything with its Web-standard `fetch`. */
export interface InProcessEngine {
  fetch(request: Request): Promise<Response>;
}

export interface EngineServiceOptions {
  /** The account's API key (or the `REMOTE_BROWSER_API_KEY` variable), read at every call. */
  apiKey?: ServiceClientOptions['apiKey'];
  timeoutMs?: number;
}

/**
 * The service interface over an engine in this process: the same client, checks and errors as
 * over HTTP, but each call is handed to the engine's handler directly, with no socket.
 */
export function engineService(engine: InProcessEngine, options: EngineServiceOptions | string = {}): ServiceClient {
  const settings = typeof options === 'string' ? { apiKey: options } : options;
  return createServiceClient({
    ...settings,
    baseUrl: 'http://engine.in-process',
    // In-process calls fail only as the engine itself fails: nothing in between to retry past.
    retries: 0,
    fetch: (url, init) => engine.fetch(new Request(url, init)),
  });
}
