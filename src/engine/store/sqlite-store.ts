// The store: every piece of service state (accounts, subscriptions, keys, sessions, idempotency
// records, meters) in SQLite, one file in the data directory, WAL journal. Atomic work (quota
// checks with the insert, idempotency) runs in one IMMEDIATE transaction, so it also holds when
// several engine processes share the file.
import Database from 'better-sqlite3';
import { MIGRATIONS } from './schema.js';

export interface AccountRow {
  id: string;
  contact: string;
  language: string | null;
  layout: string | null;
  created_at: number;
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
  counted: number;
  ever_ran: number;
  created_at: number;
  running_at: number | null;
  ended_at: number | null;
  last_viewer_at: number | null;
  egress_bytes: number;
  residential_bytes: number;
  runtime_id: string | null;
  end_reason: string | null;
  location_applied: number | null;
  location_reason: string | null;
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
export type SessionSummaryRow = Pick<SessionRow, 'id' | 'account_id' | 'status' | 'browser_name' | 'created_at' | 'location_applied' | 'location_reason'>;
const SUMMARY_COLUMNS = 'id, account_id, status, browser_name, created_at, location_applied, location_reason';

export class SqliteStore {
  readonly db: Database.Database;
  // Compiling SQL costs more than running these small queries: each text is prepared once.
  private readonly statements = new Map<string, Database.Statement>();

  private sql(text: string): Database.Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    // Several processes (the engine and the operator CLI) may write; wait instead of failing.
    this.db.pragma('busy_timeout = 5000');
    this.readTransaction = this.db.transaction((work: () => unknown) => work());
    this.migrate();
  }

  private migrate(): void {
    const version = this.db.pragma('user_version', { simple: true }) as number;
    for (let index = version; index < MIGRATIONS.length; index++) {
      this.db.transaction(() => {
        this.db.exec(MIGRATIONS[index]!);
        this.db.pragma(`user_version = ${index + 1}`);
      }).immediate();
    }
  }

