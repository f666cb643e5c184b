// The proxy route's paths and headers as plain data, shared with the browser-side client
// (which must not pull in the schema library).
/** The route's paths under its base path. */
export const PROXY_PATHS = {
  images: '/images',
  sessions: '/sessions',
  session: (handle: string) => `/sessions/${encodeURIComponent(handle)}`,
  usage: '/usage',
} as const;

/** The header a browser sends with create so that a retried launch starts no second session. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** Reasons of the route's own `insecure` answers (next to the service's `rate_limited`). */
export const PROXY_INSECURE_REASONS = ['cross_site', 'content_type', 'rate_limited'] as const;
