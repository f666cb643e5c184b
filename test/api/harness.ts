// Black-box harness for the v8 HTTP interface: starts the real engine (`remote-browser-kit serve`)
// as a child process on a fresh data directory (and, in the `api-postgres` test project, a fresh
// Postgres database: RBK_TEST_STORE=postgres), sets up accounts and keys with the operator CLI,
// serves start pages from a local HTTP server, and speaks raw HTTP to the engine so tests can send
// exactly the bytes and headers a caller would (Origin, Sec-Fetch-Mode, invalid UTF-8...).
import { findMarkedProcesses, killMarkedProcesses } from '../../src/engine/runtime/sandbox/processes.js';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EngineConfigInput } from '../../src/engine/config.js';
import { testDatabase } from '../helpers/postgres.js';

/** The package root (/work/main): the engine's CLI runs from here. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = ['--import', 'tsx', 'src/engine/cli.ts'];

// ---------------------------------------------------------------------------------------------
// Configuration

/** A plan as a configuration file writes it (the engine's own input type). */
export type PlanConfig = NonNullable<EngineConfigInput['plans']>[number];

/** The configuration file the test engines read: the engine's own input type. */
export type EngineConfig = EngineConfigInput;

/** Which store the engines of this test run use: `postgres` in the api-postgres project, else SQLite. */
export const TEST_STORE: 'sqlite' | 'postgres' = process.env.RBK_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

/** The cluster secret of test engines on Postgres. */
export const TEST_CLUSTER_SECRET = 'test-cluster-secret-0123456789abcdef';

function plan(id: string, name: string, rest: Partial<PlanConfig>): PlanConfig {
  return {
    id,
    name,
    running_session_limit: 3,
    cycle_session_limit: 5,
    residential_cycle_mb_limit: null,
    location_access: false,
    programmatic_access: true,
    max_session_minutes: 120,
    idle_timeout_minutes: 60,
    ...rest,
  };
}

/** The plans every test server knows. */
export const PLANS = {
  /** running 3, cycle 5, no location access, no residential allowance. */
  basic: plan('basic', 'Basic', {}),
  /** running 3, no cycle cap, location access. */
  unlimited: plan('unlimited', 'Unlimited', { cycle_session_limit: null, location_access: true }),
  /** running 2, cycle 20, residential 100 MB, location access. */
  geo: plan('geo', 'Geo', { running_session_limit: 2, cycle_session_limit: 20, residential_cycle_mb_limit: 100, location_access: true }),
  /** running 1, cycle 10, residential 200 MB, location access. */
  geoPlus: plan('geo-plus', 'Geo Plus', { running_session_limit: 1, cycle_session_limit: 10, residential_cycle_mb_limit: 200, location_access: true }),
  /** No programmatic access. */
  noApi: plan('no-api', 'Viewer only', { running_session_limit: 1, programmatic_access: false }),
  /** running 3, a large cycle allowance: for the concurrency tests. */
  burst: plan('burst', 'Burst', { cycle_session_limit: 200 }),
} satisfies Record<string, PlanConfig>;

export const SHARE_BASE = 'https://share.example.test';

/** A dead upstream: these tests never start a session through an exit location. */
export const DEAD_UPSTREAM = 'http://127.0.0.1:9';

export const LOCATIONS = [
  {
    code: 'us',
    name: 'United States',
    default: 'us-dal',
    cities: [
      // The United States has no single time zone: each city names its own.
      { code: 'us-dal', location: 'Dallas', upstream: DEAD_UPSTREAM, capacity: 2, timeZone: 'America/Chicago' },
      { code: 'us-nyc', location: 'New York', upstream: DEAD_UPSTREAM, capacity: 2, timeZone: 'America/New_York' },
    ],
  },
  {
    code: 'de',
    name: 'Germany',
    default: 'de-fra',
    cities: [{ code: 'de-fra', location: 'Frankfurt', upstream: DEAD_UPSTREAM, capacity: 2 }],
  },
];

export function testConfig(overrides: Partial<EngineConfig> = {}): EngineConfig {
  return {
    plans: Object.values(PLANS),
    rateLimit: { requests: 100_000, perSeconds: 60 }, standby: { afterSeconds: false },
    egress: { allow: ['127.0.0.0/8', '::1/128'] },
    shareBase: SHARE_BASE,
    locations: LOCATIONS,
    residential: { upstream: DEAD_UPSTREAM, countries: null },
    // No warm pool: these tests find a session's processes and directory as the only new ones.
    warm: { memoryMb: 0, displays: 0 },
    ...overrides,
  };
}