  /** Runs `work` in one IMMEDIATE transaction: nothing else writes between its reads and writes. */
  atomically<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }

  /**
   * Runs read-only `work` in one deferred transaction: one consistent snapshot and one lock for
   * all its queries, where each query alone would take and release the lock itself.
   */
  reading<T>(work: () => T): T {
    return this.db.inTransaction ? work() : (this.readTransaction.deferred(work) as T);
  }

  // One transaction function for every reading(): making one per call costs more than the reads.
  private readonly readTransaction: Database.Transaction<(work: () => unknown) => unknown>;

  close(): void {
    this.db.close();
  }

  // Settings -----------------------------------------------------------------------------------

  setting(name: string): string | undefined {
    return (this.sql('SELECT value FROM engine_settings WHERE name = ?').get(name) as { value: string } | undefined)?.value;
  }

  /** Stores the value unless one exists; returns the stored one (first writer wins). */
  settingOrInsert(name: string, value: string): string {
    this.sql('INSERT INTO engine_settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING').run(name, value);
    return this.setting(name)!;
  }

  // Accounts -----------------------------------------------------------------------------------

  insertAccount(account: AccountRow, subscriptions: SubscriptionRow[], key: ApiKeyRow): void {
    this.atomically(() => {
      this.sql('INSERT INTO accounts (id, contact, language, layout, created_at) VALUES (@id, @contact, @language, @layout, @created_at)').run(account);
      const insert = this.sql(
        'INSERT INTO subscriptions (id, account_id, plan_id, cycle_anchor, position, created_at, ended_at) VALUES (@id, @account_id, @plan_id, @cycle_anchor, @position, @created_at, @ended_at)',
      );
      for (const subscription of subscriptions) insert.run(subscription);
      this.insertKey(key);
    });
  }

  account(id: string): AccountRow | undefined {
    return this.sql('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined;
  }

  accounts(): AccountRow[] {
    return this.sql('SELECT * FROM accounts ORDER BY created_at').all() as AccountRow[];
  }

  subscriptions(accountId: string): SubscriptionRow[] {
    return this.sql('SELECT * FROM subscriptions WHERE account_id = ? AND ended_at IS NULL ORDER BY position').all(accountId) as SubscriptionRow[];
  }

  // Keys ---------------------------------------------------------------------------------------

  insertKey(key: ApiKeyRow): void {
    this.sql('INSERT INTO api_keys (id, account_id, key_hash, prefix, created_at, revoked_at) VALUES (@id, @account_id, @key_hash, @prefix, @created_at, @revoked_at)').run(key);
  }

  /**
   * The account a key hash belongs to, with the key's revocation time: one narrow query, as
   * every API request authenticates.
   */
  accountByKeyHash(hash: string): (AccountRow & { revoked_at: number | null }) | undefined {
    return this
      .sql('SELECT a.id, a.contact, a.language, a.layout, a.created_at, k.revoked_at FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = ?')
      .get(hash) as (AccountRow & { revoked_at: number | null }) | undefined;
  }

  /** The plan ids of the account's current subscriptions, in pool order. */
  planIds(accountId: string): string[] {
    return this.sql('SELECT plan_id FROM subscriptions WHERE account_id = ? AND ended_at IS NULL ORDER BY position').pluck().all(accountId) as string[];
  }

  keyByHash(hash: string): ApiKeyRow | undefined {
    return this.sql('SELECT * FROM api_keys WHERE key_hash = ?').get(hash) as ApiKeyRow | undefined;
  }

  keys(accountId: string): ApiKeyRow[] {
    return this.sql('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at').all(accountId) as ApiKeyRow[];
  }

  revokeKey(id: string, now: number): boolean {
    return this.sql('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?').run(now, id).changes > 0;
  }

  // Sessions -----------------------------------------------------------------------------------

  insertSession(session: SessionRow): void {
    const columns = Object.keys(session);
    this.sql(`INSERT INTO sessions (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`).run(session);
  }

  session(id: string): SessionRow | undefined {
    return this.sql('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow | undefined;
  }

  /** What a session list entry shows: a few columns, as status polling reads them all the time. */
  sessionSummary(id: string): SessionSummaryRow | undefined {
    return this.sql(`SELECT ${SUMMARY_COLUMNS} FROM sessions WHERE id = ?`).get(id) as SessionSummaryRow | undefined;
  }

  /** Summaries of the account's sessions created since `sinceMs`, newest first. */
  sessionSummariesOf(accountId: string, sinceMs: number, limit: number): SessionSummaryRow[] {
    return this
      .sql(`SELECT ${SUMMARY_COLUMNS} FROM sessions WHERE account_id = ? AND created_at >= ? ORDER BY created_at DESC, rowid DESC LIMIT ?`)
      .all(accountId, sinceMs, limit) as SessionSummaryRow[];
  }

  sessionByLinkHash(hash: string): SessionRow | undefined {
    return this.sql('SELECT * FROM sessions WHERE link_hash = ?').get(hash) as SessionRow | undefined;
  }

  /** The account's sessions created since `sinceMs`, newest first. */
  sessionsOf(accountId: string, sinceMs: number, limit: number): SessionRow[] {
    return this
      .sql('SELECT * FROM sessions WHERE account_id = ? AND created_at >= ? ORDER BY created_at DESC, rowid DESC LIMIT ?')
      .all(accountId, sinceMs, limit) as SessionRow[];
  }

  sessionsWithStatus(statuses: string[]): SessionRow[] {
    return this.sql(`SELECT * FROM sessions WHERE status IN (${statuses.map(() => '?').join(', ')})`).all(...statuses) as SessionRow[];
  }

  /** Moves a session from one of `from` to `to`; false when it was in none of them. */
  moveSession(id: string, from: string[], to: string, fields: Partial<SessionRow> = {}): boolean {
    const sets = ['status = @to', ...Object.keys(fields).map((k) => `${k} = @${k}`)];
    const result = this
      .sql(`UPDATE sessions SET ${sets.join(', ')} WHERE id = @id AND status IN (${from.map((_, i) => `@from${i}`).join(', ')})`)
      .run({ id, to, ...fields, ...Object.fromEntries(from.map((s, i) => [`from${i}`, s])) });
    return result.changes > 0;
  }

  updateSession(id: string, fields: Partial<SessionRow>): void {
    const keys = Object.keys(fields);
    if (keys.length === 0) return;
    this.sql(`UPDATE sessions SET ${keys.map((k) => `${k} = @${k}`).join(', ')} WHERE id = @id`).run({ id, ...fields });
  }

  poolUsage(subscriptionId: string, cycleStartMs: number, cycleEndMs: number): PoolUsage {
    const row = this
      .sql(
        `SELECT
           COALESCE(SUM(CASE WHEN status IN ('starting', 'running') THEN 1 ELSE 0 END), 0) AS running,
           COALESCE(SUM(CASE WHEN counted = 1 AND created_at >= @start AND created_at < @end THEN 1 ELSE 0 END), 0) AS cycle_sessions,
           COALESCE(SUM(CASE WHEN created_at >= @start AND created_at < @end THEN residential_bytes ELSE 0 END), 0) AS residential_bytes
         FROM sessions WHERE subscription_id = @id`,
      )
      .get({ id: subscriptionId, start: cycleStartMs, end: cycleEndMs }) as { running: number; cycle_sessions: number; residential_bytes: number };
    return { running: row.running, cycleSessions: row.cycle_sessions, residentialBytes: row.residential_bytes };
  }

  /** Sessions using an exit city right now (for "a free exit"). */
  exitCityLoad(city: string): number {
    return (this.sql("SELECT COUNT(*) AS n FROM sessions WHERE exit_city = ? AND status IN ('starting', 'running')").get(city) as { n: number }).n;
  }

  // Idempotency --------------------------------------------------------------------------------

  idempotency(accountId: string, key: string, sinceMs: number): IdempotencyRow | undefined {
    return this
      .sql('SELECT request_hash, response FROM idempotency WHERE account_id = ? AND key = ? AND created_at >= ?')
      .get(accountId, key, sinceMs) as IdempotencyRow | undefined;
  }

  rememberIdempotency(accountId: string, key: string, requestHash: string, response: string, now: number): void {
    this
      .sql(
        `INSERT INTO idempotency (account_id, key, request_hash, response, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (account_id, key) DO UPDATE SET request_hash = excluded.request_hash, response = excluded.response, created_at = excluded.created_at`,
      )
      .run(accountId, key, requestHash, response, now);
  }

  forgetIdempotencyBefore(cutoffMs: number): void {
    this.sql('DELETE FROM idempotency WHERE created_at < ?').run(cutoffMs);
  }

  // v6 short URLs and session keys ------------------------------------------------------------

  /** Stores a short URL; false when the id is taken (the caller draws another). */
  insertShortUrl(id: string, url: string, now: number): boolean {
    return this.sql('INSERT INTO short_urls (id, url, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING').run(id, url, now).changes > 0;
  }

  /** The address behind a short-URL id made at or after `sinceMs`. */
  shortUrl(id: string, sinceMs: number): string | undefined {
    return this.sql('SELECT url FROM short_urls WHERE id = ? AND created_at >= ?').pluck().get(id, sinceMs) as string | undefined;
  }

  insertV6Token(tokenHash: string, keyId: string, now: number, expiresAt: number): void {
    this.sql('INSERT INTO v6_tokens (token_hash, key_id, created_at, expires_at) VALUES (?, ?, ?, ?)').run(tokenHash, keyId, now, expiresAt);
  }

  /**
   * The account behind a v6 session key that has not expired and whose API key is not revoked,
   * with the session its client launched last.
   */
  accountByV6Token(tokenHash: string, now: number): (AccountRow & { session_id: string | null }) | undefined {
    return this
      .sql(
        `SELECT a.id, a.contact, a.language, a.layout, a.created_at, t.session_id
         FROM v6_tokens t JOIN api_keys k ON k.id = t.key_id JOIN accounts a ON a.id = k.account_id
         WHERE t.token_hash = ? AND t.expires_at > ? AND k.revoked_at IS NULL`,
      )
      .get(tokenHash, now) as (AccountRow & { session_id: string | null }) | undefined;
  }

  setV6TokenSession(tokenHash: string, sessionId: string): void {
    this.sql('UPDATE v6_tokens SET session_id = ? WHERE token_hash = ?').run(sessionId, tokenHash);
  }

  /** Forgets short URLs made before `shortUrlCutoffMs` and session keys expired before `now`. */
  forgetV6Before(shortUrlCutoffMs: number, now: number): void {
    this.sql('DELETE FROM short_urls WHERE created_at < ?').run(shortUrlCutoffMs);
    this.sql('DELETE FROM v6_tokens WHERE expires_at <= ?').run(now);
  }
}
