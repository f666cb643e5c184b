// Shared set-up for the proxy route tests: an engine in this process (test/helpers/engine.ts, on
// the fake runtime unless a test needs a browser), a start page on loopback, end users, and a
// record of every answer the browser got, scanned for the API key, upstream addresses and stack traces.
import { expect } from 'vitest';
import type { EngineConfigInput } from '../../src/engine/config.js';
import type { Engine } from '../../src/engine/engine.js';
import type { EngineRuntime } from '../../src/engine/sessions/node-runtime.js';
import { startEngine } from '../helpers/engine.js';

export const SECRET = 'proxy-route-test-secret-0123456789abcdef';
export const SHARE_BASE = 'https://share.example.test';
export const APP_ORIGIN = 'http://app.example.test';
export const BASE_PATH = '/api/remote-browser';

const plan = { residential_cycle_mb_limit: null, location_access: false, max_session_minutes: 60, idle_timeout_minutes: 30 };
export const PLANS = [
  { id: 'std', name: 'Standard', running_session_limit: 3, cycle_session_limit: null, programmatic_access: true, ...plan },
  /** Every create -> upgrade ("cycle session limit reached") without starting anything. */
  { id: 'spent', name: 'Spent', running_session_limit: 3, cycle_session_limit: 0, programmatic_access: true, ...plan },
  /** No programmatic access: every session call -> upgrade. */
  { id: 'viewer', name: 'Viewer', running_session_limit: 1, cycle_session_limit: 10, programmatic_access: false, ...plan },
];

export interface TestEngine {
  engine: Engine<EngineRuntime>;
  /** A page on loopback for sessions to open. */
  pageUrl: string;
  /** A new account on the plan; its API key. */
  key(planId?: string): Promise<{ key: string; accountId: string }>;
  close(): Promise<void>;
}

/**
 * The engine behind the route: the fake runtime by default (the route's tests are about the
 * route, not the browser); `real` where a session's browser must do something (files).
 */
export async function startTestEngine(config: EngineConfigInput = {}, runtime: 'real' | 'fake' = 'fake'): Promise<TestEngine> {
  const options = {
    name: 'proxy',
    site: '<title>start page</title><h1>start</h1>',
    plans: ['std'],
    config: { plans: PLANS, rateLimit: { requests: 100_000, perSeconds: 60 }, standby: { afterSeconds: false as const }, egress: { allow: ['127.0.0.0/8'] }, shareBase: SHARE_BASE, ...config },
  };
  const fixture = runtime === 'fake' ? await startEngine({ ...options, runtime: 'fake' }) : await startEngine(options);
  const { engine } = fixture;
  return {
    engine,
    pageUrl: `${fixture.site.origin}/`,
    async key(planId = 'std') {
      const created = await engine.accounts.create({ contact: `${planId}-${Math.random().toString(36).slice(2)}@example.com`, plans: [planId] });
      return { key: created.apiKey.key, accountId: created.account.id };
    },
    close: () => fixture.close(),
  };
}

/** Polls until `until` holds or the time is up; the last value either way. */
export async function poll<T>(read: () => Promise<T>, until: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!until(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

export interface Seen {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: any;
}

/** Every answer the browser side saw, to scan at the end. */
export class Exposure {
  readonly seen: Seen[] = [];

  async record(response: Response): Promise<Seen> {
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const seen = { status: response.status, headers: Object.fromEntries(response.headers), text, json };
    this.seen.push(seen);
    return seen;
  }

  /** None of the answers carries a secret, an upstream address or a stack trace. */
  expectClean(secrets: string[], addresses: string[]): void {
    expect(this.seen.length).toBeGreaterThan(0);
    for (const { status, headers, text } of this.seen) {
      const all = `${status}\n${JSON.stringify(headers)}\n${text}`;
      for (const secret of secrets) expect(all.includes(secret), `a response carries a secret: ${all.slice(0, 300)}`).toBe(false);
      for (const address of addresses) expect(all.includes(address), `a response carries the upstream address ${address}: ${all.slice(0, 300)}`).toBe(false);
      expect(all).not.toMatch(/Bearer|\n\s+at |rbk_[A-Za-z0-9_-]{20,}/);
    }
  }
}
