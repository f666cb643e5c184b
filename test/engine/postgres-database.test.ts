// The Postgres database under the store, on the run's throwaway Postgres: migrations (also with
// two nodes opening at once), JS types of BIGINT and BOOLEAN columns, transactions serialized by
// their lock name and rolled back on error, LISTEN/NOTIFY between two nodes (also after the
// listening connection is cut), and the error for an unreachable database.
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresDatabase } from '../../src/engine/store/postgres.js';
import { POSTGRES_MIGRATIONS } from '../../src/engine/store/postgres-schema.js';
import { waitFor } from '../helpers/session.js';
import { testDatabase } from '../helpers/postgres.js';

const opened: PostgresDatabase[] = [];
async function open(url: string): Promise<PostgresDatabase> {
  const db = await PostgresDatabase.open(url);
  opened.push(db);
  return db;
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.close()));
});

describe('PostgresDatabase', () => {
  it('creates the schema once, also when two nodes open the database at the same time', async () => {
    const url = await testDatabase();
    const [first] = await Promise.all([open(url), open(url)]);
    const tables = await first!.all<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      'accounts', 'api_keys', 'engine_settings', 'hibernation_chunks', 'idempotency', 'nodes', 'profile_chunks', 'profile_versions', 'profiles', 'rate_limits', 'schema_migrations',
      'sessions', 'short_urls', 'subscriptions', 'v6_tokens', 'webhook_deliveries', 'webhooks',
    ]);
    expect(await first!.all('SELECT version FROM schema_migrations')).toEqual(
      POSTGRES_MIGRATIONS.map((_, index) => ({ version: index + 1 })),
    );
    // A third node later finds nothing to do.
    await open(url);
    expect(await first!.get('SELECT COUNT(*) AS n FROM schema_migrations')).toEqual({ n: POSTGRES_MIGRATIONS.length });
  });

  it('answers BIGINT, COUNT and SUM as numbers and flags as booleans', async () => {
    const db = await open(await testDatabase());
    const now = 1_790_000_000_000;
    expect(await db.run('INSERT INTO accounts (id, contact, created_at) VALUES (?, ?, ?)', ['acc', 'ops@example.com', now])).toBe(1);
    await db.run(
      'INSERT INTO subscriptions (id, account_id, plan_id, cycle_anchor, position, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      ['sub', 'acc', 'team', '2026-11-01', 0, now],
    );
    for (const [id, bytes] of [['s1', 3_000_000_000], ['s2', 5]] as const) {
      await db.run(
        `INSERT INTO sessions (id, account_id, subscription_id, status, browser, browser_name, language, layout,
           share_language, link_hash, created_at, egress_bytes, location_applied)
         VALUES (?, 'acc', 'sub', 'running', 'chromium', 'Chromium', 'en', 'us', 'en', ?, ?, ?, ?)`,
        [id, `hash-${id}`, now, bytes, id === 's1' ? false : null],
      );
    }
    const session = await db.get<Record<string, unknown>>('SELECT * FROM sessions ORDER BY seq LIMIT 1');
    expect(session).toMatchObject({ id: 's1', seq: 1, counted: true, ever_ran: false, location_applied: false, created_at: now, egress_bytes: 3_000_000_000 });
    expect(await db.get('SELECT location_applied FROM sessions WHERE id = ?', ['s2'])).toEqual({ location_applied: null });
    expect(await db.get('SELECT COUNT(*) AS n, SUM(egress_bytes) AS bytes FROM sessions')).toEqual({ n: 2, bytes: 3_000_000_005 });
    expect(await db.run('UPDATE sessions SET ever_ran = ? WHERE counted = ?', [true, true])).toBe(2);
    expect(await db.all('SELECT ever_ran FROM sessions')).toEqual([{ ever_ran: true }, { ever_ran: true }]);
  });

  it('runs the transactions of one lock name one after another', async () => {
    const db = await open(await testDatabase());
    await db.run('CREATE TABLE slots (taken_by INTEGER NOT NULL)');
    // Each takes a slot if fewer than 3 are taken, pausing between its read and its write.
    const takers = Array.from({ length: 20 }, (_, taker) =>
      db.transaction(async (tx) => {
        const { n } = (await tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM slots'))!;
        await tx.get('SELECT pg_sleep(0.005)');
        if (n >= 3) return false;
        await tx.run('INSERT INTO slots (taken_by) VALUES (?)', [taker]);
        return true;
      }, 'slots'),
    );
    const taken = await Promise.all(takers);
    expect(taken.filter(Boolean)).toHaveLength(3);
    expect(await db.get('SELECT COUNT(*) AS n FROM slots')).toEqual({ n: 3 });
  });

  it('rolls a failing transaction back and keeps its connection usable', async () => {
    const db = await open(await testDatabase());
    await db.run('CREATE TABLE notes (text TEXT NOT NULL)');
    const failing = db.transaction(async (tx) => {
      await tx.run('INSERT INTO notes (text) VALUES (?)', ['kept?']);
      throw new Error('the work failed');
    }, 'notes');
    await expect(failing).rejects.toThrow('the work failed');
    await expect(db.transaction((tx) => tx.run('INSERT INTO notes (text) VALUES (NULL)'), 'notes')).rejects.toThrow(/not-null/);
    expect(await db.get('SELECT COUNT(*) AS n FROM notes')).toEqual({ n: 0 });
    // Every connection went back to the pool, none is left in a transaction.
    expect(db.pool.totalCount).toBe(db.pool.idleCount);
    expect(await db.transaction((tx) => tx.all('SELECT text FROM notes'), 'notes')).toEqual([]);
  });

  it('delivers notifications to the other nodes, also after their listening connection was cut', async () => {
    const url = await testDatabase();
    const [sender, receiver] = await Promise.all([open(url), open(url)]);
    const received: string[] = [];
    await receiver.listen('Session-Events', (payload) => received.push(payload));
    await sender.notify('Session-Events', 'ended:s1');
    expect(await waitFor(() => received, (r) => r.length === 1, 5_000)).toEqual(['ended:s1']);

    // The database ends the listening connection: the receiver connects again and listens again.
    const cut = await sender.all("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'");
    expect(cut).toHaveLength(1);
    await waitFor(
      async () => {
        await sender.notify('Session-Events', 'ping');
        return received.includes('ping');
      },
      Boolean,
      10_000,
    );
    expect(received).toContain('ping');
  });

  it('says which database it cannot reach, without the password', async () => {
    const error = await PostgresDatabase.open('postgres://rbk:secret-pass@127.0.0.1:1/rbk').catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/^cannot reach the database at postgres:\/\/127\.0\.0\.1:1\/rbk: .*ECONNREFUSED.*; check --database$/);
    expect((error as Error).message).not.toContain('secret-pass');
    await expect(PostgresDatabase.open('rbk:secret-pass@db')).rejects.toThrow(/^the database address .*check --database$/);
    await expect(PostgresDatabase.open('rbk:secret-pass@db')).rejects.not.toThrow(/secret-pass/);
  });
});
