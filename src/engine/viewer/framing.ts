// Which sites may frame a share page (issue 44, decisions.md 134), and the headers that say so:
// the account's origins, narrowed by the session's own list, each checked again as it goes into
// `frame-ancestors` (a store written by hand or by an older engine never widens framing). With
// none, the page is framed only by the viewer site itself, as before.
import { embedOriginProblem, framingOrigins } from '../../protocol/index.js';
import { parseOrigins, type SessionRow, type Store } from '../store/store.js';

/** The origins that may frame `row`'s share and view-only links now. */
export async function frameOriginsOf(store: Pick<Store, 'embedOrigins'>, row: Pick<SessionRow, 'account_id' | 'embed_origins'>): Promise<string[]> {
  const own = row.embed_origins === null || row.embed_origins === undefined ? null : parseOrigins(row.embed_origins);
  return framingOrigins(await store.embedOrigins(row.account_id), own).filter((origin) => embedOriginProblem(origin) === null);
}

/**
 * The page's `Content-Security-Policy` (`policy` with its frame-ancestors) and `X-Frame-Options`:
 * exactly `origins` and no X-Frame-Options (which cannot name another site) when there are
 * any; else `'self'` and SAMEORIGIN.
 */
export function framingHeaders(policy: string, origins: readonly string[]): Record<string, string> {
  const allowed = origins.filter((origin) => embedOriginProblem(origin) === null);
  if (allowed.length === 0) return { 'content-security-policy': `${policy}; frame-ancestors 'self'`, 'x-frame-options': 'SAMEORIGIN' };
  return { 'content-security-policy': `${policy}; frame-ancestors ${allowed.join(' ')}` };
}
