// The one error class of the browser side: what the proxy route (or the network) said, with a
// code to branch on and what the person can do about it.

/**
 * - `denied`: the request was refused (a field, or a session that is not yours); `field` names
 *   the field when the message does.
 * - `upgrade`: the plan does not include it, or a limit is reached.
 * - `rate_limited`: too many requests; `retryAfter` says when to try again.
 * - `insecure`: another security check failed (`reason` names it).
 * - `unauthorized`: the person is not signed in to the host app.
 * - `service_error`: the service failed; trying again later may work.
 * - `network`: the route could not be reached.
 * - `configuration`: the component was set up wrongly (for example with an API key).
 */
export type RemoteBrowserErrorCode = 'denied' | 'upgrade' | 'rate_limited' | 'insecure' | 'unauthorized' | 'service_error' | 'network' | 'configuration';

export class RemoteBrowserClientError extends Error {
  override readonly name = 'RemoteBrowserClientError';
  constructor(
    readonly code: RemoteBrowserErrorCode,
    message: string,
    readonly details: { reason?: string; retryAfter?: number; httpStatus?: number; field?: string; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
  }

  get retryAfter(): number | undefined {
    return this.details.retryAfter;
  }

  /** The request field the message names (`"url: must be ..."` -> `url`, `"profile.id: ..."` -> `profile`). */
  get field(): string | undefined {
    return this.details.field;
  }
}

/** The create fields a `denied` message can name. */
const FIELDS = ['browser', 'url', 'language', 'layout', 'country', 'egress', 'shareLanguage', 'callbackUrl', 'idempotencyKey', 'profile'] as const;

export function fieldOf(message: string): string | undefined {
  // `profile.id: ...` names `profile`.
  const name = /^([A-Za-z]+)(?:\.[A-Za-z]+)?:/.exec(message)?.[1];
  return FIELDS.find((field) => field === name);
}