// ---------------------------------------------------------------------------------------------
// The engine as a child process

const liveChildren = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of liveChildren) {
    try {
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

export interface Workspace {
  dir: string;
  dataDir: string;
  configPath: string;
}

/**
 * The store settings of this test run's engines: nothing for SQLite; a fresh database and the
 * cluster secret on Postgres (the api-postgres project). Also for an engine made in the test's
 * own process with createEngine().
 */
export async function testStore(): Promise<Pick<EngineConfig, 'database' | 'cluster'>> {
  return TEST_STORE === 'postgres' ? { database: await testDatabase(), cluster: { secret: TEST_CLUSTER_SECRET } } : {};
}

export async function makeWorkspace(config: EngineConfig = testConfig()): Promise<Workspace> {
  if (TEST_STORE === 'postgres' && config.database === undefined) {
    const store = await testStore();
    config = { ...config, ...store, cluster: { ...store.cluster!, ...config.cluster } };
  }
  const dir = await mkdtemp(join(tmpdir(), 'rbk-api-'));
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify(config, null, 2));
  return { dir, dataDir: join(dir, 'data'), configPath };
}

export interface StartOptions {
  config?: EngineConfig;
  /** Reuse a workspace (data directory and config), e.g. to restart on the same data. */
  workspace?: Workspace;
  env?: Record<string, string>;
  /** The engine's open-files limit (prlimit), lower than this machine's to reach it in a bounded test. */
  fileLimit?: number;
}

export interface EngineProcess {
  readonly url: string;
  /** The JSON line `serve --json` printed when ready. */
  readonly facts: Record<string, unknown>;
  readonly workspace: Workspace;
  readonly child: ChildProcess;
  /** Whether the process is still alive. */
  alive(): boolean;
  /** Last output, for failure messages. */
  output(): string;
  /** SIGTERM, then SIGKILL after 3 s; waits for the exit. */
  stop(): Promise<void>;
  /** kill -9, waits for the exit. */
  kill9(): Promise<void>;
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export async function startEngine(options: StartOptions = {}): Promise<EngineProcess> {
  const workspace = options.workspace ?? (await makeWorkspace(options.config));
  const serve = [process.execPath, ...CLI, 'serve', '--port', '0', '--host', '127.0.0.1', '--data', workspace.dataDir, '--config', workspace.configPath, '--json'];
  const [command, ...args] = options.fileLimit === undefined ? serve : ['prlimit', `--nofile=${options.fileLimit}:${options.fileLimit}`, '--', ...serve];
  const child = spawn(
    command!,
    args,
    { cwd: ROOT, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
  let log = '';
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString('utf8')).slice(-20_000);
  };
  child.stderr!.on('data', keep);

  const facts = await new Promise<Record<string, unknown>>((resolve, reject) => {
    let buffered = '';
    let done = false;
    const finish = (error: Error | null, value?: Record<string, unknown>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(value!);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(new Error(`engine did not print its ready line within 30 s; output:\n${log}`));
    }, 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      keep(chunk);
      if (done) return;
      buffered += chunk.toString('utf8');
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (!line.startsWith('{')) continue;
        try {
          const parsed = JSON.parse(line) as Record<string, unknown>;
          if (typeof parsed.url === 'string') return finish(null, parsed);
        } catch {
          /* not the ready line */
        }
      }
    });
    child.once('exit', (code, signal) => finish(new Error(`engine exited before it was ready (code ${code}, signal ${signal}); output:\n${log}`)));
  });

  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    url: facts.url as string,
    facts,
    workspace,
    child,
    alive,
    output: () => log,
    async stop() {
      if (!alive()) return;
      child.kill('SIGTERM');
      if (!(await waitForExit(child, 3000))) {
        child.kill('SIGKILL');
        await waitForExit(child, 5000);
      }
    },
    async kill9() {
      if (!alive()) return;
      child.kill('SIGKILL');
      await waitForExit(child, 5000);
    },
  };
}

export async function removeWorkspace(workspace: Workspace | undefined): Promise<void> {
  if (!workspace) return;
  // A stopped engine leaves nothing behind: no display, browser or helper of any session.
  const root = join(workspace.dataDir, 'sessions');
  const deadline = Date.now() + 3000;
  let left = (await findMarkedProcesses({ root })).filter((p) => !p.zombie);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = (await findMarkedProcesses({ root })).filter((p) => !p.zombie);
  }
  if (left.length > 0) await killMarkedProcesses({ root });
  await rm(workspace.dir, { recursive: true, force: true, maxRetries: 3 });
  if (left.length > 0) throw new Error(`the stopped engine left ${left.length} session processes running: ${left.map((p) => p.command.slice(0, 80)).join('; ')}`);
}

