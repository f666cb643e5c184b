// The store: every piece of service state (accounts, subscriptions, keys, sessions, nodes,
// idempotency records, meters) in the product's words, over either database (database.ts): the
// embedded SQLite file in the data directory, or Postgres shared by a cluster of nodes. Atomic
// work (quota checks with the insert, idempotency, placement) runs in one transaction that no
// other writer on any node interleaves with. The rows it hands out are declared in rows.ts.
// Every query of these tables is here, one short method each, so that a change of the schema is
// read in one file; tables of their own that no transaction spans with these have their store
// beside it or in their part (v6-store.ts, webhooks/webhook-store.ts, profiles/profile-store.ts).
import type { Database, SqlConnection, SqlValue } from './database.js';
import { SUMMARY_COLUMNS, withFlags, type AccountRow, type ApiKeyRow, type IdempotencyRow, type NodeRow, type NodeWithLoad, type PoolUsage, type SessionRow, type SessionSummaryRow, type SubscriptionRow } from './rows.js';

export type { AccountRow, ApiKeyRow, IdempotencyRow, NodeRow, NodeWithLoad, PoolUsage, SessionRow, SessionSummaryRow, SubscriptionRow } from './rows.js';

/** Statuses that hold a running slot and a node's capacity. */
const ACTIVE_STATUSES = "('starting', 'running')";

export class Store {
  constructor(
    private readonly db: Database,
    /** Where queries run: the database itself, or the transaction this store is bound to. */
    private readonly connection: SqlConnection = db,
    private readonly inTransaction = false,
  ) {}

  get dialect(): 'sqlite' | 'postgres' {
    return this.db.dialect;
  }

  /** The database, for the parts that use it directly (messages between nodes, the rate limiter). */
  get database(): Database {
    return this.db;
  }

  /**
   * Runs `work` in one transaction that no other holder of the same `lock` on any node interleaves
   * with (its reads and writes see one state; SQLite has one writer at a time anyway). The default
   * lock is the service's: quota, placement and the sessions of lost nodes. `work` must use only
   * the store it is given. Nested calls join it.
   */
  atomically<T>(work: (tx: Store) => Promise<T>, lock = 'rbk-store'): Promise<T> {
    if (this.inTransaction) return work(this);
    return this.db.transaction((tx) => work(new Store(this.db, tx, true)), lock);
  }

  close(): Promise<void> {
    return this.db.close();
  }

  /** Where this store's queries run (inside atomically(), the transaction's): for the stores of other parts (webhooks/webhook-store.ts). */
  get sql(): SqlConnection {
    return this.connection;
  }

  /** Readiness: whether the database takes a write now (database.ts probeWrite). */
  probeWrite(timeoutMs: number): Promise<void> {
    return this.db.probeWrite(timeoutMs);
  }

