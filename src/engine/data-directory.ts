// The engine's data directory (docs/operator-cli.md): the database (the SQLite file here, or the
// Postgres database named instead) opened as the store and accounts, and this node's id, made at
// the first start and kept here. createEngine() and the operator CLI (which opens it without
// serving) both start from it. Both make the directory private first (data-directory-mode.ts).
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Accounts } from './accounts/accounts.js';
import type { EngineConfig } from './config.js';
import { describeOpenModes, makePrivate, prepareDatabaseFile } from './data-directory-mode.js';
import { POSTGRES_PART, requireEngineParts } from './parts.js';
import { SqliteDatabase } from './store/sqlite.js';
import { Store } from './store/store.js';

/**
 * Opens the store and accounts: Postgres when `database` (or the configuration) names one, else
 * SQLite in the data directory. The operator CLI uses this without serving.
 */
export async function openDataDirectory(
  dataDir: string,
  config: EngineConfig,
  now: () => number = Date.now,
  database: string | null = config.database,
  warn: (message: string) => void = (message) => console.warn(`remote-browser-kit: ${message}`),
): Promise<{ store: Store; accounts: Accounts }> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // Before the database opens, so nothing of it is read by others even for a moment.
  const changed = makePrivate(dataDir);
  if (changed.length > 0) warn(`the data directory was open to others on this host (${describeOpenModes(changed)}); made 0700 and its secret files 0600`);
  let opened;
  if (database) {
    if (!/^postgres(ql)?:\/\//.test(database)) throw new Error('--database must be a postgres:// URL (without it, SQLite in the data directory is used)');
    requireEngineParts('A postgres:// database', [POSTGRES_PART]);
    const { PostgresDatabase } = await import('./store/postgres.js');
    opened = await PostgresDatabase.open(database, warn);
  } else {
    opened = new SqliteDatabase(prepareDatabaseFile(dataDir));
    // The journal files SQLite made now take the database's mode; set again in case they were kept.
    makePrivate(dataDir);
  }
  const store = new Store(opened);
  return { store, accounts: new Accounts(store, config, now) };
}

/** This node's id: the configured one, else one made at the first start and kept in the data directory. */
export function nodeIdOf(dataDir: string, config: EngineConfig): string {
  if (config.node.id) return config.node.id;
  const file = join(dataDir, 'node-id');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    const id = `node-${randomBytes(6).toString('hex')}`;
    writeFileSync(file, `${id}\n`, { mode: 0o600 });
    return id;
  }
}