// ---------------------------------------------------------------------------------------------
// Operator CLI

export async function runCli(workspace: Workspace, args: string[], env: Record<string, string> = {}): Promise<unknown> {
  const argv = [...CLI, ...args, '--data', workspace.dataDir, '--config', workspace.configPath, '--json'];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, argv, { cwd: ROOT, env: { ...process.env, ...env }, timeout: 90_000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`CLI ${args.join(' ')} failed: ${error.message}\nstdout: ${stdout}\nstderr: ${stderr}`));
      try {
        resolve(JSON.parse(stdout));
      } catch {
        reject(new Error(`CLI ${args.join(' ')} printed no JSON: ${stdout}\nstderr: ${stderr}`));
      }
    });
  });
}

export interface TestAccount {
  id: string;
  contact: string;
  subscriptions: { id: string; plan_id: string; cycle_start: string }[];
  key: string;
  keyId: string;
}

let contactCounter = 0;

export async function createAccount(
  workspace: Workspace,
  plans: PlanConfig[],
  options: { contact?: string; cycleStart?: string } = {},
): Promise<TestAccount> {
  const contact = options.contact ?? `user${++contactCounter}-${process.pid}@example.com`;
  const args = ['accounts', 'create', '--contact', contact];
  for (const p of plans) args.push('--plan', p.id);
  if (options.cycleStart) args.push('--cycle-start', options.cycleStart);
  const out = (await runCli(workspace, args)) as {
    account: { id: string; contact: string; subscriptions: { id: string; plan_id: string; cycle_start: string }[] };
    apiKey: { id: string; key: string };
  };
  return { id: out.account.id, contact: out.account.contact, subscriptions: out.account.subscriptions, key: out.apiKey.key, keyId: out.apiKey.id };
}

export async function createKey(workspace: Workspace, accountId: string): Promise<{ id: string; key: string; account_id: string }> {
  return (await runCli(workspace, ['keys', 'create', '--account', accountId])) as { id: string; key: string; account_id: string };
}

export async function listKeys(workspace: Workspace, accountId: string): Promise<{ id: string; prefix: string; created: string; revoked: boolean }[]> {
  return (await runCli(workspace, ['keys', 'list', '--account', accountId])) as { id: string; prefix: string; created: string; revoked: boolean }[];
}

export async function revokeKey(workspace: Workspace, keyId: string): Promise<{ id: string; revoked: boolean }> {
  return (await runCli(workspace, ['keys', 'revoke', keyId])) as { id: string; revoked: boolean };
}

// ---------------------------------------------------------------------------------------------
// HTTP

export interface Reply {
  http: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed body; `undefined` when it is not JSON. */
  json: any;
}

