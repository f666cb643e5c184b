// What the HTTP interface is made with (api.ts): the service, its settings, and the parts of the
// features whose calls are among the engine's own routes (absent, those calls say they are not
// offered). A feature with routes of its own gives them to the table instead (module.ts
// `apiRoutes`), so nothing here names recordings, profiles or control. Its own file so that the
// route files (routes.ts) read it without importing api.ts.
import type { IncomingMessage } from 'node:http';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { AccountUsage } from '../accounts/usage.js';
import type { Accounts } from '../accounts/accounts.js';
import type { EngineConfig, Plan } from '../config.js';
import type { ApiObserver } from '../operations/api-observer.js';
import type { EngineRuntime } from '../sessions/node-runtime.js';
import type { SessionService } from '../sessions/service.js';
import type { AccountRow, Store } from '../store/store.js';
import type { SessionWebhooks } from '../webhooks/webhooks.js';
import type { FileTransferOptions } from './files.js';
import type { LimitSettings } from './limits.js';

export interface ApiOptions {
  config: EngineConfig;
  store: Store;
  accounts: Accounts;
  /** An account's pools, meters and programmatic access (accounts/usage.ts). */
  usage: AccountUsage;
  sessions: SessionService;
  runtime: Pick<EngineRuntime, 'images'>;
  openapi: () => unknown;
  /** The engine's clock (tests move it). */
  now: () => number;
  /** Makes the rate limiters (limits.ts: shared by every node of a cluster). */
  limiter: (settings: LimitSettings) => RateLimiterAbstract;
  /** The client's address behind trusted proxies (client-address.ts). */
  clientAddress: (request: IncomingMessage) => string;
  /** Files in and out of sessions (files.ts, decisions.md 55); absent: the endpoints say they are not offered. */
  files?: FileTransferOptions;
  /** A running session's DevTools address for programs (automation.ts); absent: the endpoint says it is not offered. */
  automation?: (account: AccountRow, id: string | null, version: 'v8' | 'v7') => Promise<unknown>;
  /** The account's webhook receiver (webhooks/webhooks.ts, decisions.md 61); absent: v8 user/webhook says it is not offered. */
  webhooks?: Pick<SessionWebhooks, 'get' | 'set' | 'remove'>;
  /** Logs and metrics of creates and rate-limit refusals (operations/api-observer.ts). */
  observer?: ApiObserver;
  /** The features' meters on `user/quota` and `user/api` (the profiles', the recordings'), in order. */
  accountMeters?: readonly AccountMeter[];
}

/** A feature's fields on the account's usage answers, given the account and the plans of its pools. */
export type AccountMeter = (account: AccountRow, plans: ReadonlyArray<Plan | undefined>) => Promise<Record<string, number | null>>;
