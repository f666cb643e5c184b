// The webhooks' state in the store (decisions.md 61): each account's receiver and secret, and the
// queue of events to deliver. The queue is shared by every node of a cluster: an event is queued
// once (its id is the event's), and a node claims what is due under the webhooks lock, so one
// node sends each event, and an account has only a few claimed at a time (decisions.md 76); a
// claim that its node never settles (the node died) runs out and the event is sent again by
// another node.
import type { Store } from '../store/store.js';

export interface WebhookRow {
  account_id: string;
  url: string;
  secret: string;
  created_at: number;
}

/** A claimed delivery: the event and where it goes, with the account's current secret. */
export interface DueDelivery {
  id: string;
  type: string;
  body: string;
  created_at: number;
  /** Attempts made before this one. */
  attempts: number;
  url: string;
  secret: string;
}

export interface DeliveryCounts {
  pending: number;
  delivered: number;
  failed: number;
}

const WEBHOOKS_LOCK = 'rbk-webhooks';
/** Delivered and abandoned events are kept this long, for the operator's look (`webhooks show`). */
export const DELIVERY_KEEP_MS = 7 * 86_400_000;

const DUE = 'd.delivered_at IS NULL AND d.failed_at IS NULL AND d.next_attempt_at <= ? AND (d.claimed_until IS NULL OR d.claimed_until < ?)';

export class WebhookStore {
  constructor(private readonly store: Store) {}

  webhook(accountId: string): Promise<WebhookRow | undefined> {
    return this.store.sql.get<WebhookRow>('SELECT * FROM webhooks WHERE account_id = ?', [accountId]);
  }

  /** Sets the account's receiver (replacing any, with the new secret); events still queued go to the new one. */
  async setWebhook(row: WebhookRow): Promise<void> {
    await this.store.sql.run(
      `INSERT INTO webhooks (account_id, url, secret, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (account_id) DO UPDATE SET url = excluded.url, secret = excluded.secret, created_at = excluded.created_at`,
      [row.account_id, row.url, row.secret, row.created_at],
    );
  }

  /** Removes the account's receiver and the events not yet delivered to it; false when it had none. */
  removeWebhook(accountId: string): Promise<boolean> {
    return this.store.atomically(async (tx) => {
      const removed = await tx.sql.run('DELETE FROM webhooks WHERE account_id = ?', [accountId]);
      await tx.sql.run('DELETE FROM webhook_deliveries WHERE account_id = ? AND delivered_at IS NULL AND failed_at IS NULL', [accountId]);
      return removed > 0;
    }, WEBHOOKS_LOCK);
  }

  /**
   * Queues an event for the account's receiver, if it has one and the event is not queued yet.
   * Answers whether it was queued now.
   */
  async enqueue(event: { id: string; accountId: string; type: string; body: string; at: number }): Promise<boolean> {
    const queued = await this.store.sql.run(
      `INSERT INTO webhook_deliveries (id, account_id, type, body, created_at, next_attempt_at)
       SELECT ?, account_id, ?, ?, ?, ? FROM webhooks WHERE account_id = ?
       ON CONFLICT (id) DO NOTHING`,
      [event.id, event.type, event.body, event.at, event.at, event.accountId],
    );
    return queued > 0;
  }

  /** Whether anything is due now (a cheap look before the claim takes the lock). */
  async anyDue(now: number): Promise<boolean> {
    return (await this.store.sql.get(`SELECT 1 AS due FROM webhook_deliveries d WHERE ${DUE} LIMIT 1`, [now, now])) !== undefined;
  }

