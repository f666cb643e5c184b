// The proxy route's wire as plain data and types: its paths, its idempotency header and the
// answers the browser reads. Shared by the route (src/server) and its browser-side client
// (src/core), which must not pull in the schema library; reached through those two entries.
import type { CreateResponse, SessionEntry } from './v8.js';

/** The route's paths under its base path. */
export const PROXY_PATHS = {
  images: '/images',
  sessions: '/sessions',
  session: (handle: string) => `/sessions/${encodeURIComponent(handle)}`,
  /** A session's files (issue 23): the list, one file's download, an upload. */
  files: (handle: string) => `/sessions/${encodeURIComponent(handle)}/files`,
  fileDownload: (handle: string, name: string) => `/sessions/${encodeURIComponent(handle)}/files/download?name=${encodeURIComponent(name)}`,
  usage: '/usage',
} as const;

/** The header a browser sends with create so that a retried launch starts no second session. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** Reasons of the route's own `insecure` answers (next to the service's `rate_limited`). */
export const PROXY_INSECURE_REASONS = ['cross_site', 'content_type', 'rate_limited'] as const;

/** POST /sessions: the service's create answer with the session's handle instead of its vmId. */
export type ProxyCreateResponse = Omit<CreateResponse, 'vmId'> & { handle: string };

/** A session as the browser sees it: the service's entry with the handle in place of the masked id. */
export type ProxySession = Omit<SessionEntry, 'id'> & { handle: string };
