// The v8 calls the automation benchmarks make (automation.ts, automation-bidi.ts): an account on a
// plan without limits that matter, create and wait until running, and a session's automation
// address (a Chromium session's browserWSEndpoint, a Firefox ESR session's webDriverBiDiEndpoint);
// and the four steps BrowserArena times (create + connect + go to a page + release), for any
// program that connects to that address.
import type { Engine } from '../src/engine/engine.js';
import { percentile, report } from './stats.js';

const samples = Number(process.env.RBK_BENCH_SAMPLES ?? 10);

export type BenchApi = Awaited<ReturnType<typeof serveOn>>;

export async function serveOn(engine: Engine) {
  const key = (await engine.accounts.create({ contact: `bench-${Date.now()}-${Math.random()}@example.com`, plans: ['unlimited'] })).apiKey.key;
  const call = async (path: string, body?: unknown) => {
    const response = await fetch(`${engine.url}/v8${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await response.json()) as Record<string, any>;
  };
  const running = async (vmId: string) => {
    for (;;) {
      const status = (await call(`/vm/data?id=${vmId}`)).data?.[0]?.status;
      if (status === 'running') return;
      if (status !== 'starting') throw new Error(`session ${vmId} is ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const endpoint = async (vmId: string) => {
    const answer = await call(`/vm/automation?id=${vmId}`);
    if (answer.status !== 'ok') throw new Error(`automation address: ${JSON.stringify(answer)}`);
    return (answer.browserWSEndpoint ?? answer.webDriverBiDiEndpoint) as string;
  };
  return { call, running, endpoint };
}

/** What a lifecycle round creates and how its program connects (Playwright over DevTools, Puppeteer over BiDi). */
export interface BenchProgram {
  create: Record<string, unknown>;
  /** Connects to the session's automation address; answers its first page and how to let go. */
  connect(endpoint: string): Promise<{ goto(url: string): Promise<unknown>; close(): Promise<void> }>;
}

/** A created session that did not come to run. */
class StartFailed extends Error {}

type Steps = Record<'create' | 'connect' | 'goto' | 'release' | 'total', number>;

/** Create + connect + go to a page + release, each step timed (ms). */
async function lifecycle(api: BenchApi, page: string, program: BenchProgram): Promise<Steps> {
  const started = performance.now();
  const created = await api.call('/vm/create', program.create);
  if (created.status !== 'ok') throw new Error(`create: ${JSON.stringify(created)}`);
  await api.running(created.vmId).catch((error: Error) => {
    throw new StartFailed(error.message);
  });
  const createdAt = performance.now();
  const connected = await program.connect(await api.endpoint(created.vmId));
  const connectedAt = performance.now();
  await connected.goto(page);
  const wentAt = performance.now();
  const removed = await api.call('/vm/remove', { id: created.vmId });
  if (removed.status !== 'ok') throw new Error(`remove: ${JSON.stringify(removed)}`);
  const releasedAt = performance.now();
  await connected.close();
  return { create: createdAt - started, connect: connectedAt - createdAt, goto: wentAt - connectedAt, release: releasedAt - wentAt, total: releasedAt - started };
}

/**
 * `samples` lifecycles one after another, reported as `<name>_<step>_ms_p50` and `<name>_ms_p50/p90`.
 * A session that fails to start (its browser past the runtime's start deadline on a loaded machine)
 * is counted and reported, and another round takes its place, up to as many again.
 */
export async function lifecycles(engine: Engine, page: string, name: string, warm: boolean, program: BenchProgram): Promise<void> {
  const api = await serveOn(engine);
  const rounds: Steps[] = [];
  let failedStarts = 0;
  while (rounds.length < samples && failedStarts < samples) {
    if (warm) await engine.runtime.warmed();
    // Each round starts with no other session of the account running (the last one's browser stopped).
    await new Promise((resolve) => setTimeout(resolve, 500));
    try {
      rounds.push(await lifecycle(api, page, program));
    } catch (error) {
      if (!(error instanceof StartFailed)) throw error;
      failedStarts++;
    }
  }
  report('automation', `${name}_failed_starts`, failedStarts, 'sessions', { of: rounds.length + failedStarts });
  const measured = rounds.length;
  for (const step of ['create', 'connect', 'goto', 'release'] as const) {
    report('automation', `${name}_${step}_ms_p50`, percentile(rounds.map((r) => r[step]), 50), 'ms', { samples: measured });
  }
  report('automation', `${name}_ms_p50`, percentile(rounds.map((r) => r.total), 50), 'ms', { samples: measured, steps: 'create + connect + go to a page + release' });
  report('automation', `${name}_ms_p90`, percentile(rounds.map((r) => r.total), 90), 'ms', { samples: measured });
}
