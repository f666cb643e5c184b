// The one error class of the server side: the upstream client's failures and the proxy route's
// configuration mistakes, each with a code to branch on and a message that says what to do.

/**
 * - `denied`, `upgrade`, `insecure`, `service_error`: the service answered with that envelope
 *   status (`service_error` is its `error`); `message` and `reason` are the service's own.
 * - `unauthorized`: the service refused the API key (HTTP 401).
 * - `timeout`, `unreachable`, `invalid_response`: the service did not answer, or not as the
 *   protocol says.
 * - `configuration`: an option is missing or wrong (a missing or weak API key or secret).
 * - `invalid_signature`: a webhook's body does not carry the service's valid, recent signature
 *   (verifyWebhook).
 */
export type RemoteBrowserErrorCode =
  | 'denied'
  | 'upgrade'
  | 'insecure'
  | 'service_error'
  | 'unauthorized'
  | 'timeout'
  | 'unreachable'
  | 'invalid_response'
  | 'configuration'
  | 'invalid_signature';

export interface RemoteBrowserErrorOptions {
  cause?: unknown;
  /** The check that failed, with `insecure` (for example `rate_limited`). */
  reason?: string;
  /** Seconds to wait before trying again, from the service's `Retry-After`. */
  retryAfter?: number;
  /** The service's HTTP status, when it answered. */
  httpStatus?: number;
}

export class RemoteBrowserError extends Error {
  override readonly name = 'RemoteBrowserError';
  readonly code: RemoteBrowserErrorCode;
  readonly reason: string | undefined;
  readonly retryAfter: number | undefined;
  readonly httpStatus: number | undefined;

  constructor(code: RemoteBrowserErrorCode, message: string, options: RemoteBrowserErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.reason = options.reason;
    this.retryAfter = options.retryAfter;
    this.httpStatus = options.httpStatus;
  }
}

export function isRemoteBrowserError(value: unknown): value is RemoteBrowserError {
  return value instanceof RemoteBrowserError;
}