  private all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return this.connection.all<T>(sql, params);
  }

  private get<T>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
    return this.connection.get<T>(sql, params);
  }

  private run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return this.connection.run(sql, params);
  }

  private async insert(table: string, row: object): Promise<void> {
    const columns = Object.keys(row);
    await this.run(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`, Object.values(row) as SqlValue[]);
  }

  // Settings -----------------------------------------------------------------------------------

  async setting(name: string): Promise<string | undefined> {
    return (await this.get<{ value: string }>('SELECT value FROM engine_settings WHERE name = ?', [name]))?.value;
  }

  /** Stores the value unless one exists; returns the stored one (first writer wins, on any node). */
  async settingOrInsert(name: string, value: string): Promise<string> {
    await this.run('INSERT INTO engine_settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [name, value]);
    return (await this.setting(name))!;
  }

  // Accounts -----------------------------------------------------------------------------------

  insertAccount(account: AccountRow, subscriptions: SubscriptionRow[], key: ApiKeyRow): Promise<void> {
    return this.atomically(async (tx) => {
      await tx.insert('accounts', account);
      for (const subscription of subscriptions) await tx.insert('subscriptions', subscription);
      await tx.insertKey(key);
    });
  }

  account(id: string): Promise<AccountRow | undefined> {
    return this.get<AccountRow>('SELECT * FROM accounts WHERE id = ?', [id]);
  }

  accounts(): Promise<AccountRow[]> {
    return this.all<AccountRow>('SELECT * FROM accounts ORDER BY created_at');
  }

  /** The origins that may frame the account's share links (issue 44), in the order they were set; [] for none. */
  async embedOrigins(accountId: string): Promise<string[]> {
    return parseOrigins((await this.get<{ embed_origins: string | null }>('SELECT embed_origins FROM accounts WHERE id = ?', [accountId]))?.embed_origins);
  }

  /** Replaces the account's list; [] turns framing off. */
  async setEmbedOrigins(accountId: string, origins: readonly string[]): Promise<void> {
    await this.run('UPDATE accounts SET embed_origins = ? WHERE id = ?', [origins.length === 0 ? null : JSON.stringify(origins), accountId]);
  }

  subscriptions(accountId: string): Promise<SubscriptionRow[]> {
    return this.all<SubscriptionRow>('SELECT * FROM subscriptions WHERE account_id = ? AND ended_at IS NULL ORDER BY position', [accountId]);
  }

  // Keys ---------------------------------------------------------------------------------------

  insertKey(key: ApiKeyRow): Promise<void> {
    return this.insert('api_keys', key);
  }

  /**
   * The account a key hash belongs to, with the key's revocation time and the plans of its current
   * subscriptions: one narrow query, as every API request authenticates (on Postgres each query
   * is a round trip).
   */
  async accountByKeyHash(hash: string): Promise<(AccountRow & { revoked_at: number | null; plan_ids: string[] }) | undefined> {
    const planIds = this.dialect === 'sqlite' ? 'json_group_array(s.plan_id)' : 'json_agg(s.plan_id)::text';
    const row = await this.get<AccountRow & { revoked_at: number | null; plan_ids: string | null }>(
      `SELECT a.id, a.contact, a.language, a.layout, a.created_at, k.revoked_at,
         (SELECT ${planIds} FROM subscriptions s WHERE s.account_id = a.id AND s.ended_at IS NULL) AS plan_ids
       FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = ?`,
      [hash],
    );
    return row && { ...row, plan_ids: row.plan_ids ? (JSON.parse(row.plan_ids) as string[]) : [] };
  }

  /** The plan ids of the account's current subscriptions, in pool order. */
  async planIds(accountId: string): Promise<string[]> {
    const rows = await this.all<{ plan_id: string }>('SELECT plan_id FROM subscriptions WHERE account_id = ? AND ended_at IS NULL ORDER BY position', [accountId]);
    return rows.map((row) => row.plan_id);
  }

  keyByHash(hash: string): Promise<ApiKeyRow | undefined> {
    return this.get<ApiKeyRow>('SELECT * FROM api_keys WHERE key_hash = ?', [hash]);
  }

  keys(accountId: string): Promise<ApiKeyRow[]> {
    return this.all<ApiKeyRow>('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at', [accountId]);
  }

  async revokeKey(id: string, now: number): Promise<boolean> {
    return (await this.run('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?', [now, id])) > 0;
  }

  // Sessions -----------------------------------------------------------------------------------

  insertSession(session: SessionRow): Promise<void> {
    return this.insert('sessions', session);
  }

  async session(id: string): Promise<SessionRow | undefined> {
    return withFlags(await this.get<SessionRow>('SELECT * FROM sessions WHERE id = ?', [id]));
  }

  /** An account's recorded sessions (issue 35), or every account's: what their recordings' meters and retention read. */
  async recordedSessions(accountId?: string): Promise<SessionRow[]> {
    const rows = await this.all<SessionRow>(`SELECT * FROM sessions WHERE recorded = ?${accountId ? ' AND account_id = ?' : ''}`, accountId ? [true, accountId] : [true]);
    return rows.map((row) => withFlags(row)!);
  }

  /** What a session list entry shows: a few columns, as status polling reads them all the time. */
  async sessionSummary(id: string): Promise<SessionSummaryRow | undefined> {
    return withFlags(await this.get<SessionSummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM sessions WHERE id = ?`, [id]));
  }

  /** Ties in creation time keep insertion order: SQLite's rowid, Postgres' identity column. */
  private get insertionOrder(): string {
    return this.dialect === 'sqlite' ? 'rowid' : 'seq';
  }

  /** Summaries of the account's sessions created since `sinceMs`, newest first. */
  async sessionSummariesOf(accountId: string, sinceMs: number, limit: number): Promise<SessionSummaryRow[]> {
    const rows = await this.all<SessionSummaryRow>(
      `SELECT ${SUMMARY_COLUMNS} FROM sessions WHERE account_id = ? AND created_at >= ? ORDER BY created_at DESC, ${this.insertionOrder} DESC LIMIT ?`,
      [accountId, sinceMs, limit],
    );
    return rows.map((row) => withFlags(row)!);
  }

  /** The session whose share link or view-only link has this hash. */
  async sessionByLinkHash(hash: string): Promise<SessionRow | undefined> {
    return withFlags(await this.get<SessionRow>('SELECT * FROM sessions WHERE link_hash = ? OR view_link_hash = ?', [hash, hash]));
  }

  /** The account's sessions created since `sinceMs`, newest first. */
  async sessionsOf(accountId: string, sinceMs: number, limit: number): Promise<SessionRow[]> {
    const rows = await this.all<SessionRow>(
      `SELECT * FROM sessions WHERE account_id = ? AND created_at >= ? ORDER BY created_at DESC, ${this.insertionOrder} DESC LIMIT ?`,
      [accountId, sinceMs, limit],
    );
    return rows.map((row) => withFlags(row)!);
  }

  /** Sessions in one of `statuses`; with `nodeId`, only those that node runs (or ran). */
  async sessionsWithStatus(statuses: string[], nodeId?: string): Promise<SessionRow[]> {
    const rows = await this.all<SessionRow>(
      `SELECT * FROM sessions WHERE status IN (${statuses.map(() => '?').join(', ')})${nodeId === undefined ? '' : ' AND node_id = ?'}`,
      nodeId === undefined ? statuses : [...statuses, nodeId],
    );
    return rows.map((row) => withFlags(row)!);
  }

  /** This node's sessions that hold a slot or are ending, counted by status and browser (the metrics' gauge). */
  async sessionCountsOfNode(nodeId: string): Promise<Array<{ status: string; browser: string; n: number }>> {
    const rows = await this.all<{ status: string; browser: string; n: number }>(
      "SELECT status, browser, COUNT(*) AS n FROM sessions WHERE node_id = ? AND status IN ('starting', 'running', 'stopping') GROUP BY status, browser",
      [nodeId],
    );
    return rows.map((row) => ({ ...row, n: Number(row.n) }));
  }

  /** Moves a session from one of `from` to `to`; false when it was in none of them. */
  async moveSession(id: string, from: string[], to: string, fields: Partial<SessionRow> = {}): Promise<boolean> {
    const keys = Object.keys(fields);
    const changed = await this.run(
      `UPDATE sessions SET ${['status = ?', ...keys.map((k) => `${k} = ?`)].join(', ')} WHERE id = ? AND status IN (${from.map(() => '?').join(', ')})`,
      [to, ...(Object.values(fields) as SqlValue[]), id, ...from],
    );
    return changed > 0;
  }

  /** A session woke from standby: no longer in it, and one more wake counted (decisions.md 141). */
  async sessionWoke(id: string): Promise<void> {
    await this.run('UPDATE sessions SET standby = ?, wakes = wakes + 1 WHERE id = ?', [false, id]);
  }

  /** Hibernated sessions, which no node holds (issue 46, decisions.md 165): every node sweeps them for their limits. */
  async hibernatedSessions(): Promise<SessionRow[]> {
    const rows = await this.all<SessionRow>("SELECT * FROM sessions WHERE status = 'running' AND hibernated AND node_id IS NULL");
    return rows.map((row) => withFlags(row)!);
  }

  /** Writes `fields` of a session that still runs; false when it no longer does (it ended meanwhile). */
  async updateRunningSession(id: string, fields: Partial<SessionRow>, extra = ''): Promise<boolean> {
    const keys = Object.keys(fields);
    return (await this.run(`UPDATE sessions SET ${keys.map((k) => `${k} = ?`).join(', ')} WHERE id = ? AND status = 'running'${extra}`, [...(Object.values(fields) as SqlValue[]), id])) > 0;
  }

  /** This node takes a hibernated session to resume it; false when it is not hibernated, ended, or another node took it first. */
  claimHibernated(id: string, nodeId: string): Promise<boolean> {
    return this.updateRunningSession(id, { node_id: nodeId }, ' AND hibernated AND node_id IS NULL');
  }

  async updateSession(id: string, fields: Partial<SessionRow>): Promise<void> {
    const keys = Object.keys(fields);
    if (keys.length === 0) return;
    await this.run(`UPDATE sessions SET ${keys.map((k) => `${k} = ?`).join(', ')} WHERE id = ?`, [...(Object.values(fields) as SqlValue[]), id]);
  }

  /** `countHibernated` false: hibernated sessions do not fill the running count (a plan's `hibernated_count_running: false`). */
  async poolUsage(subscriptionId: string, cycleStartMs: number, cycleEndMs: number, countHibernated = true): Promise<PoolUsage> {
    const row = await this.get<{ running: number; cycle_sessions: number; residential_bytes: number }>(
      `SELECT
         COALESCE(SUM(CASE WHEN status IN ${ACTIVE_STATUSES}${countHibernated ? '' : ' AND NOT hibernated'} THEN 1 ELSE 0 END), 0) AS running,
         COALESCE(SUM(CASE WHEN counted = ? AND created_at >= ? AND created_at < ? THEN 1 ELSE 0 END), 0) AS cycle_sessions,
         COALESCE(SUM(CASE WHEN created_at >= ? AND created_at < ? THEN residential_bytes ELSE 0 END), 0) AS residential_bytes
       FROM sessions WHERE subscription_id = ?`,
      [true, cycleStartMs, cycleEndMs, cycleStartMs, cycleEndMs, subscriptionId],
    );
    return { running: Number(row!.running), cycleSessions: Number(row!.cycle_sessions), residentialBytes: Number(row!.residential_bytes) };
  }

  /** Sessions using each exit city right now (for "a free exit"), in one query: cities without any are absent. */
  async exitCityLoads(): Promise<Map<string, number>> {
    const rows = await this.all<{ exit_city: string; n: number }>(
      `SELECT exit_city, COUNT(*) AS n FROM sessions WHERE exit_city IS NOT NULL AND status IN ${ACTIVE_STATUSES} GROUP BY exit_city`,
    );
    return new Map(rows.map((row) => [row.exit_city, Number(row.n)]));
  }

  // Idempotency --------------------------------------------------------------------------------

  idempotency(accountId: string, key: string, sinceMs: number): Promise<IdempotencyRow | undefined> {
    return this.get<IdempotencyRow>('SELECT request_hash, response FROM idempotency WHERE account_id = ? AND key = ? AND created_at >= ?', [accountId, key, sinceMs]);
  }

  async rememberIdempotency(accountId: string, key: string, requestHash: string, response: string, now: number): Promise<void> {
    await this.run(
      `INSERT INTO idempotency (account_id, key, request_hash, response, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (account_id, key) DO UPDATE SET request_hash = excluded.request_hash, response = excluded.response, created_at = excluded.created_at`,
      [accountId, key, requestHash, response, now],
    );
  }

  async forgetIdempotencyBefore(cutoffMs: number): Promise<void> {
    await this.run('DELETE FROM idempotency WHERE created_at < ?', [cutoffMs]);
  }

  // Nodes --------------------------------------------------------------------------------------

  /** Registers a node (or the same node again after a restart): active, heart-beating now. */
  async registerNode(node: NodeRow): Promise<void> {
    await this.run(
      `INSERT INTO nodes (id, internal_url, advertised_url, capacity, browsers, warm, state, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET internal_url = excluded.internal_url, advertised_url = excluded.advertised_url, capacity = excluded.capacity,
         browsers = excluded.browsers, warm = excluded.warm, state = excluded.state, started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at`,
      [node.id, node.internal_url, node.advertised_url, node.capacity, node.browsers, node.warm, node.state, node.started_at, node.heartbeat_at],
    );
  }

  /** A node's heartbeat, with the warm browsers it has ready; false when the node is unknown or was declared lost (it must re-register). */
  async heartbeat(id: string, now: number, warm = '[]'): Promise<boolean> {
    return (await this.run("UPDATE nodes SET heartbeat_at = ?, warm = ? WHERE id = ? AND state IN ('active', 'draining')", [now, warm, id])) > 0;
  }

  async node(id: string): Promise<NodeRow | undefined> {
    return this.get<NodeRow>('SELECT * FROM nodes WHERE id = ?', [id]);
  }

  /**
   * Every node with the sessions it holds awake now (starting, or running and not in standby: what
   * its capacity counts, issue 46) and those in standby.
   */
  async nodes(): Promise<NodeWithLoad[]> {
    const rows = await this.all<NodeWithLoad>(
      `SELECT n.*, (SELECT COUNT(*) FROM sessions s WHERE s.node_id = n.id AND s.status IN ${ACTIVE_STATUSES} AND NOT s.standby) AS load,
         (SELECT COUNT(*) FROM sessions s WHERE s.node_id = n.id AND s.status = 'running' AND s.standby) AS standby FROM nodes n ORDER BY n.id`,
    );
    return rows.map((row) => ({ ...row, load: Number(row.load), standby: Number(row.standby) }));
  }

  async setNodeState(id: string, state: NodeRow['state']): Promise<boolean> {
    return (await this.run('UPDATE nodes SET state = ? WHERE id = ?', [state, id])) > 0;
  }

  /** Gives sessions stored before nodes existed (an older SQLite file) to the one node there is; hibernated ones stay nobody's. */
  async adoptSessionsWithoutNode(nodeId: string): Promise<void> {
    await this.run('UPDATE sessions SET node_id = ? WHERE node_id IS NULL AND NOT hibernated', [nodeId]);
  }

  async removeNode(id: string): Promise<boolean> {
    return (await this.run('DELETE FROM nodes WHERE id = ?', [id])) > 0;
  }

  /** Whether any active or draining node has been silent since before `cutoffMs` (a cheap look first). */
  async anySilentNode(cutoffMs: number): Promise<boolean> {
    return (await this.get("SELECT 1 AS silent FROM nodes WHERE state IN ('active', 'draining') AND heartbeat_at < ? LIMIT 1", [cutoffMs])) !== undefined;
  }

  /** Declares lost every active or draining node silent since before `cutoffMs`; answers their ids. */
  async loseSilentNodes(cutoffMs: number): Promise<string[]> {
    const rows = await this.all<{ id: string }>("UPDATE nodes SET state = 'lost' WHERE state IN ('active', 'draining') AND heartbeat_at < ? RETURNING id", [cutoffMs]);
    return rows.map((row) => row.id);
  }

  /**
   * Ends the sessions a node left behind (it was lost, or restarted) by the moves the caller gives,
   * in order (the lifecycle's table, sessions/lifecycle.ts nodeGoneMoves: running ones suspended,
   * starting ones error, stopping ones deleted); a hibernated one it was resuming stays
   * hibernated, nobody's. Answers what moved.
   */
  async endSessionsOfNode(nodeId: string, moves: ReadonlyArray<{ from: string; to: string; fields: Partial<SessionRow> }>): Promise<Array<{ id: string; status: string }>> {
    // A hibernated session it was resuming is nobody's again, its saved state intact (decisions.md 167).
    // One whose end it had begun (decisions.md 179) is ended below as any of its sessions.
    await this.run("UPDATE sessions SET node_id = NULL, runtime_id = NULL WHERE node_id = ? AND hibernated AND status = 'running'", [nodeId]);
    const moved: Array<{ id: string; status: string }> = [];
    for (const { from, to, fields } of moves) {
      const keys = Object.keys(fields);
      const rows = await this.all<{ id: string }>(
        `UPDATE sessions SET ${['status = ?', ...keys.map((k) => `${k} = ?`)].join(', ')} WHERE node_id = ? AND status = ? RETURNING id`,
        [to, ...(Object.values(fields) as SqlValue[]), nodeId, from],
      );
      moved.push(...rows.map(({ id }) => ({ id, status: to })));
    }
    return moved;
  }
}

/** A stored origin list (JSON array of strings); anything else reads as none, so a damaged row never widens framing. */
export function parseOrigins(stored: string | null | undefined): string[] {
  if (!stored) return [];
  try {
    const value: unknown = JSON.parse(stored);
    return Array.isArray(value) && value.every((origin) => typeof origin === 'string') ? value : [];
  } catch {
    return [];
  }
}
