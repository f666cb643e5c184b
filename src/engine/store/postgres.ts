// The Postgres database under the store, shared by every node of a cluster: a connection pool for
// queries and transactions (serialized across nodes by advisory locks), one dedicated connection
// for LISTEN/NOTIFY, and the schema migrations, run once under an advisory lock at open.
import pg from 'pg';
import type { Database, SqlConnection, SqlValue } from './database.js';
import { POSTGRES_MIGRATIONS } from './postgres-schema.js';

// BIGINT (epoch-ms times, byte counts, COUNT) and NUMERIC (SUM of BIGINT) come back as JS numbers
// on this database's connections only; pg's global parsers stay as they are. Our values stay far
// below 2^53.
const BIGINT_OID = 20;
const NUMERIC_OID = 1700;
function numberTypes(): pg.TypeOverrides {
  const types = new pg.TypeOverrides();
  types.setTypeParser(BIGINT_OID, Number);
  types.setTypeParser(NUMERIC_OID, Number);
  return types;
}

// Advisory lock names: the schema lock is held for the whole migration run (session-scoped).
const MIGRATION_LOCK = 'remote-browser-kit:schema-migrations';
const LISTENER_RETRY_MS = { first: 250, max: 5_000 };
/** Connections one lock's transactions of this node hold at once (takeSlot()). */
const LOCK_SLOTS = 2;

// The store's SQL texts use `?`; Postgres numbers its parameters. Texts are few and reused.
const numberedTexts = new Map<string, string>();
function numbered(sql: string): string {
  let text = numberedTexts.get(sql);
  if (text === undefined) {
    let index = 0;
    text = sql.replace(/\?/g, () => `$${++index}`);
    numberedTexts.set(sql, text);
  }
  return text;
}

/**
 * Queries on the pool (each on any free connection) or on one checked-out connection. A checked-out
 * connection runs one query at a time: work in a transaction may ask for several at once
 * (Promise.all), which pg only queues with a deprecation warning (an error from pg 9), so they
 * wait their turn here.
 */
class PostgresConnection implements SqlConnection {
  readonly dialect = 'postgres' as const;
  /** The last query asked of a checked-out connection; the next one starts after it settles. */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly queryable: pg.Pool | pg.PoolClient) {}

  private query(sql: string, params: readonly SqlValue[]): Promise<pg.QueryResult> {
    if (this.queryable instanceof pg.Pool) return this.queryable.query(numbered(sql), params as SqlValue[]);
    const client = this.queryable;
    const result = this.tail.then(() => client.query(numbered(sql), params as SqlValue[]));
    this.tail = result.catch(() => undefined);
    return result;
  }

  async all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return (await this.query(sql, params)).rows as T[];
  }

  async get<T>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return (await this.query(sql, params)).rowCount ?? 0;
  }
}

export class PostgresDatabase extends PostgresConnection implements Database {
  private listener: Promise<pg.Client> | undefined;
  private listenerClient: pg.Client | undefined;
  private listenerRetryMs = LISTENER_RETRY_MS.first;
  /** Per lock name, this node's transactions holding a connection for it, and those waiting in memory (takeSlot()). */
  private readonly lockSlots = new Map<string, { held: number; waiting: Array<() => void> }>();
  private listenerRetry: NodeJS.Timeout | undefined;
  private readonly handlers = new Map<string, Set<(payload: string) => void>>();
  private closed = false;

  private constructor(
    /** The connection pool; the rate limiter shares it. */
    readonly pool: pg.Pool,
    private readonly config: pg.ClientConfig,
    /** Where the database's own troubles are told (the engine's log). */
    private readonly warn: (message: string) => void,
  ) {
    super(pool);
  }

