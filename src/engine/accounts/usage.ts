// An account's usage as the API and the create transaction read it: its pools (one per current
// subscription) with their meters, the totals over them (decisions.md 11), and whether its plans
// include programmatic access. Read through any store, a transaction's included.
import type { Pool, UsageMeters } from '../../protocol/index.js';
import { currentCycle, formatDay } from '../../protocol/cycle.js';
import type { Plan } from '../config.js';
import type { AccountRow, SessionRow, Store } from '../store/store.js';
import { poolState, totalMeters, type PoolState } from './meters.js';

export interface AccountUsageOptions {
  store: Store;
  plan(id: string): Plan | undefined;
  now: () => number;
}

export class AccountUsage {
  constructor(private readonly options: AccountUsageOptions) {}

  /** The plan a session takes its slot from, as configured now; undefined when it is no longer configured. */
  async planOf(row: SessionRow): Promise<Plan | undefined> {
    const subscription = (await this.options.store.subscriptions(row.account_id)).find((s) => s.id === row.subscription_id);
    return subscription && this.options.plan(subscription.plan_id);
  }

  /** The account's pools with their meters, read through `store` (a transaction's, in create). */
  async pools(account: AccountRow, store: Store = this.options.store): Promise<PoolState[]> {
    const now = this.options.now();
    const states: PoolState[] = [];
    for (const subscription of await store.subscriptions(account.id)) {
      const plan = this.options.plan(subscription.plan_id);
      if (plan) states.push(await poolState(store, subscription, plan, now));
    }
    return states;
  }

  async hasProgrammaticAccess(account: AccountRow & { plan_ids?: string[] }): Promise<boolean> {
    // Only the plans matter here: no meter queries on the hot path of every request (and none at
    // all when authentication read the plans with the key).
    return (account.plan_ids ?? (await this.options.store.planIds(account.id))).some((id) => this.options.plan(id)?.programmatic_access === true);
  }

  async usage(account: AccountRow, store: Store = this.options.store): Promise<{ has_plan: boolean; meters: UsageMeters; pools: Pool[] }> {
    const now = this.options.now();
    const pools = (await this.pools(account, store)).map((p) => p.meters);
    return { has_plan: pools.length > 0, meters: totalMeters(pools, currentCycle(formatDay(new Date(now)), now)), pools };
  }
}
