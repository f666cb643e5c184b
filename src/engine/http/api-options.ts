// What the HTTP interface is made with (api.ts): the service, its settings, and the features'
// parts (absent, a feature's calls say they are not offered). Its own file so that the route
// files (routes.ts) read it without importing api.ts.
import type { IncomingMessage } from 'node:http';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { AccountUsage } from '../accounts/usage.js';
import type { Accounts } from '../accounts/accounts.js';
import type { EngineConfig } from '../config.js';
import type { ApiObserver } from '../operations/api-observer.js';
import type { ProfileService } from '../profiles/profiles.js';
import type { RecordingsAccess } from '../recordings/recordings.js';
import type { ReplayLinks } from '../recordings/replay-links.js';
import type { EngineRuntime } from '../sessions/node-runtime.js';
import type { SessionService } from '../sessions/service.js';
import type { AccountRow, SessionRow, Store } from '../store/store.js';
import type { ControlAction, ControlAnswer } from '../../protocol/index.js';
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
  /** Sessions' recordings (recordings/recordings.ts, issue 35): v8 only. */
  recordings?: RecordingsAccess;
  /** Replay links to recordings (recordings/replay-links.ts, decisions.md 110): v8 only; absent, the call says they are not offered. */
  replayLinks?: ReplayLinks;
  /** Saved profiles (http/profiles.ts, decisions.md 85); absent: v8's profile calls say they are not offered. */
  profiles?: ProfileService;
  /** Who drives a session (issue 36): `POST /v8/vm/control` and `vm/viewer`. */
  control?: SessionControl;
}

/** What the engine does with `vm/control` and `vm/viewer` (control.ts): on the node that runs the session (forwarded there in a cluster). */
export interface SessionControl {
  act(row: SessionRow, action: ControlAction): Promise<ControlAnswer | { status: 'denied' | 'error'; message: string }>;
  pass(row: SessionRow, name: string | undefined): { pass: string; expires: number };
}
