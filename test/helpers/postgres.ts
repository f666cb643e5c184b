// Test helper: a throwaway Postgres cluster for tests and benchmarks. Debian's Postgres 15 binaries
// run directly (not the system service) as the `postgres` user when we are root, on 127.0.0.1 and
// a free port, data and socket in a temp dir; durability is off, it is thrown away at stop(). The
// fault suite halts it (a restart, or SIGKILL to all its processes) and resumes it on the same port.
// Tests get a fresh database each with createDatabase(); a vitest run shares one cluster
// (postgres-global.ts puts its address in RBK_TEST_POSTGRES, testDatabase() uses it).
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { connect } from 'node:net';
import { freePort, stopProcess, waitUntilServing } from './server-process.js';

export const POSTGRES_BIN = '/usr/lib/postgresql/15/bin';
const USER = 'rbk';

export interface TestPostgres {
  /** The URL of database `db` on this cluster (user rbk, no password). */
  url(db: string): string;
  /** Creates a fresh, uniquely named database; answers its URL. */
  createDatabase(): Promise<string>;
  /**
   * Stops the server and keeps its data, as an operator's restart or a crash does: SIGINT is
   * Postgres's fast shutdown, SIGKILL ends every one of its processes at once. resume() starts it
   * again on the same port.
   */
  halt(signal: 'SIGINT' | 'SIGKILL'): Promise<void>;
  /** Starts a halted server again (crash recovery after SIGKILL) and waits until it answers. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

export async function startPostgres(): Promise<TestPostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'rbk-postgres-'));
  const owner = postgresUser();
  if (owner) await chown(dir, owner.uid, owner.gid);
  const as = { ...owner, cwd: dir };
  const data = join(dir, 'data');
  try {
    await promisify(execFile)(join(POSTGRES_BIN, 'initdb'), ['-D', data, '--auth=trust', '-U', USER, '-E', 'UTF8', '--no-locale', '--no-sync', '--no-instructions'], as);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`initdb failed: ${(error as Error).message}\n${stdout}${stderr}`);
  }

  const port = await freePort();
  const logFile = join(dir, 'postgres.log');
  const settings = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '200' };
  const url = (db: string) => `postgres://${USER}@127.0.0.1:${port}/${db}`;
  let child: ChildProcess;
  /** Starts the server (a process group of its own, so that a crash can end all of it) and waits until it answers. */
  const serve = async () => {
    const log = openSync(logFile, 'a');
    child = spawn(
      join(POSTGRES_BIN, 'postgres'),
      ['-D', data, '-h', '127.0.0.1', '-p', String(port), '-k', dir, ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`])],
      { ...as, stdio: ['ignore', log, log], detached: true },
    );
    closeSync(log);
    await waitUntilServing('postgres', child, logFile, async () => {
      const client = new pg.Client({ connectionString: url('postgres'), connectionTimeoutMillis: 1_000 });
      try {
        await client.connect();
      } finally {
        await client.end().catch(() => {});
      }
    });
  };
  const halt = async (signal: 'SIGINT' | 'SIGKILL') => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (signal === 'SIGKILL') process.kill(-child.pid!, 'SIGKILL');
    else await stopProcess(child, 'SIGINT');
    await exited;
    // Its backends go with it (its group); wait until none holds the port before it may start again.
    await waitForPortFree(port);
  };
  const stop = async () => {
    // SIGINT is Postgres's fast shutdown: it ends the sessions and exits without waiting for them.
    await stopProcess(child, 'SIGINT');
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await serve();
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, createDatabase: () => createDatabaseOn(url('postgres')), halt, resume: serve, stop };
}

/** A fresh database on the cluster of the shared test run (see postgres-global.ts); its URL. */
export function testDatabase(): Promise<string> {
  const base = process.env.RBK_TEST_POSTGRES;
  if (!base) throw new Error(`RBK_TEST_POSTGRES is not set: run through vitest's Node projects (their globalSetup starts Postgres; needs ${POSTGRES_BIN}, see scripts/setup.mjs --test)`);
  return createDatabaseOn(base);
}

let created = 0;

/** Creates a uniquely named database on the cluster `base` (any database URL on it) reaches. */
export async function createDatabaseOn(base: string): Promise<string> {
  const name = `rbk_test_${process.pid}_${++created}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Postgres does not run as root: as root, its processes run as Debian's `postgres` user. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** Waits (at most 30 s) until nothing accepts connections on the port of 127.0.0.1. */
async function waitForPortFree(port: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (!open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`port ${port} still accepts connections 30 s after Postgres was halted`);
}
