// Session webhooks (decisions.md 61): an account's receiver (set, read, removed through the v8
// interface and the operator CLI), the events its sessions make, and their delivery: each node
// claims what is due from the shared queue (webhook-store.ts), POSTs it signed, and on a failure
// tries again later (the first retry after `firstRetryMs`, each next three times later, at most an
// hour apart) until `retryForMs` after the event; then the event is given up. Each attempt runs on
// its own under a hard deadline (`timeoutMs`, the whole attempt), and one account has only a few
// under way at a time, so no receiver delays another account's events (decisions.md 76).
import { randomBytes } from 'node:crypto';
import type { Webhook, WebhookEventType } from '../../protocol/index.js';
import { WEBHOOK_SIGNATURE_HEADER } from '../../protocol/index.js';
import type { EngineConfig } from '../config.js';
import type { Logger } from '../operations/logger.js';
import type { EngineMetrics } from '../operations/metrics.js';
import { parseAllowRanges } from '../runtime/index.js';
import type { SessionRow, Store } from '../store/store.js';
import { sessionEvent, signWebhook } from './events.js';
import { attemptDeadline, beforeDeadline, checkWebhookTarget, postWebhook, type WebhookTargetSettings } from './target.js';
import { DELIVERY_KEEP_MS, WebhookStore, type DueDelivery, type WebhookRow } from './webhook-store.js';

export type WebhookOutcome = { status: 'ok'; webhook: Webhook | null } | { status: 'denied'; message: string };

export interface WebhooksOptions {
  store: Store;
  settings: EngineConfig['webhooks'];
  nodeId: string;
  now: () => number;
  logger: Logger;
  metrics?: EngineMetrics | null;
  /** The resolver for receivers' names (tests answer names themselves). */
  lookup?: WebhookTargetSettings['lookup'];
}

/** How often a node looks for due events (events of this node's sessions are sent at once). */
const POLL_MS = 1000;
/** A claim holds for the attempt's deadline and this much more, for its outcome to be written. */
const CLAIM_SLACK_MS = 30_000;
/** Attempts under way on one node at most (each ends by its deadline). */
const NODE_ATTEMPTS = 32;
/** Attempts under way for one account at most, across the cluster: its receiver's share. */
export const ACCOUNT_ATTEMPTS = 4;
const MAX_GAP_MS = 3_600_000;

function view(row: WebhookRow, secret?: string): Webhook {
  return { url: row.url, created: new Date(row.created_at).toISOString(), ...(secret ? { secret } : {}) };
}

/** When the attempt after `attempts` failed ones goes, or null when the event is given up. */
export function nextAttemptAt(settings: Pick<EngineConfig['webhooks'], 'firstRetryMs' | 'retryForMs'>, createdAt: number, attempts: number, now: number): number | null {
  const gap = Math.min(settings.firstRetryMs * 3 ** Math.max(0, attempts - 1), MAX_GAP_MS);
  const at = now + gap;
  return at > createdAt + settings.retryForMs ? null : at;
}

export class SessionWebhooks {
  readonly queue: WebhookStore;
  private readonly target: WebhookTargetSettings;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** This node's attempts under way: each settles on its own, and its end looks for more. */
  private readonly attempts = new Set<Promise<void>>();
  private again = false;
  private closed = false;
  private lastCleanup = 0;

  constructor(private readonly options: WebhooksOptions) {
    this.queue = new WebhookStore(options.store);
    const { allow, allowHttp, timeoutMs } = options.settings;
    this.target = { allow: parseAllowRanges(allow), allowHttp, timeoutMs, ...(options.lookup ? { lookup: options.lookup } : {}) };
  }

  // The account's receiver -----------------------------------------------------------------------

  async get(accountId: string): Promise<WebhookOutcome> {
    const row = await this.queue.webhook(accountId);
    return { status: 'ok', webhook: row ? view(row) : null };
  }

