// The engine fixture of in-process tests: an engine in a data directory of its own (the real
// runtime, or the fake one for tests of the service's decisions), a loopback site it may reach,
// and an account with an API key; close() ends all three.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PLANS, DEFAULT_WARM } from '../../src/engine/config.js';
import { createEngine, type Engine, type EngineOptions } from '../../src/engine/engine.js';
import type { EngineRuntime } from '../../src/engine/sessions/node-runtime.js';
import { FakeRuntime, type FakeRuntimeOptions } from './fake-runtime.js';
import { v8Caller } from './site.js';

export interface EngineFixtureOptions extends Omit<EngineOptions, 'dataDir' | 'port' | 'runtime'> {
  /** Names the data directory and the account's contact; default `engine`. */
  name?: string;
  /** What the site answers: one page (UTF-8 HTML) for every path but /favicon.ico, or a handler of its own. */
  site?: string | RequestListener;
  /** The account's plans; default `pro`. */
  plans?: string[];
}

export interface EngineFixture<Runtime extends EngineRuntime = Engine['runtime']> {
  engine: Engine<Runtime>;
  /** The loopback site sessions open: `origin` is `http://127.0.0.1:<port>`. */
  site: { origin: string };
  /** The account the fixture made, and its key. */
  account: { id: string; subscriptionId: string; key: string };
  /** Calls `/v8<path>` of the engine with the account's key: GET without a body, POST with one. */
  call(path: string, body?: unknown): Promise<Record<string, any>>;
  /** Ends the engine (and its sessions), the site, and removes the data directory. */
  close(): Promise<void>;
}

/**
 * The tests' own settings under the test's `config`: the loopback site reachable, a rate limit
 * that polling never meets, no standby (many tests drive a session's browser through engine
 * internals with nothing attached; test/engine/standby.test.ts turns it on), and no warm pool
 * (a test's sessions start as they would on a quiet node, and no Chromium warms and refills beside
 * them: issue 54; a test of warm starts asks for the pool). A test's own top-level keys replace these.
 */
const TEST_DEFAULTS = {
  egress: { allow: ['127.0.0.1/32'] },
  rateLimit: { requests: 100_000, perSeconds: 1 },
  standby: { afterSeconds: false as const },
  warm: { ...DEFAULT_WARM, memoryMb: 0, displays: 0 },
};

/** The fixture's account on `recorded`, the `pro` plan with recording allowed (issue 35): spread into `startEngine`'s options. */
export function recordedPlan(): Pick<EngineFixtureOptions, 'plans' | 'config'> {
  const pro = DEFAULT_PLANS.find((plan) => plan.id === 'pro')!;
  return { plans: ['recorded'], config: { plans: [...DEFAULT_PLANS, { ...pro, id: 'recorded', name: 'Recorded', recording: true }] } };
}

export function startEngine(options?: EngineFixtureOptions & { runtime?: 'real' }): Promise<EngineFixture>;
export function startEngine(options: EngineFixtureOptions & { runtime: 'fake'; fake?: FakeRuntimeOptions }): Promise<EngineFixture<FakeRuntime>>;
export async function startEngine(options: EngineFixtureOptions & { runtime?: 'real' | 'fake'; fake?: FakeRuntimeOptions } = {}): Promise<EngineFixture<EngineRuntime>> {
  const { name = 'engine', site: answer = '<!doctype html><title>page</title>', plans = ['pro'], runtime: kind, fake, config, ...engineOptions } = options;
  const listener: RequestListener = typeof answer === 'string'
    ? (request, response) => {
        if (request.url === '/favicon.ico') return void response.writeHead(404).end();
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(answer);
      }
    : answer;
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const closeSite = () => new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  const dir = await mkdtemp(join(tmpdir(), `rbk-${name}-`));
  let engine: Engine<EngineRuntime>;
  try {
    const settings = { dataDir: dir, port: 0, ...engineOptions, config: { ...TEST_DEFAULTS, ...config } };
    engine = kind === 'fake' ? await createEngine({ ...settings, runtime: new FakeRuntime(fake) }) : await createEngine(settings);
  } catch (error) {
    await closeSite();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const created = await engine.accounts.create({ contact: `${name}@example.com`, plans });
  const key = created.apiKey.key;
  return {
    engine,
    site: { origin },
    account: { id: created.account.id, subscriptionId: created.account.subscriptions[0]!.id, key },
    call: v8Caller(() => engine.url, () => key),
    async close() {
      await engine.close();
      await closeSite();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
