// `npm run bench -- api`, its start half (issue 37): create -> running through the v8 API, followed
// with `vm/data?id=&wait=` (one request, no polling), for a mix of sessions against the engine's
// default warm pool, beside the runtime's own start of the same sessions and the engine's steps
// (its start trace, read from its debug log: sessions/start-trace.ts). On SQLite and on Postgres:
// one create at a time with pauses the pool refills in, then ten creates at once.
// RBK_BENCH_ROUNDS (default 4) rounds of the mix after one that teaches the pool;
// RBK_BENCH_PAUSE_MS (default 3000) between creates.
import { startPostgres, type TestPostgres } from '../test/helpers/postgres.js';
import { startBenchEngine, type BenchEngine } from './api.js';
import { percentile, report } from './stats.js';

const rounds = Number(process.env.RBK_BENCH_ROUNDS ?? 4);
const pauseMs = Number(process.env.RBK_BENCH_PAUSE_MS ?? 3000);

/** The mix: what customers ask for besides the default. */
const MIX: Array<{ kind: string; body: Record<string, string> }> = [
  { kind: 'default', body: {} },
  { kind: 'language de', body: { language: 'de' } },
  { kind: 'layout de', body: { layout: 'de' } },
  { kind: 'language+layout de', body: { language: 'de', layout: 'de' } },
  { kind: 'language fr', body: { language: 'fr' } },
];

/** One create followed to running: as the caller saw it, and as the engine and its runtime timed it. */
interface StartSample {
  kind: string;
  vmId: string;
  /** Create sent -> its answer. */
  answeredMs: number;
  /** Create sent -> `running` read through the API. */
  apiMs: number;
  /** The engine's trace: its steps, its total, and the runtime's own start. */
  trace: Record<string, any>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) => percentile(values, 50);
const rounded = (ms: number) => Math.round(ms * 10) / 10;

/** Creates a Chromium session and reads it with `wait` until it is no longer starting. */
async function createAndFollow(engine: BenchEngine, url: string, kind: string, body: Record<string, string>): Promise<StartSample> {
  const began = performance.now();
  const created = await engine.call('/v8/vm/create', { browser: 'chromium', url, ...body });
  const answeredMs = performance.now() - began;
  if (created.status !== 'ok') throw new Error(`create failed: ${JSON.stringify(created)}`);
  const vmId = created.vmId as string;
  let status = 'starting';
  while (status === 'starting') {
    const read = await engine.call(`/v8/vm/data?id=${vmId}&wait=30000`);
    status = (read.data as Array<{ status: string }>)[0]?.status ?? 'missing';
  }
  const apiMs = performance.now() - began;
  if (status !== 'running') throw new Error(`session ${kind} ended ${status}`);
  // The trace is logged as the status moves; the engine's stderr reaches this process a moment later.
  for (let tries = 0; tries < 100 && !engine.traces.has(vmId); tries++) await sleep(20);
  const trace = engine.traces.get(vmId);
  if (!trace) throw new Error(`no start trace for ${vmId}: is the engine logging at debug level?`);
  return { kind, vmId, answeredMs, apiMs, trace };
}

/** Waits until the engine's pool holds a warm browser (its /healthz), at most a minute. */
async function poolReady(engine: BenchEngine): Promise<void> {
  for (let tries = 0; tries < 600; tries++) {
    const health = (await (await fetch(`${engine.operatorUrl}/healthz`)).json()) as { warm?: { browsers: number } };
    if ((health.warm?.browsers ?? 0) > 0) return;
    await sleep(100);
  }
  throw new Error('the warm pool did not fill within a minute');
}

