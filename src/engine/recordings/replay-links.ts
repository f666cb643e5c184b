// Replay links (issue 35, decisions.md 110): a signed, expiring address on the viewer site,
// `<share base>/replay/<token>`, to watch one session's recording without an API key. The token is
// a session token signed for `replay` (sessions/session-tokens.ts) under the store's replay secret,
// so any node of a cluster checks it, and nothing is stored per link: a link ends at its expiry,
// which is never later than the day its recording is removed, and removing the recording ends
// every link to it at once (there is nothing left to show).
import { REPLAY_LINK_DEFAULT_S, type RecordingLinkResponse } from '../../protocol/index.js';
import { checkSessionToken, sessionToken } from '../sessions/session-tokens.js';
import type { SessionRow, Store } from '../store/store.js';
import type { RecordingsAccess } from './recordings.js';

const DAY_MS = 86_400_000;

export interface ReplayLinksOptions {
  /** The replay secret (the store's `replay_link_secret`, the same on every node). */
  secret: string;
  /** Where viewers reach the viewer site (the share links' base). */
  shareBase: () => string;
  now: () => number;
  store: Pick<Store, 'session'>;
  /** The recordings, wherever each is kept (a cluster's node link dispatches to the keeper). */
  recordings: RecordingsAccess;
  /** Days a recording is kept after its session ended (its plan's, else the service's). */
  retentionDays(row: SessionRow): Promise<number>;
}

/** Why a token opens nothing: not one the engine made (or cut), or past its expiry. */
export type ReplayRefusal = 'invalid' | 'expired';

export class ReplayLinks {
  constructor(private readonly options: ReplayLinksOptions) {}

  /**
   * A link to the session's recording, good for `expiresInS` (a week by default) but never past
   * the day the recording is removed; refused as the recording's read is (not recorded, removed,
   * its keeper away).
   */
  async mint(row: SessionRow, expiresInS = REPLAY_LINK_DEFAULT_S): Promise<RecordingLinkResponse | { status: 'denied' | 'error'; message: string }> {
    const read = await this.options.recordings.read(row);
    if (read.status !== 'ok') return read;
    const now = this.options.now();
    // A session still running keeps its recording at least its days from now.
    const removedAt = (row.ended_at ?? now) + (await this.options.retentionDays(row)) * DAY_MS;
    const expires = Math.min(now + expiresInS * 1000, removedAt);
    if (expires <= now) return { status: 'denied', message: 'id: this recording\'s days are over; it is about to be removed' };
    const token = sessionToken(this.options.secret, 'replay', row.id, expires);
    return { status: 'ok', url: `${this.options.shareBase().replace(/\/+$/, '')}/replay/${token}`, expires: new Date(expires).toISOString() };
  }

  /** The recorded session a token opens, or why none. */
  async open(token: string): Promise<{ row: SessionRow } | { refused: ReplayRefusal }> {
    const check = checkSessionToken(this.options.secret, 'replay', token, this.options.now());
    if (!check.ok) return { refused: check.reason === 'expired' ? 'expired' : 'invalid' };
    const row = await this.options.store.session(check.sessionId);
    return row?.recorded ? { row } : { refused: 'invalid' };
  }
}