  /** Sets the receiver after checking where it leads; answers it with its new secret (shown this once). */
  async set(accountId: string, url: string): Promise<WebhookOutcome> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { status: 'denied', message: 'url: must be an https address' };
    }
    const verdict = await checkWebhookTarget(parsed, this.target);
    if (!verdict.ok) return { status: 'denied', message: verdict.message };
    const row: WebhookRow = { account_id: accountId, url: parsed.href, secret: `whsec_${randomBytes(32).toString('base64url')}`, created_at: this.options.now() };
    await this.queue.setWebhook(row);
    this.options.logger.info({ account: accountId, host: parsed.host }, 'webhook set');
    return { status: 'ok', webhook: view(row, row.secret) };
  }

  async remove(accountId: string): Promise<WebhookOutcome> {
    if (await this.queue.removeWebhook(accountId)) this.options.logger.info({ account: accountId }, 'webhook removed');
    return { status: 'ok', webhook: null };
  }

  // Events --------------------------------------------------------------------------------------

  /** Queues the event of a session's move (or its n-th standby or resume: `ordinal`) for its account's receiver (none: nothing happens). */
  async queueEvent(row: SessionRow, type: WebhookEventType, ordinal?: number): Promise<void> {
    const at = this.options.now();
    const event = sessionEvent(row, type, at, ordinal);
    if (await this.queue.enqueue({ id: event.id, accountId: row.account_id, type, body: JSON.stringify(event), at })) this.kick();
  }

  // Delivery ------------------------------------------------------------------------------------

  start(): void {
    this.timer = setInterval(() => this.kick(), POLL_MS);
    this.timer.unref();
  }

  /** Looks for due events now (again after the current round, if one runs). */
  kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.round()
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'webhook delivery round failed; the next one tries again'))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /**
   * Claims what is due, as many as this node has room for, and starts each attempt without
   * waiting for it: a round lasts as long as the claim, never as long as a receiver takes.
   */
  private async round(): Promise<void> {
    const { nodeId, now, logger } = this.options;
    const at = now();
    if (at - this.lastCleanup > 3_600_000) {
      this.lastCleanup = at;
      await this.queue.forgetSettledBefore(at - DELIVERY_KEEP_MS);
    }
    const room = NODE_ATTEMPTS - this.attempts.size;
    if (room <= 0) return;
    if (!(await this.queue.anyDue(at))) return;
    const claimed = await this.queue.claim(nodeId, at, at + this.target.timeoutMs + CLAIM_SLACK_MS, room, ACCOUNT_ATTEMPTS);
    for (const delivery of claimed) {
      const attempt: Promise<void> = this.deliver(delivery)
        .catch((error: unknown) => logger.warn({ err: error, event: delivery.id }, 'webhook attempt could not be recorded; its claim runs out and it is sent again'))
        .finally(() => {
          this.attempts.delete(attempt);
          // Its place is free: the account's next event, or another account's, may go now.
          this.kick();
        });
      this.attempts.add(attempt);
    }
    if (claimed.length === room) this.again = true;
  }

  private async deliver(delivery: DueDelivery): Promise<void> {
    const { nodeId, now, logger, metrics } = this.options;
    const fields = { event: delivery.id, type: delivery.type, attempt: delivery.attempts + 1 };
    let failure: string;
    let refused = false;
    const deadline = attemptDeadline(this.target.timeoutMs);
    try {
      const url = new URL(delivery.url);
      const verdict = await beforeDeadline(checkWebhookTarget(url, this.target), deadline.signal);
      if (!verdict.ok) {
        refused = verdict.refused;
        throw new Error(verdict.message.replace(/^url: /, ''));
      }
      const seconds = Math.floor(now() / 1000);
      const status = await postWebhook(url, verdict.addresses, { [WEBHOOK_SIGNATURE_HEADER]: signWebhook(delivery.secret, delivery.body, seconds) }, delivery.body, deadline.signal);
      if (status >= 200 && status < 300) {
        await this.queue.delivered(delivery.id, nodeId, now());
        metrics?.webhookDeliveries.inc({ outcome: 'delivered' });
        logger.info({ ...fields, status }, 'webhook delivered');
        return;
      }
      failure = `the receiver answered HTTP ${status}`;
    } catch (error) {
      failure = (error as Error).message;
    } finally {
      deadline.clear();
    }
    const retryAt = nextAttemptAt(this.options.settings, delivery.created_at, delivery.attempts + 1, now());
    await this.queue.attemptFailed(delivery.id, nodeId, failure, retryAt, now());
    metrics?.webhookDeliveries.inc({ outcome: refused ? 'refused' : retryAt === null ? 'abandoned' : 'retry' });
    if (retryAt === null) logger.warn({ ...fields, reason: failure }, 'webhook given up');
    else logger.info({ ...fields, reason: failure, retryInMs: retryAt - now() }, 'webhook attempt failed; retrying later');
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.running;
    // Attempts under way are let finish (each by its deadline), so an answer taken is recorded.
    await Promise.all(this.attempts);
  }
}