  /**
   * Claims up to `limit` due deliveries for `nodeId` until `until`; each attempt is counted now.
   * An account has at most `perAccount` attempts under way across the cluster (its live claims
   * count), and the accounts with the fewest under way come first, so one receiver's backlog,
   * however slow, never takes the places another account's events need (decisions.md 76).
   */
  claim(nodeId: string, now: number, until: number, limit: number, perAccount: number): Promise<DueDelivery[]> {
    return this.store.atomically(async (tx) => {
      const rows = await tx.sql.all<DueDelivery>(
        `SELECT id, type, body, created_at, attempts, url, secret FROM (
           SELECT d.id, d.type, d.body, d.created_at, d.attempts, d.next_attempt_at, w.url, w.secret,
                  ROW_NUMBER() OVER (PARTITION BY d.account_id ORDER BY d.next_attempt_at, d.id) AS place,
                  COALESCE(u.under_way, 0) AS under_way
           FROM webhook_deliveries d
           JOIN webhooks w ON w.account_id = d.account_id
           LEFT JOIN (
             SELECT account_id, COUNT(*) AS under_way FROM webhook_deliveries
             WHERE delivered_at IS NULL AND failed_at IS NULL AND claimed_until >= ?
             GROUP BY account_id
           ) u ON u.account_id = d.account_id
           WHERE ${DUE}
         ) due
         WHERE place + under_way <= ?
         ORDER BY place + under_way, next_attempt_at
         LIMIT ?`,
        [now, now, now, perAccount, limit],
      );
      for (const row of rows) {
        await tx.sql.run('UPDATE webhook_deliveries SET claimed_by = ?, claimed_until = ?, attempts = attempts + 1 WHERE id = ?', [nodeId, until, row.id]);
      }
      return rows.map((row) => ({ ...row, attempts: Number(row.attempts), created_at: Number(row.created_at) }));
    }, WEBHOOKS_LOCK);
  }

  async delivered(id: string, nodeId: string, now: number): Promise<void> {
    await this.store.sql.run('UPDATE webhook_deliveries SET delivered_at = ?, claimed_by = NULL, claimed_until = NULL, last_error = NULL WHERE id = ? AND claimed_by = ?', [now, id, nodeId]);
  }

  /** An attempt failed: try again at `retryAt`, or give up (null). */
  async attemptFailed(id: string, nodeId: string, error: string, retryAt: number | null, now: number): Promise<void> {
    await this.store.sql.run(
      'UPDATE webhook_deliveries SET claimed_by = NULL, claimed_until = NULL, last_error = ?, next_attempt_at = ?, failed_at = ? WHERE id = ? AND claimed_by = ?',
      [error.slice(0, 500), retryAt ?? now, retryAt === null ? now : null, id, nodeId],
    );
  }

  /** The account's queue: how many events wait, were delivered, were given up; and the last error. */
  async counts(accountId: string): Promise<DeliveryCounts & { lastError: string | null }> {
    const row = await this.store.sql.get<{ pending: number; delivered: number; failed: number }>(
      `SELECT COALESCE(SUM(CASE WHEN delivered_at IS NULL AND failed_at IS NULL THEN 1 ELSE 0 END), 0) AS pending,
              COALESCE(SUM(CASE WHEN delivered_at IS NOT NULL THEN 1 ELSE 0 END), 0) AS delivered,
              COALESCE(SUM(CASE WHEN failed_at IS NOT NULL THEN 1 ELSE 0 END), 0) AS failed
       FROM webhook_deliveries WHERE account_id = ?`,
      [accountId],
    );
    const last = await this.store.sql.get<{ last_error: string }>(
      'SELECT last_error FROM webhook_deliveries WHERE account_id = ? AND last_error IS NOT NULL ORDER BY next_attempt_at DESC LIMIT 1',
      [accountId],
    );
    return { pending: Number(row?.pending ?? 0), delivered: Number(row?.delivered ?? 0), failed: Number(row?.failed ?? 0), lastError: last?.last_error ?? null };
  }

  /** Events waiting on the whole service (a gauge of the metrics). */
  async pendingCount(): Promise<number> {
    const row = await this.store.sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE delivered_at IS NULL AND failed_at IS NULL');
    return Number(row?.n ?? 0);
  }

  /** Forgets delivered and abandoned events older than `cutoff`. */
  async forgetSettledBefore(cutoff: number): Promise<void> {
    await this.store.sql.run('DELETE FROM webhook_deliveries WHERE (delivered_at IS NOT NULL OR failed_at IS NOT NULL) AND created_at < ?', [cutoff]);
  }
}