export interface RequestOptions {
  key?: string;
  /** A value to send as JSON. */
  body?: unknown;
  /** Exact bytes to send as the body (Content-Type stays JSON). */
  raw?: Buffer | string;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export function send(base: string, method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
  const url = new URL(path, base);
  const headers: Record<string, string | number> = { accept: 'application/json', ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let payload: Buffer | undefined;
  if (options.raw !== undefined) payload = Buffer.isBuffer(options.raw) ? options.raw : Buffer.from(options.raw, 'utf8');
  else if (options.body !== undefined) payload = Buffer.from(JSON.stringify(options.body), 'utf8');
  if (payload) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = payload.length;
  }
  return new Promise((resolve, reject) => {
    let settled = false;
    const req = httpRequest(url, { method, headers, agent: false, timeout: options.timeoutMs ?? 15_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (e) => {
        if (!settled) (settled = true), reject(e);
      });
      res.on('end', () => {
        if (settled) return;
        settled = true;
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ http: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${options.timeoutMs ?? 15_000} ms`)));
    req.on('error', (e) => {
      if (!settled) (settled = true), reject(new Error(`${method} ${path}: ${e.message}`));
    });
    req.end(payload);
  });
}

/** A client bound to one engine and one key. */
export class Api {
  constructor(
    readonly base: string,
    readonly key?: string,
  ) {}
  withKey(key: string | undefined): Api {
    return new Api(this.base, key);
  }
  get(path: string, options: Omit<RequestOptions, 'body' | 'raw'> = {}): Promise<Reply> {
    return send(this.base, 'GET', path, { ...this.keyOption(), ...options });
  }
  post(path: string, body: unknown, options: Omit<RequestOptions, 'body'> = {}): Promise<Reply> {
    return send(this.base, 'POST', path, { ...this.keyOption(), body, ...options });
  }
  image(): Promise<Reply> {
    return send(this.base, 'GET', '/v8/image');
  }
  create(body: unknown, options: Omit<RequestOptions, 'body'> = {}): Promise<Reply> {
    return this.post('/v8/vm/create', body, options);
  }
  remove(id: unknown): Promise<Reply> {
    return this.post('/v8/vm/remove', { id });
  }
  data(id?: string): Promise<Reply> {
    return this.get(id === undefined ? '/v8/vm/data' : `/v8/vm/data?id=${encodeURIComponent(id)}`);
  }
  quota(): Promise<Reply> {
    return this.get('/v8/user/quota');
  }
  user(): Promise<Reply> {
    return this.get('/v8/user/api');
  }
  private keyOption(): { key?: string } {
    return this.key === undefined ? {} : { key: this.key };
  }
}

export function describeReply(reply: Reply): string {
  return `HTTP ${reply.http} ${reply.text.slice(0, 500)}`;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Status of one session as vm/data reports it, or `null` when the list is empty. */
export async function sessionStatus(api: Api, vmId: string): Promise<string | null> {
  const reply = await api.data(vmId);
  if (reply.json?.status !== 'ok') throw new Error(`vm/data?id= did not answer ok: ${describeReply(reply)}`);
  const entry = reply.json.data?.[0] as { status: string } | undefined;
  return entry ? entry.status : null;
}

/** Polls vm/data until the session's status is one of `wanted`; returns the last status seen. */
export async function waitForStatus(api: Api, vmId: string, wanted: string[], timeoutMs = 20_000): Promise<string | null> {
  const deadline = Date.now() + timeoutMs;
  let status = await sessionStatus(api, vmId);
  while (!(status !== null && wanted.includes(status)) && Date.now() < deadline) {
    await sleep(200);
    status = await sessionStatus(api, vmId);
  }
  return status;
}

/** Polls until `probe` gives a value `accept` takes; returns the last value. */
export async function poll<T>(probe: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 10_000, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!accept(value) && Date.now() < deadline) {
    await sleep(everyMs);
    value = await probe();
  }
  return value;
}

/** Removes sessions (errors ignored) and waits until each is deleted or gone, so browsers do not pile up. */
export async function removeSessions(api: Api, vmIds: Iterable<string>): Promise<void> {
  const ids = [...new Set(vmIds)];
  await Promise.all(
    ids.map(async (id) => {
      try {
        await api.remove(id);
        await waitForStatus(api, id, ['deleted'], 10_000);
      } catch {
        /* best effort */
      }
    }),
  );
}

/** `'*'.repeat(...)` masking of decisions.md 4. */
export function maskId(id: string): string {
  return id.length <= 8 ? id : id.slice(0, 4) + '*'.repeat(id.length - 8) + id.slice(-4);
}

// ---------------------------------------------------------------------------------------------
// Start pages

export interface PageServer {
  origin: string;
  /** A page that loads at once. */
  page: string;
  /** A page whose answer comes after `ms` milliseconds. */
  slow(ms: number): string;
  /** A page that never answers: the session stays `starting`. */
  hang: string;
  /** How many requests reached `path` (with its query), e.g. to see which address a browser opened. */
  hits(path: string): number;
  close(): Promise<void>;
}

export async function startPageServer(): Promise<PageServer> {
  const sockets = new Set<Socket>();
  const hits = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://pages');
    hits.set(url.pathname + url.search, (hits.get(url.pathname + url.search) ?? 0) + 1);
    if (url.pathname === '/favicon.ico') return void response.writeHead(404).end();
    if (url.pathname === '/hang') return; // never answered
    const body = '<!doctype html><meta charset="utf-8"><title>Start page</title><body>start page</body>';
    const ms = url.pathname === '/slow' ? Number(url.searchParams.get('ms') ?? '0') : 0;
    setTimeout(() => {
      if (!response.destroyed) response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    }, ms);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    page: `${origin}/page`,
    slow: (ms) => `${origin}/slow?ms=${ms}`,
    hang: `${origin}/hang`,
    hits: (path) => hits.get(path) ?? 0,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Dates

export function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** `YYYY-MM-DD` plus whole calendar months, day of month kept and clamped to the month's end (decisions.md 13). */
export function addMonths(day: string, months: number): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const monthIndex = m - 1 + months;
  const year = y + Math.floor(monthIndex / 12);
  const month = ((monthIndex % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return isoDay(new Date(Date.UTC(year, month, Math.min(d, lastDay))));
}

export const DAY_MS = 24 * 60 * 60 * 1000;
