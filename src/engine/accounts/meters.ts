// Usage meters: per pool (one subscription) and totals over an account's pools (decisions.md 11).
import type { Pool, SessionMeters, UsageMeters } from '../../protocol/index.js';
import type { Plan } from '../config.js';
import type { Store, SubscriptionRow } from '../store/store.js';
import { currentCycle, type Cycle } from '../../protocol/cycle.js';

export interface PoolState {
  subscription: SubscriptionRow;
  plan: Plan;
  cycle: Cycle;
  meters: Pool;
}

export async function poolState(store: Store, subscription: SubscriptionRow, plan: Plan, now: number): Promise<PoolState> {
  const cycle = currentCycle(subscription.cycle_anchor, now);
  // Hibernated sessions fill the running count unless the plan says otherwise (decisions.md 167).
  const usage = await store.poolUsage(subscription.id, cycle.startMs, cycle.endMs, plan.hibernated_count_running !== false);
  const cycleRemaining = plan.cycle_session_limit === null ? null : Math.max(0, plan.cycle_session_limit - usage.cycleSessions);
  return {
    subscription,
    plan,
    cycle,
    meters: {
      subscription_id: subscription.id,
      plan_id: plan.id,
      plan_name: plan.name,
      cycle_start: cycle.start,
      cycle_end: cycle.end,
      cycle_session_limit: plan.cycle_session_limit,
      cycle_sessions_used: usage.cycleSessions,
      cycle_sessions_remaining: cycleRemaining,
      running_session_limit: plan.running_session_limit,
      running_sessions_used: usage.running,
      running_sessions_remaining: Math.max(0, plan.running_session_limit - usage.running),
      residential_cycle_mb_limit: plan.residential_cycle_mb_limit,
      residential_bytes_used_cycle: usage.residentialBytes,
    },
  };
}

/**
 * A pool's meters with one more session created at `at` (starting, so running; counted in the
 * cycle when `at` falls in it): what the create transaction answers without reading them again.
 */
export function withNewSession(pool: PoolState, at: number): Pool {
  const { meters, cycle } = pool;
  const inCycle = at >= cycle.startMs && at < cycle.endMs ? 1 : 0;
  const running = meters.running_sessions_used + 1;
  const cycleUsed = meters.cycle_sessions_used + inCycle;
  return {
    ...meters,
    running_sessions_used: running,
    running_sessions_remaining: Math.max(0, meters.running_session_limit - running),
    cycle_sessions_used: cycleUsed,
    cycle_sessions_remaining: meters.cycle_session_limit === null ? null : Math.max(0, meters.cycle_session_limit - cycleUsed),
  };
}

const sumOrNull = (values: Array<number | null>): number | null =>
  values.some((v) => v === null) ? null : values.reduce<number>((a, b) => a + (b as number), 0);
const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);

/**
 * Totals over pools: sums, `null` when any pool's value is `null`. With no pool, zeros, and
 * `noPoolCycle` (a cycle that starts today) gives the dates.
 */
export function totalMeters(pools: Pool[], noPoolCycle: Cycle): UsageMeters {
  return {
    cycle_session_limit: pools.length ? sumOrNull(pools.map((p) => p.cycle_session_limit)) : 0,
    cycle_sessions_used: sum(pools.map((p) => p.cycle_sessions_used)),
    cycle_sessions_remaining: pools.length ? sumOrNull(pools.map((p) => p.cycle_sessions_remaining)) : 0,
    running_session_limit: sum(pools.map((p) => p.running_session_limit)),
    running_sessions_used: sum(pools.map((p) => p.running_sessions_used)),
    running_sessions_remaining: sum(pools.map((p) => p.running_sessions_remaining)),
    // The first pool's cycle (subscription order) is the account's cycle.
    cycle_start: pools[0]?.cycle_start ?? noPoolCycle.start,
    cycle_end: pools[0]?.cycle_end ?? noPoolCycle.end,
    residential_cycle_mb_limit: pools.length ? sumOrNull(pools.map((p) => p.residential_cycle_mb_limit)) : null,
    residential_bytes_used_cycle: sum(pools.map((p) => p.residential_bytes_used_cycle)),
  };
}

export function sessionMeters(total: UsageMeters): SessionMeters {
  return {
    running_session_limit: total.running_session_limit,
    running_sessions_used: total.running_sessions_used,
    running_sessions_remaining: total.running_sessions_remaining,
    cycle_session_limit: total.cycle_session_limit,
    cycle_sessions_used: total.cycle_sessions_used,
    cycle_sessions_remaining: total.cycle_sessions_remaining,
    cycle_start: total.cycle_start,
    cycle_end: total.cycle_end,
  };
}