  /** Connects to the database at `url` (postgres://user:password@host:port/db) and migrates it. */
  static async open(url: string, warn: (message: string) => void = (message) => console.warn(message)): Promise<PostgresDatabase> {
    const where = describe(url);
    const config: pg.ClientConfig = { connectionString: url, types: numberTypes(), keepAlive: true, connectionTimeoutMillis: 15_000 };
    const pool = new pg.Pool(config);
    // A connection that breaks while idle in the pool is dropped by the pool; nothing else to do.
    pool.on('error', (error) => warn(`database connection lost (${where}): ${error.message}`));
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      await pool.end().catch(() => {});
      throw new Error(`cannot reach the database at ${where}: ${reason(error)}; check --database`);
    }
    const migrated = await migrate(client).catch((error: unknown) => error as Error);
    // Closed rather than pooled: closing also frees the migration lock if unlocking failed.
    client.release(true);
    if (migrated) {
      await pool.end().catch(() => {});
      throw new Error(`cannot prepare the database at ${where}: ${reason(migrated)}`);
    }
    return new PostgresDatabase(pool, config, warn);
  }

  async transaction<T>(work: (tx: SqlConnection) => Promise<T>, lock: string): Promise<T> {
    const leave = await this.takeSlot(lock);
    try {
      return await this.transactionNow(work, lock);
    } finally {
      leave();
    }
  }

  /**
   * A slot among this node's transactions of `lock` that may hold a pooled connection at once: the
   * one holding the advisory lock and the next, already waiting for it in Postgres (so the lock
   * passes on without a round trip); the rest wait in memory. Queued on the advisory lock alone,
   * ten creates at once held every connection of the pool, and every other query (a status write,
   * a read) waited behind them.
   */
  private async takeSlot(lock: string): Promise<() => void> {
    let slots = this.lockSlots.get(lock);
    if (!slots) this.lockSlots.set(lock, (slots = { held: 0, waiting: [] }));
    const room = slots;
    if (room.held < LOCK_SLOTS) room.held++;
    // A slot given up is handed straight to the first waiter: `held` stays as it is.
    else await new Promise<void>((resolve) => room.waiting.push(resolve));
    return () => {
      const next = room.waiting.shift();
      if (next) return next();
      room.held--;
      if (room.held === 0) this.lockSlots.delete(lock);
    };
  }

  private async transactionNow<T>(work: (tx: SqlConnection) => Promise<T>, lock: string): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    // Out of the pool, a connection that breaks between two queries (the database restarting) is
    // told to this client alone: unheard, that 'error' would end the engine and every session of
    // the node. It is noted, and the connection is closed instead of going back to the pool.
    const lost = (error: Error) => (broken ??= error);
    client.on('error', lost);
    try {
      // Held until COMMIT or ROLLBACK: every transaction with the same lock name, on any node,
      // waits here, so its reads are still true when it writes. One round trip for both: the lock
      // names are the engine's own words, quoted as a literal.
      await client.query(`BEGIN; SELECT pg_advisory_xact_lock(hashtext(${client.escapeLiteral(lock)}))`);
      const result = await work(new PostgresConnection(client));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      throw error;
    } finally {
      // A connection that broke or could not roll back is closed instead of going back to the pool
      // (still heard while it closes); a sound one goes back, where the pool hears it.
      if (!broken) client.off('error', lost);
      client.release(broken ?? false);
    }
  }

  /** A round trip on a pooled connection within `timeoutMs` (Postgres takes writes whenever it answers). */
  async probeWrite(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error('cannot reach the database: no answer in time'), { code: 'ETIMEDOUT' })), timeoutMs);
    });
    try {
      await Promise.race([this.run('SELECT 1'), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Calls `onMessage` with each message on `channel`. Messages sent while the listening connection
   * is being re-established are lost: they are hints to look at the store again, not the truth.
   */
  async listen(channel: string, onMessage: (payload: string) => void): Promise<void> {
    let handlers = this.handlers.get(channel);
    if (!handlers) this.handlers.set(channel, (handlers = new Set()));
    handlers.add(onMessage);
    try {
      const client = await this.connectListener();
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (error) {
      handlers.delete(onMessage);
      if (handlers.size === 0) this.handlers.delete(channel);
      throw error;
    }
  }

  async notify(channel: string, payload: string): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.listenerRetry);
    const listener = this.listenerClient;
    this.listener = this.listenerClient = undefined;
    await listener?.end().catch(() => {});
    await this.pool.end();
  }

  /** The listening connection, connected and listening on every channel with handlers. */
  private connectListener(): Promise<pg.Client> {
    this.listener ??= (async () => {
      const client = new pg.Client(this.config);
      client.on('notification', (message) => this.deliver(message.channel, message.payload ?? ''));
      client.on('error', () => this.listenerLost(client));
      client.on('end', () => this.listenerLost(client));
      try {
        await client.connect();
        for (const channel of this.handlers.keys()) await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
      } catch (error) {
        this.listener = undefined;
        await client.end().catch(() => {});
        throw error;
      }
      if (this.closed) {
        await client.end().catch(() => {});
        throw new Error('the database is closed');
      }
      this.listenerClient = client;
      this.listenerRetryMs = LISTENER_RETRY_MS.first;
      return client;
    })();
    return this.listener;
  }

  private deliver(channel: string, payload: string): void {
    for (const handler of this.handlers.get(channel) ?? []) {
      try {
        handler(payload);
      } catch (error) {
        this.warn(`a handler of database channel ${channel} failed: ${reason(error)}`);
      }
    }
  }

  /** The listening connection broke: connect again after a short, growing pause. */
  private listenerLost(client: pg.Client): void {
    if (this.closed || this.listenerClient !== client) return;
    this.listener = this.listenerClient = undefined;
    client.end().catch(() => {});
    this.retryListener();
  }

  private retryListener(): void {
    if (this.closed) return;
    const delay = this.listenerRetryMs;
    this.listenerRetryMs = Math.min(delay * 2, LISTENER_RETRY_MS.max);
    this.listenerRetry = setTimeout(() => this.connectListener().catch(() => this.retryListener()), delay);
    this.listenerRetry.unref();
  }
}

/** Applies the migrations this database lacks; one node at a time (the others wait, then skip). */
async function migrate(client: pg.PoolClient): Promise<void> {
  await client.query('SELECT pg_advisory_lock(hashtext($1))', [MIGRATION_LOCK]);
  try {
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)');
    const { rows } = await client.query<{ version: number | null }>('SELECT MAX(version) AS version FROM schema_migrations');
    for (let version = (rows[0]?.version ?? 0) + 1; version <= POSTGRES_MIGRATIONS.length; version++) {
      try {
        await client.query('BEGIN');
        await client.query(POSTGRES_MIGRATIONS[version - 1]!);
        await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [version, Date.now()]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw new Error(`migration ${version} failed: ${reason(error)}`);
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [MIGRATION_LOCK]).catch(() => {});
  }
}

/** The database's address for messages: host, port and database name, never the password. */
function describe(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('the database address is not a URL like postgres://user:password@host:5432/db; check --database');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new Error(`the database address must start with postgres:// (not ${parsed.protocol}//); check --database`);
  }
  return `postgres://${parsed.hostname || 'localhost'}:${parsed.port || 5432}${parsed.pathname}`;
}

/** An error's reason; Node reports a refused connection to every address of a name without one. */
function reason(error: unknown): string {
  if (error instanceof AggregateError && !error.message) return error.errors.map(reason).join(', ');
  if (error instanceof Error) return error.message || (error as NodeJS.ErrnoException).code || error.name;
  return String(error);
}
