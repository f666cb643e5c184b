// Rate limits that hold across the whole service: in this process's memory on one machine
// (SQLite), in Postgres when several nodes share the work, so a caller spreading requests over
// the nodes behind a load balancer still has one budget. rate-limiter-flexible does the counting.
import { RateLimiterMemory, RateLimiterPostgres, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Store } from '../store/store.js';

export interface LimitSettings {
  points: number;
  /** Seconds. */
  duration: number;
  keyPrefix: string;
}

/** Makes limiters on the store's database (on Postgres, its `rate_limits` table, made by the store's migrations). */
export function limitersFor(store: Store): (settings: LimitSettings) => RateLimiterAbstract {
  const database = store.database as { pool?: unknown };
  return (settings) => {
    if (store.dialect !== 'postgres' || !database.pool) return new RateLimiterMemory(settings);
    return new RateLimiterPostgres({
      ...settings,
      storeClient: database.pool,
      storeType: 'pool',
      tableName: 'rate_limits',
      tableCreated: true,
      // While the database cannot be reached, each node counts on its own rather than refusing everyone.
      insuranceLimiter: new RateLimiterMemory(settings),
    });
  };
}
