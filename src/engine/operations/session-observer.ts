// What follows each session move this node makes (decisions.md 60, 61): one log line (running with
// its start time, ended with its reason; at debug level also the start's trace, issue 37), the
// metrics of starts and ends, and the account's
// webhook event; the same for each standby and resume (issue 46). Also the runtime's refusals (a target the session may not reach), logged with
// their category and host, never the address a name resolved to.
import type { NodeRuntime } from '../sessions/node-runtime.js';
import type { SessionMove, SessionService } from '../sessions/service.js';
import type { WebhookEventType } from '../../protocol/index.js';
import { endCategory } from '../sessions/end-reasons.js';
import { eventTypeOf } from '../sessions/lifecycle.js';
import type { SessionRow, Store } from '../store/store.js';
import type { Logger } from './logger.js';
import type { EngineMetrics } from './metrics.js';

export interface SessionObserverOptions {
  sessions: SessionService;
  runtime: Pick<NodeRuntime, 'get' | 'on'>;
  store: Store;
  logger: Logger;
  metrics: EngineMetrics | null;
  /** The account's webhook event is queued (webhooks/webhooks.ts SessionWebhooks); `ordinal`: the n-th standby or resume. */
  webhooks: { queueEvent(row: SessionRow, type: WebhookEventType, ordinal?: number): Promise<unknown> };
}

/** Follows the service's moves until the engine closes; answers when every follow-up begun has ended. */
export function observeSessions(options: SessionObserverOptions): { settled(): Promise<void> } {
  const { sessions, runtime, store, logger, metrics, webhooks } = options;
  const pending = new Set<Promise<void>>();

  const follow = async (move: SessionMove): Promise<void> => {
    const type = eventTypeOf(move.to, move.cause);
    if (!type) return;
    const row = await store.session(move.id);
    if (!row) return;
    const fields = { vmId: row.id, account: row.account_id, browser: row.browser };
    if (type === 'session.running') {
      const start = (row.runtime_id && runtime.get(row.runtime_id)?.start) || 'cold';
      const seconds = Math.max(0, ((row.running_at ?? row.created_at) - row.created_at) / 1000);
      metrics?.sessionStarts.inc({ browser: row.browser, start });
      metrics?.startSeconds.observe({ browser: row.browser, start }, seconds);
      logger.info({ ...fields, start, startMs: Math.round(seconds * 1000) }, 'session running');
    } else {
      const category = endCategory(row.status, row.end_reason);
      metrics?.sessionEnds.inc({ browser: row.browser, category });
      const line = { ...fields, status: row.status, category, reason: row.end_reason };
      if (type === 'session.error') logger.warn(line, 'session failed to start');
      else logger.info(line, 'session ended');
    }
    await webhooks.queueEvent(row, type);
  };

  sessions.on('moved', (move) => {
    // Where the start's time went (sessions/start-trace.ts): at debug level, at once, before the
    // follow-up reads the row.
    if (move.trace) logger.debug({ vmId: move.id, ...move.trace }, 'session start trace');
    const work = follow(move)
      .catch((error: unknown) => logger.warn({ err: error, vmId: move.id, to: move.to }, 'a session event could not be logged or queued for its webhook'))
      .finally(() => pending.delete(work));
    pending.add(work);
  });

  // Standby and its end (issue 46): one line each and the account's event; the n-th standby and
  // the wake that ends it share n.
  const followStandby = async ({ id, asleep, ordinal, hibernated }: { id: string; asleep: boolean; ordinal: number; hibernated?: boolean }): Promise<void> => {
    const row = await store.session(id);
    if (!row || row.status !== 'running') return;
    logger.info({ vmId: row.id, account: row.account_id, standby: ordinal }, asleep ? 'session in standby' : hibernated ? 'session resumed from hibernation' : 'session resumed from standby');
    await webhooks.queueEvent(row, asleep ? 'session.standby' : 'session.resumed', ordinal);
  };
  sessions.on('standby', (change) => {
    const work = followStandby(change)
      .catch((error: unknown) => logger.warn({ err: error, vmId: change.id }, 'a standby event could not be logged or queued for its webhook'))
      .finally(() => pending.delete(work));
    pending.add(work);
  });

  // Hibernation (decisions.md 168): a log line; its resume is told as standby's end (session.resumed).
  sessions.on('hibernated', ({ id, ordinal }) => {
    const work = store.session(id)
      .then((row) => void (row && logger.info({ vmId: row.id, account: row.account_id, standby: ordinal }, 'session hibernated')))
      .catch(() => undefined)
      .finally(() => pending.delete(work));
    pending.add(work);
  });

  runtime.on('event', (event) => {
    if (event.ends) return;
    const vmId = sessions.sessionOfRuntime(event.sessionId);
    // How a session started is on its `running` line (start kind and ms), with its id.
    if (event.kind === 'started') return;
    // What tabs do is a recording's timeline (recordings/), not the operator's log.
    if (event.kind === 'page') return;
    if (event.kind === 'refused') logger.info({ vmId, ...event.detail }, 'session target refused');
    else logger.info({ vmId, kind: event.kind, reason: event.message }, 'session notice');
  });

  return {
    async settled() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}
