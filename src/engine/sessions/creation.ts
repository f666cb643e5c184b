// The create transaction: the idempotency look-up, the quota re-read, the node placement, the
// session's row and the idempotency record, in one transaction no other node interleaves with
// (store.ts: atomically), so two requests never both take the last slot.
import { createHash, randomBytes } from 'node:crypto';
import { IDEMPOTENCY_TTL_HOURS, uniqueOrigins, type CreateRequest, type SessionMeters, type ShareLanguage } from '../../protocol/index.js';
import { currentCycle, formatDay } from '../../protocol/cycle.js';
import { sessionMeters, totalMeters, withNewSession } from '../accounts/meters.js';
import type { AccountUsage } from '../accounts/usage.js';
import type { SqlConnection } from '../store/database.js';
import type { AccountRow, SessionRow, Store } from '../store/store.js';
import { choosePool, type Admitted } from './admission.js';
import type { CreateOutcome, CreateTerms, Created } from './outcomes.js';
import { shareLinkFor, shareLinkHash, shareLinkId } from './share-links.js';

export interface CreationContext {
  store: Store;
  secret: string;
  shareBase: () => string;
  /** The time of the create. */
  at: number;
  /** The account's pools and their meters, read through the transaction's store. */
  usage: Pick<AccountUsage, 'pools'>;
  /** The node the session runs on (placement.ts), or null when none has room. */
  place(tx: Store): Promise<string | null>;
  /** The saved profile it starts on, taken for it in this transaction only when free (decisions.md 86). */
  profile?: { id: string; save: boolean; tabs: boolean; claim(tx: SqlConnection, sessionId: string, now: number): Promise<boolean> };
}

/**
 * The first answer as the idempotency table keeps it: the shape engines have always stored, so
 * records written before this module (and by older nodes of a cluster) are read the same.
 */
interface StoredAnswer {
  status: 'ok';
  vmId: string;
  quota: SessionMeters;
  location_applied?: boolean;
  location_reason?: 'unavailable';
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().filter((k) => (value as Record<string, unknown>)[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Creates the session's row; answers the outcome, and the row when one was made now. */
export async function createSession(
  context: CreationContext,
  account: AccountRow,
  request: CreateRequest,
  admitted: Admitted,
  terms: CreateTerms,
): Promise<{ outcome: CreateOutcome; session?: SessionRow }> {
  const { image, language, firstUrl, exit } = admitted;
  const now = context.at;
  const layout = request.layout ?? account.layout ?? 'us';
  const shareLanguage = (request.shareLanguage ?? 'en') as ShareLanguage;
  const linkLanguage = request.shareLanguage ?? terms.linkLanguageByDefault;
  const requestHash = createHash('sha256').update(canonical({ ...request, idempotencyKey: undefined, version: terms.idempotencyScope })).digest('hex');
  const candidates = admitted.pools.map((p) => p.subscription.id);
  const created = (stored: StoredAnswer): Created => ({
    status: 'ok',
    sessionId: stored.vmId,
    shareLink: shareLinkFor(context.secret, context.shareBase(), stored.vmId, linkLanguage),
    quota: stored.quota,
    locationApplied: stored.location_applied ?? true,
  });

  return context.store.atomically(async (tx) => {
    if (request.idempotencyKey !== undefined) {
      const earlier = await tx.idempotency(account.id, request.idempotencyKey, now - IDEMPOTENCY_TTL_HOURS * 3_600_000);
      if (earlier) {
        if (earlier.request_hash !== requestHash) return { outcome: { status: 'denied', field: 'idempotencyKey', reason: 'idempotency-key-reused' } };
        return { outcome: created(JSON.parse(earlier.response) as StoredAnswer) };
      }
    }
    // Re-read inside the transaction: the pools' counts must not move between check and insert.
    const pools = await context.usage.pools(account, tx);
    const pool = choosePool(pools.filter((p) => candidates.includes(p.subscription.id)));
    if ('reason' in pool) return { outcome: pool };
    // Placement, decided with the quota.
    const node = await context.place(tx);
    if (!node) return { outcome: { status: 'error', reason: 'no-node' } };
    const id = randomBytes(16).toString('hex');
    if (context.profile && !(await context.profile.claim(tx.sql, id, now))) {
      return { outcome: { status: 'denied', reason: 'profile', message: 'profile.id: a session runs on this profile now (one session at a time may use a profile); try again once it has ended' } };
    }
    const row: SessionRow = {
      id,
      account_id: account.id,
      subscription_id: pool.subscription.id,
      status: 'starting',
      browser: image.id,
      browser_name: image.name,
      url: firstUrl ?? null,
      language,
      layout,
      recorded: request.record === true,
      ...(admitted.window === 'app' ? { app_window: true } : {}),
      ...(request.automation === true ? { automation: true } : {}),
      control_mode: request.control ?? 'shared',
      country: request.country ?? null,
      exit_city: exit.city?.code ?? null,
      egress: request.egress ?? null,
      share_language: shareLanguage,
      callback_url: request.callbackUrl ?? null,
      link_hash: shareLinkHash(shareLinkId(context.secret, id)),
      view_link_hash: null,
      viewers: 0,
      counted: true,
      ever_ran: false,
      created_at: now,
      running_at: null,
      ended_at: null,
      last_viewer_at: null,
      egress_bytes: 0,
      residential_bytes: 0,
      runtime_id: null,
      end_reason: null,
      location_applied: request.country === undefined ? null : exit.applied,
      location_reason: exit.applied ? null : 'unavailable',
      node_id: node,
      // Only a narrowed session has its own list (issue 44); without one the account's applies.
      ...(request.embed ? { embed_origins: JSON.stringify(uniqueOrigins(request.embed.origins)) } : {}),
      ...(context.profile ? { profile_id: context.profile.id, profile_save: context.profile.save, profile_tabs: context.profile.tabs } : {}),
    };
    await tx.insertSession(row);
    const stored: StoredAnswer = {
      status: 'ok',
      vmId: id,
      // The pools as read above with this session added: nothing else writes while the lock is held,
      // so reading them again (a round trip per pool on Postgres, under the lock) would say the same.
      quota: sessionMeters(totalMeters(pools.map((p) => (p === pool ? withNewSession(p, now) : p.meters)), currentCycle(formatDay(new Date(now)), now))),
      // Only terms that may start without the location say whether it was applied.
      ...(terms.exitUnavailable === 'default-connection' ? { location_applied: exit.applied, ...(exit.applied ? {} : { location_reason: 'unavailable' as const }) } : {}),
    };
    if (request.idempotencyKey !== undefined) {
      await tx.rememberIdempotency(account.id, request.idempotencyKey, requestHash, JSON.stringify(stored), now);
    }
    return { outcome: created(stored), session: row };
  });
}
