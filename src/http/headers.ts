// Response headers that the engine and the proxy route both send: the security set on every
// answer, and Retry-After on a rate-limited one. Web APIs only, so the proxy route can use it
// without the engine.

/** What a careful service sets on every response: no sniffing, no Referer onward, no caching. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Whole seconds to send as Retry-After for a rate-limiter-flexible refusal (from any copy of the
 * package: a customer may pass their own limiter), at least 1; null when `rejection` is no
 * refusal, i.e. the limiter itself failed (its store is down).
 */
export function retryAfterSeconds(rejection: unknown): number | null {
  const ms = (rejection as { msBeforeNext?: unknown } | null | undefined)?.msBeforeNext;
  return typeof ms === 'number' && Number.isFinite(ms) ? Math.max(1, Math.ceil(ms / 1000)) : null;
}
