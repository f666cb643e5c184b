// The database under the store: the few operations the store's queries need, implemented by the
// embedded SQLite database (one machine, the default) and by Postgres (several nodes share it).
// SQL texts use `?` placeholders in both; the Postgres side numbers them ($1, $2...). Times are
// epoch milliseconds (INTEGER in SQLite, BIGINT in Postgres), flags are booleans in JavaScript
// (INTEGER 0/1 in SQLite, BOOLEAN in Postgres), bytes are Buffers (BLOB in SQLite, BYTEA in Postgres).

export type SqlValue = string | number | boolean | null | Buffer;

/** One place to run queries: the database itself, or one open transaction on it. */
export interface SqlConnection {
  readonly dialect: 'sqlite' | 'postgres';
  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  get<T>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined>;
  /** Runs a statement; answers how many rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
}

export interface Database extends SqlConnection {
  /**
   * Runs `work` in one transaction that no other writer interleaves with, on any node: SQLite's
   * IMMEDIATE transaction (one writer per file), in Postgres a transaction-scoped advisory lock
   * named `lock` taken first (READ COMMITTED alone would let two nodes both see a free slot).
   * `work` must use only `tx`, and only for queries: the transaction holds the connection.
   */
  transaction<T>(work: (tx: SqlConnection) => Promise<T>, lock: string): Promise<T>;
  /**
   * Messages to every node on the same database (Postgres LISTEN/NOTIFY); the SQLite database
   * delivers them to the listeners of this process only.
   */
  listen(channel: string, onMessage: (payload: string) => void): Promise<void>;
  notify(channel: string, payload: string): Promise<void>;
  /**
   * Readiness (decisions.md 60): resolves when a write could start now, waiting at most
   * `timeoutMs`; rejects with the database's error when it could not (held by another process,
   * unreachable).
   */
  probeWrite(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}
