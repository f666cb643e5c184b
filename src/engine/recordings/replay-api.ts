// The replay API of the viewer site (decisions.md 110-111), keyed by a replay link's token: the
// recording's description (`GET /replay/<token>/recording`, the proxy route's answer shape, so
// <SessionReplay> reads it) and its MP4 (`GET /replay/<token>/media`, byte ranges passed). The
// token is the credential: no API key. A token that opens nothing (forged, cut, expired) counts
// against its address's look-up limit, as an unknown share link does; a valid one never counts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { retryAfterSeconds, SECURITY_HEADERS } from '../../http/headers.js';
import { sendJson } from '../http/respond.js';
import type { LimitSettings } from '../http/limits.js';
import type { RecordingsAccess } from './recordings.js';
import type { ReplayLinks, ReplayRefusal } from './replay-links.js';
import type { SessionRow } from '../store/store.js';

/** `/replay/<token>` (the page) and its API; a token is ASCII without escapes, so the path is taken as it came. */
export const REPLAY_PATH = /^\/replay\/([A-Za-z0-9_.-]{1,200})(?:\/(recording|media))?$/;

export interface ReplayApiOptions {
  links: ReplayLinks;
  recordings: RecordingsAccess;
  /** Look-ups of tokens that open nothing, per client address per minute. */
  lookupsPerMinute?: number;
  clientAddress: (request: IncomingMessage) => string;
  limiter: (settings: LimitSettings) => RateLimiterAbstract;
  onRateLimited?: () => void;
}

/** What a replay page's HTTP status says: 200 the recording plays, 404 no such link, 410 expired or removed, 429 with the wait. */
export type ReplayStatus = 200 | 404 | 410 | { limited: number };

// Like the share API, read by a page that may be embedded anywhere: no cookies, the token is the key.
const CORS = { 'access-control-allow-origin': '*' };

/** The refusals a replay link's holder may read: nothing about a session the token does not open. */
const REFUSALS: Record<ReplayRefusal | 'removed', { status: number; message: string }> = {
  invalid: { status: 404, message: 'this replay link is not valid: check that it was copied whole' },
  expired: { status: 410, message: 'this replay link has expired; ask whoever shared it for a new one' },
  removed: { status: 410, message: 'this recording was removed' },
};

export function createReplayApi(options: ReplayApiOptions) {
  const lookups = options.limiter({ points: options.lookupsPerMinute ?? 120, duration: 60, keyPrefix: 'replay' });

  /** The token's session, or its refusal (counted against the address), or the wait when the address is limited. */
  async function lookUp(request: IncomingMessage, token: string): Promise<{ row: SessionRow } | { refused: ReplayRefusal } | { limited: number }> {
    const opened = await options.links.open(token);
    if ('row' in opened) return opened;
    try {
      await lookups.consume(options.clientAddress(request));
      return opened;
    } catch (rejection) {
      return { limited: retryAfterSeconds(rejection) ?? 60 };
    }
  }

  /** The replay page's status for its token (the viewer site asks), under the same limit. */
  async function pageStatus(request: IncomingMessage, token: string): Promise<ReplayStatus> {
    const found = await lookUp(request, token);
    if ('limited' in found) return found;
    if ('refused' in found) return REFUSALS[found.refused].status as 404 | 410;
    const read = await options.recordings.read(found.row);
    return read.status === 'ok' ? 200 : /removed/.test(read.message) ? 410 : read.status === 'error' ? 200 : 404;
  }

  const refuse = (response: ServerResponse, reason: keyof typeof REFUSALS) =>
    sendJson(response, { status: 'denied', reason, message: REFUSALS[reason].message }, REFUSALS[reason].status, { ...CORS, 'cache-control': 'no-store' });

  /** Answers `/replay/<token>/recording` and `/replay/<token>/media`; false for any other path. */
  async function handle(request: IncomingMessage, response: ServerResponse, url: URL): Promise<boolean> {
    const path = REPLAY_PATH.exec(url.pathname);
    if (!path?.[2]) return false;
    if (request.method === 'OPTIONS') {
      response.writeHead(204, { ...SECURITY_HEADERS, ...CORS, 'access-control-allow-methods': 'GET, HEAD', 'access-control-allow-headers': 'range', 'access-control-max-age': '600' }).end();
      return true;
    }
    // HEAD as GET: Node's server sends the headers only (players and link checkers ask HEAD first).
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      sendJson(response, { status: 'denied', message: `use GET for /replay/<token>/${path[2]}` }, 405, { ...CORS, allow: 'GET, HEAD' });
      return true;
    }
    const found = await lookUp(request, path[1]!);
    if ('limited' in found) {
      options.onRateLimited?.();
      sendJson(response, { status: 'insecure', reason: 'rate_limited', message: `too many replay link look-ups; retry after ${found.limited} s` }, 429, { ...CORS, 'retry-after': String(found.limited) });
      return true;
    }
    if ('refused' in found) return refuse(response, found.refused), true;
    if (path[2] === 'media') {
      await options.recordings.sendMedia(request.headers.range, response, found.row);
      return true;
    }
    const read = await options.recordings.read(found.row);
    if (read.status === 'ok') sendJson(response, read, 200, { ...CORS, 'cache-control': 'no-store' });
    else if (/removed/.test(read.message)) refuse(response, 'removed');
    // The keeper of the recording is away (a cluster): try again.
    else if (read.status === 'error') sendJson(response, { status: 'error', message: read.message }, 503, { ...CORS, 'retry-after': '10' });
    else refuse(response, 'invalid');
    return true;
  }

  return { handle, pageStatus };
}
