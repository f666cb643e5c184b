// Limits enforced over time (decisions.md 1-6): every second, this node's running sessions (and
// the hibernated ones, which no node holds) get
// their byte meters written and their viewers' last sight, and those past their plan's maximum
// duration or idle timeout (or whose plan lapsed) are named to end; old idempotency records and
// v6 short URLs and session keys are forgotten.
import { IDEMPOTENCY_TTL_HOURS, V6_SHORT_URL_TTL_HOURS } from '../../protocol/index.js';
import type { Plan } from '../config.js';
import type { SessionRow, Store } from '../store/store.js';
import { V6Store } from '../store/v6-store.js';

export interface SweepContext {
  store: Store;
  nodeId: string;
  now: () => number;
  plan(id: string): Plan | undefined;
  /** Whether viewers watch the session now (a watched session is not idle). */
  watched(sessionId: string): boolean;
  /** Writes a running session's byte meters through `tx`. */
  flushBytes(row: SessionRow, tx: Store): Promise<void>;
}

/** One sweep: answers the sessions to end, each with why. */
export function sweep(context: SweepContext): Promise<Array<[string, string]>> {
  // One write transaction per sweep (not one per session), so API reads wait on it at most once.
  // It touches only this node's sessions: on a cluster it needs no lock another node waits for.
  return context.store.atomically((tx) => sweepRunning(context, tx), `rbk-sweep-${context.nodeId}`);
}

async function sweepRunning(context: SweepContext, tx: Store): Promise<Array<[string, string]>> {
  const now = context.now();
  const ending: Array<[string, string]> = [];
  // Hibernated sessions are nobody's (decisions.md 165): every node sweeps them; one ends each.
  for (const row of [...(await tx.sessionsWithStatus(['running'], context.nodeId)), ...(await tx.hibernatedSessions())]) {
    await context.flushBytes(row, tx);
    if (context.watched(row.id)) {
      await tx.updateSession(row.id, { last_viewer_at: now });
      row.last_viewer_at = now;
    }
    const subscription = (await tx.subscriptions(row.account_id)).find((s) => s.id === row.subscription_id);
    const plan = context.plan(subscription?.plan_id ?? '');
    if (!plan) {
      ending.push([row.id, 'the plan lapsed']);
      continue;
    }
    const since = row.running_at ?? row.created_at;
    if (now - since >= plan.max_session_minutes * 60_000) ending.push([row.id, 'maximum session duration reached']);
    else if (now - Math.max(since, row.last_viewer_at ?? 0) >= plan.idle_timeout_minutes * 60_000) ending.push([row.id, 'no viewer for the idle timeout']);
  }
  await tx.forgetIdempotencyBefore(now - IDEMPOTENCY_TTL_HOURS * 3_600_000);
  await new V6Store(tx).forgetBefore(now - V6_SHORT_URL_TTL_HOURS * 3_600_000, now);
  return ending;
}

/** Runs `work` every `intervalMs`, never two at once; a failed run is retried on the next tick. Answers the stop. */
export function every(intervalMs: number, work: () => Promise<unknown>): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    work().catch(() => undefined).finally(() => (running = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
