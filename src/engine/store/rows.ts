// The store's rows (store.ts): what a record of each table is, as the store hands it out in the
// product's words on both databases (SQLite's 0/1 flags made booleans here). The queries that
// read and write them are all in store.ts (a v6 session key's account also in v6-store.ts).

export interface AccountRow {
  id: string;
  contact: string;
  language: string | null;
  layout: string | null;
  created_at: number;
  /** The origins that may frame its share links (issue 44), a JSON array; null or absent: none. */
  embed_origins?: string | null;
}

export interface SubscriptionRow {
  id: string;
  account_id: string;
  plan_id: string;
  cycle_anchor: string;
  position: number;
  created_at: number;
  ended_at: number | null;
}

export interface ApiKeyRow {
  id: string;
  account_id: string;
  key_hash: string;
  prefix: string;
  created_at: number;
  revoked_at: number | null;
}

export interface SessionRow {
  id: string;
  account_id: string;
  subscription_id: string;
  status: string;
  browser: string;
  browser_name: string;
  url: string | null;
  language: string;
  layout: string;
  country: string | null;
  exit_city: string | null;
  egress: string | null;
  share_language: string;
  callback_url: string | null;
  link_hash: string;
  /** The view-only link's hash, once the share link's holder asked for one. */
  view_link_hash: string | null;
  /** Viewers connected now, as the node that runs it counts them. */
  viewers: number;
  counted: boolean;
  ever_ran: boolean;
  created_at: number;
  running_at: number | null;
  ended_at: number | null;
  last_viewer_at: number | null;
  egress_bytes: number;
  residential_bytes: number;
  runtime_id: string | null;
  end_reason: string | null;
  location_applied: boolean | null;
  location_reason: string | null;
  /** The node that runs (or ran) it. */
  node_id: string | null;
  /** Whether its picture, sound and timeline are recorded (issue 35). */
  recorded: boolean;
  /** Why its recording stopped while it ran on (`recording_mb_limit`, `recording_minutes_limit`, `free_space_floor`); null while it records. */
  recording_stopped?: string | null;
  /** Whether its browser runs as an app window: kiosk mode, no tab strip or address bar of its own (`window: "app"`, issue 36). */
  app_window?: boolean;
  /** Whether programs may drive it (`automation: true`, issue 45): a Firefox ESR session starts its remote agent only then (decisions.md 143). */
  automation?: boolean;
  /** `shared` or `one` (issue 36): whether one person drives at a time. */
  control_mode?: string;
  /** In `one` mode, who drives now (protocol/control.ts `Driver`, JSON), as the node that runs it wrote it; null: nobody. */
  driver?: string | null;
  /** The saved profile it started on (decisions.md 85), whether its state is written back, with its tabs. */
  profile_id?: string | null;
  profile_save?: boolean | null;
  profile_tabs?: boolean | null;
  /** The origins that may frame its links (issue 44), a JSON array narrowing the account's; null or absent: the account's apply. */
  embed_origins?: string | null;
  /** Whether the node that runs it has it in standby now, its processes frozen (issue 46, decisions.md 141). */
  standby?: boolean;
  /** Times it was woken from standby. */
  wakes?: number;
  /**
   * Hibernated (issue 46, decisions.md 165): running for the API, its processes ended, its state
   * sealed in the store (`hibernation_state`, that many chunks) with its open tabs (JSON); no node
   * holds it (`node_id` null) until the first attachment resumes it on the node that gets it.
   */
  hibernated?: boolean;
  hibernation_state?: string | null;
  hibernation_chunks?: number;
  hibernation_tabs?: string | null;
}

export interface PoolUsage {
  running: number;
  cycleSessions: number;
  residentialBytes: number;
}

export interface IdempotencyRow {
  request_hash: string;
  response: string;
}

/** The columns of a session list entry (GET /v8/vm/data). */
export type SessionSummaryRow = Pick<SessionRow, 'id' | 'account_id' | 'status' | 'browser_name' | 'created_at' | 'location_applied' | 'location_reason' | 'standby' | 'hibernated'>;
export const SUMMARY_COLUMNS = 'id, account_id, status, browser_name, created_at, location_applied, location_reason, standby, hibernated';

/** A node of the cluster (one engine process), with how many sessions it runs now. */
export interface NodeRow {
  id: string;
  /** How other nodes reach it (node-to-node calls). */
  internal_url: string;
  /** What callers and viewers reach it at (or the load balancer in front of the cluster). */
  advertised_url: string;
  /** Sessions it may run at once; null = no limit. */
  capacity: number | null;
  /** JSON array of the browser ids it can start. */
  browsers: string;
  /** JSON array of the warm browsers it has ready, as "browser language" kinds (its last heartbeat's). */
  warm: string;
  state: 'active' | 'draining' | 'lost';
  started_at: number;
  heartbeat_at: number;
}

/** A node with `load`, the sessions it holds awake (what its capacity counts), and those in `standby` (issue 46). */
export type NodeWithLoad = NodeRow & { load: number; standby?: number };

const SESSION_FLAGS = ['counted', 'ever_ran', 'location_applied', 'recorded', 'profile_save', 'profile_tabs', 'app_window', 'standby', 'automation', 'hibernated'] as const;

/** SQLite hands flags back as 0/1: the store's rows carry booleans on both databases. */
export function withFlags<T extends Partial<SessionRow>>(row: T | undefined): T | undefined {
  if (!row) return row;
  for (const flag of SESSION_FLAGS) {
    const value = row[flag] as unknown;
    if (typeof value === 'number') (row as Record<string, unknown>)[flag] = value === 1;
  }
  return row;
}
