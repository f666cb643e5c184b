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

/** Makes limiters on the store's database; `ready()` waits until their table exists. */
export function limitersFor(store: Store): { limiter(settings: LimitSettings): RateLimiterAbstract; ready(): Promise<void> } {
  const database = store.database as { pool?: unknown };
  const waiting: Promise<void>[] = [];
  return {
    limiter(settings) {
      if (store.dialect !== 'postgres' || !database.pool) return new RateLimiterMemory(settings);
      let created!: (error?: Error) => void;
      waiting.push(new Promise<void>((resolve, reject) => (created = (error) => (error ? reject(error) : resolve()))));
      return new RateLimiterPostgres(
        {
          ...settings,
          storeClient: database.pool,
          storeType: 'pool',
          tableName: 'rate_limits',
          // While the database cannot be reached, each node counts on its own rather than refusing everyone.
          insuranceLimiter: new RateLimiterMemory(settings),
        },
        (error?: Error) => created(error),
      );
    },
    async ready() {
      await Promise.all(waiting);
    },
  };
}