/** The figures of a set of starts: the caller's, the runtime's, what the API adds, the engine's steps. */
function reportStarts(store: string, set: string, samples: StartSample[], extra: Record<string, unknown> = {}): void {
  const api = samples.map((s) => s.apiMs);
  const runtime = samples.map((s) => s.trace.runtime.readyMs as number);
  const warm = samples.filter((s) => s.trace.runtime.start === 'warm-browser');
  const tags = { store, set, samples: samples.length, follow: 'vm/data?wait=30000', ...extra };
  report('api', 'create_to_running_ms_p50', median(api), 'ms', tags);
  report('api', 'create_to_running_ms_p95', percentile(api, 95), 'ms', tags);
  report('api', 'runtime_ready_ms_p50', median(runtime), 'ms', { ...tags, measured: "the runtime's own start of the same sessions (readyMs)" });
  report('api', 'runtime_ready_ms_p95', percentile(runtime, 95), 'ms', tags);
  // Per session: what the caller waited beyond the runtime's own start (the API's and engine's share).
  report('api', 'api_over_runtime_ms_p50', median(samples.map((s) => s.apiMs - s.trace.runtime.readyMs)), 'ms', { ...tags, ratio_p50: rounded(median(samples.map((s) => s.apiMs / s.trace.runtime.readyMs)) * 100) / 100 });
  report('api', 'engine_over_runtime_ms_p50', median(samples.map((s) => s.trace.totalMs - s.trace.runtime.readyMs)), 'ms', { ...tags, measured: "the engine's trace total (create received -> followers told) less the runtime's readyMs" });
  report('api', 'create_response_ms_p50', median(samples.map((s) => s.answeredMs)), 'ms', tags);
  if (warm.length > 0) {
    report('api', 'warm_create_to_running_ms_p50', median(warm.map((s) => s.apiMs)), 'ms', { ...tags, samples: warm.length });
    report('api', 'warm_runtime_ready_ms_p50', median(warm.map((s) => s.trace.runtime.readyMs as number)), 'ms', { ...tags, samples: warm.length });
  }
  const steps = new Set(samples.flatMap((s) => Object.keys(s.trace.steps as object)));
  const parts = new Set(samples.flatMap((s) => Object.keys((s.trace.runtime.parts ?? {}) as object)));
  report('api', 'start_steps_ms_p50', median(samples.map((s) => s.trace.totalMs as number)), 'ms', {
    ...tags,
    measured: 'engine trace total; each step and runtime part as its own median',
    steps: Object.fromEntries([...steps].map((step) => [step, median(samples.map((s) => s.trace.steps[step]).filter((v) => v !== undefined))])),
    runtime_parts: Object.fromEntries([...parts].map((part) => [part, median(samples.map((s) => s.trace.runtime.parts?.[part]).filter((v) => v !== undefined))])),
    starts: Object.fromEntries(['warm-browser', 'warm-display', 'cold'].map((kind) => [kind, samples.filter((s) => s.trace.runtime.start === kind).length])),
    by_kind_p50: Object.fromEntries(MIX.map(({ kind }) => [kind, median(samples.filter((s) => s.kind === kind).map((s) => s.apiMs))]).filter(([, v]) => !Number.isNaN(v))),
  });
}

/**
 * A language no warm browser has (issue 37: `de-AT`, then `fr`), asked for the first time (it
 * takes a warm display and its browser starts at once) and again once the pool has learned it
 * and warmed one; each kind of start and its time through the API.
 */
async function unseenLanguages(store: string, engine: BenchEngine, url: string): Promise<void> {
  for (const language of ['de-AT', 'fr']) {
    const first = await createAndFollow(engine, url, `language ${language}`, { language });
    await engine.call('/v8/vm/remove', { id: first.vmId });
    // The pool learns the language from the create and warms a browser for it meanwhile.
    await sleep(4 * pauseMs);
    const after = await createAndFollow(engine, url, `language ${language}`, { language });
    await engine.call('/v8/vm/remove', { id: after.vmId });
    await sleep(pauseMs);
    report('api', 'unseen_language_create_to_running_ms', rounded(first.apiMs), 'ms', {
      store, language, first: { ms: rounded(first.apiMs), start: first.trace.runtime.start, runtimeMs: rounded(first.trace.runtime.readyMs) },
      after: { ms: rounded(after.apiMs), start: after.trace.runtime.start, runtimeMs: rounded(after.trace.runtime.readyMs) },
    });
  }
}

/** The mix one create at a time, then ten at once, against one engine on `store`. */
async function startsOn(store: 'sqlite' | 'postgres', url: string, database?: string): Promise<void> {
  const engine = await startBenchEngine('on', true, { debugLog: true, ...(database ? { database } : {}) });
  try {
    await poolReady(engine);
    if (store === 'sqlite') await unseenLanguages(store, engine, url);
    const samples: StartSample[] = [];
    // The first round teaches the pool the kinds (decisions.md 64); it is not counted.
    for (let round = 0; round <= rounds; round++) {
      for (const { kind, body } of MIX) {
        const sample = await createAndFollow(engine, url, kind, body);
        if (round > 0) samples.push(sample);
        await engine.call('/v8/vm/remove', { id: sample.vmId });
        await sleep(pauseMs);
      }
    }
    reportStarts(store, 'mix, one at a time', samples, { rounds, pause_ms: pauseMs });

    // Ten at once, the mix twice over, after a pause the pool refills in.
    await sleep(3 * pauseMs);
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => createAndFollow(engine, url, MIX[i % MIX.length]!.kind, MIX[i % MIX.length]!.body)));
    reportStarts(store, 'ten at once', burst);
    await Promise.all(burst.map((s) => engine.remove(s.vmId)));
  } finally {
    await engine.stop();
  }
}

export async function apiStartBench(url: string): Promise<void> {
  await startsOn('sqlite', url);
  let postgres: TestPostgres | undefined;
  try {
    postgres = await startPostgres();
    await startsOn('postgres', url, await postgres.createDatabase());
  } finally {
    await postgres?.stop();
  }
}
