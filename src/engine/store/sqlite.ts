// The embedded database: one SQLite file in the data directory (WAL journal), through
// better-sqlite3. Its calls are synchronous; the store's interface is not, so a transaction holds
// the connection for this process (other queries wait for it to end) and BEGIN IMMEDIATE keeps
// other processes on the same file (the operator CLI) out until it commits.
import BetterSqlite3 from 'better-sqlite3';
import type { Database, SqlConnection, SqlValue } from './database.js';
import { MIGRATIONS } from './schema.js';

/** better-sqlite3 binds numbers, strings and null: flags go in as 0/1. */
function bindable(params: readonly SqlValue[]): unknown[] {
  return params.map((value) => (typeof value === 'boolean' ? (value ? 1 : 0) : value));
}

export class SqliteDatabase implements Database {
  readonly dialect = 'sqlite' as const;
  private readonly db: BetterSqlite3.Database;
  // Compiling SQL costs more than running these small queries: each text is prepared once.
  private readonly statements = new Map<string, BetterSqlite3.Statement>();
  /** Settles when the transaction that holds the connection ends; undefined when none does. */
  private held: Promise<void> | undefined;
  private readonly listeners = new Map<string, Array<(payload: string) => void>>();
  /** The connection inside a transaction: the same database, without waiting for itself. */
  private readonly inside: SqlConnection;

  constructor(file: string) {
    this.db = new BetterSqlite3(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    // Several processes (the engine and the operator CLI) may write; wait instead of failing.
    this.db.pragma('busy_timeout = 5000');
    this.migrate();
    this.inside = {
      dialect: 'sqlite',
      all: async (sql, params = []) => this.statement(sql).all(...bindable(params)) as never[],
      get: async (sql, params = []) => this.statement(sql).get(...bindable(params)) as never,
      run: async (sql, params = []) => this.execute(sql, params),
    };
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

  private statement(sql: string): BetterSqlite3.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private execute(sql: string, params: readonly SqlValue[]): number {
    const statement = this.statement(sql);
    // A statement with RETURNING gives rows back; count them as the rows it changed.
    if (statement.reader) return statement.all(...bindable(params)).length;
    return statement.run(...bindable(params)).changes;
  }

  /** Waits while a transaction of this process holds the connection. */
  private async idle(): Promise<void> {
    while (this.held) await this.held;
  }

  async all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    if (this.held) await this.idle();
    return this.statement(sql).all(...bindable(params)) as T[];
  }

  async get<T>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
    if (this.held) await this.idle();
    return this.statement(sql).get(...bindable(params)) as T | undefined;
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    if (this.held) await this.idle();
    return this.execute(sql, params);
  }

  /** One IMMEDIATE transaction (the lock name matters only where several nodes share a database). */
  async transaction<T>(work: (tx: SqlConnection) => Promise<T>, _lock: string): Promise<T> {
    await this.idle();
    let release!: () => void;
    this.held = new Promise((resolve) => (release = resolve));
    try {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        const result = await work(this.inside);
        this.db.exec('COMMIT');
        return result;
      } catch (error) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw error;
      }
    } finally {
      this.held = undefined;
      release();
    }
  }

  async listen(channel: string, onMessage: (payload: string) => void): Promise<void> {
    this.listeners.set(channel, [...(this.listeners.get(channel) ?? []), onMessage]);
  }

  async notify(channel: string, payload: string): Promise<void> {
    for (const listener of this.listeners.get(channel) ?? []) queueMicrotask(() => listener(payload));
  }

  /** Takes the write lock and lets it go at once, waiting at most `timeoutMs` for another process to let it go. */
  async probeWrite(timeoutMs: number): Promise<void> {
    // A transaction of this process holds the lock: the database takes writes.
    if (this.held) return;
    this.db.pragma(`busy_timeout = ${Math.max(0, Math.round(timeoutMs))}`);
    try {
      this.db.exec('BEGIN IMMEDIATE');
      this.db.exec('ROLLBACK');
    } finally {
      this.db.pragma('busy_timeout = 5000');
    }
  }

  async close(): Promise<void> {
    await this.idle();
    this.db.close();
  }
}
