// A call to the service's HTTP interface, whatever its version (v8, v7, v6) and transport
// (node:http or a Web-standard Request): the request as the versions read it, the answer they
// give, and the checks they all make (browser origin, a point of a rate limit).
import type { IncomingHttpHeaders } from 'node:http';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { BodyResult } from '../../http/json-body.js';
import type { Logger } from '../operations/logger.js';
import { retryAfterSeconds } from '../../http/headers.js';

/** A request as the API reads it, whatever carried it: node:http or a Web-standard Request. */
export interface ApiRequest {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  body(): Promise<BodyResult>;
  /** The caller's network address, where known: the budget of the v6 request that has no key. */
  client?: string;
  /** The request's logger, bound to its request id, made when first asked for (operations/http-observer.ts). */
  log?: () => Logger;
  /** Aborts when the caller has gone: a read that waits (vm/data's `wait`) ends then. */
  signal?: AbortSignal;
}

/** An answer in the envelope, for the caller to write. */
export interface ApiAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export const answer = (body: unknown, status = 200, headers?: Record<string, string>): ApiAnswer => ({ status, body, ...(headers ? { headers } : {}) });

const BROWSER_FETCH_MODES = new Set(['cors', 'navigate', 'no-cors']);

/**
 * Whether a web browser made the request (decisions.md 20). Browsers send Origin on cross-origin
 * and POST requests and the Sec-Fetch-* headers together. Node's own fetch (undici) always sends
 * `Sec-Fetch-Mode: cors` alone, and customers' servers use it: that header alone is not a browser.
 */
export function isBrowserRequest(headers: IncomingHttpHeaders): boolean {
  if (headers.origin !== undefined) return true;
  const mode = String(headers['sec-fetch-mode'] ?? '').toLowerCase();
  if (mode === 'navigate' || mode === 'no-cors') return true;
  return BROWSER_FETCH_MODES.has(mode) && (headers['sec-fetch-site'] !== undefined || headers['sec-fetch-dest'] !== undefined);
}

/**
 * Takes one point of `key`'s budget: null when the request may go on, else the whole seconds to
 * wait (Retry-After). The point is taken when this is called, before the promise settles; the
 * engine's memory limiters refuse only with a wait, so anything else counts as one second.
 */
export function takePoint(limiter: RateLimiterAbstract, key: string): Promise<number | null> {
  return limiter.consume(key).then(
    () => null,
    (rejection: unknown) => retryAfterSeconds(rejection) ?? 1,
  );
}
