// `npm run bench -- api`: the v8 API's speed: create to running through the API against the
// runtime's own start, for a mix of sessions on the warm pool, SQLite and Postgres (api-start.ts);
// then time to the create answer, a cold create to running, status polling throughput and tail
// latency (wrk, 50 connections), engine memory idle.
// RBK_BENCH_OPERATIONS=off runs the engine without metrics and logs (operator.metrics false,
// log.level silent), to compare with the default (on: metrics recorded and scraped every 5 s
// during the load, info logs written to a pipe).
// `npm run bench -- operations` compares the two side by side, interleaved (operationsBench).
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
// @ts-expect-error: a plain ESM script without types
import { BENCH_PACKAGES, installSystemPackages } from '../scripts/setup.mjs';
import { apiStartBench } from './api-start.js';
import { percentile, report } from './stats.js';

const run = promisify(execFile);
const samples = Number(process.env.RBK_BENCH_SAMPLES ?? 10);
const operations = process.env.RBK_BENCH_OPERATIONS === 'off' ? 'off' : 'on';

/** A wrk duration ("812.40us", "3.21ms", "1.02s") in milliseconds. */
function wrkMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!match) throw new Error(`wrk printed a latency it cannot read: ${text}`);
  const factor = { us: 0.001, ms: 1, s: 1000, m: 60_000 }[match[2] as 'us' | 'ms' | 's' | 'm'];
  return Number(match[1]) * factor;
}

/**
 * GET `url` from 50 connections for `seconds` with wrk (a C load generator: it leaves the engine
 * most of the second core, where a Node load tool would take it).
 */
export async function pollWithWrk(url: string, headers: Record<string, string>, seconds: number) {
  const args = ['-t1', '-c50', `-d${seconds}s`, '--latency', ...Object.entries(headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]), url];
  const { stdout } = await run('wrk', args, { timeout: (seconds + 30) * 1000 });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  const latency = (p: string) => wrkMs(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(stdout)?.[1] ?? '');
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0);
  const errors = /Socket errors: (.*)/.exec(stdout)?.[1] ?? 'none';
  return { rps, p50: latency('50'), p99: latency('99'), non2xx, errors };
}

let built: Promise<unknown> | undefined;
/** Compiles the engine into dist/ (tsc, about 10 s), once per bench run. */
function buildEngine(): Promise<unknown> {
  return (built ??= run('npx', ['tsc', '-p', 'tsconfig.build.json'], { timeout: 300_000 }));
}

/** A `serve` process on its own data directory with one account, for the API benches. */
export interface BenchEngine {
  base: string;
  operatorUrl: string | null;
  headers: Record<string, string>;
  pid: number;
  logBytes(): number;
  call(path: string, body?: unknown): Promise<Record<string, any>>;
  status(id: string): Promise<string | undefined>;
  /** Creates a Chromium session on `url` and waits for it to run: the create's answer time and create-to-running, in ms. */
  start(url: string): Promise<{ vmId: string; answeredMs: number; runningMs: number }>;
  remove(id: string): Promise<void>;
  /** The engine's start traces so far, by session id (with `debugLog`: its debug lines, sessions/start-trace.ts). */
  traces: Map<string, Record<string, any>>;
  stop(): Promise<void>;
}

/** What else a bench engine runs with: a Postgres database instead of SQLite, debug logs (the start traces). */
export interface BenchEngineExtras {
  database?: string;
  debugLog?: boolean;
}

/**
 * Starts an engine: `on` records every metric and writes its info lines to a pipe read and dropped
 * (as a log shipper reading the engine's stderr would); `off` has `operator.metrics: false` and
 * `log.level: "silent"`. `warm: false` keeps no warm browsers (the pool's starts take CPU at times).
 */
export async function startBenchEngine(operations: 'on' | 'off', warm = true, extras: BenchEngineExtras = {}): Promise<BenchEngine> {
  await buildEngine();
  const dir = await mkdtemp(join(tmpdir(), 'rbk-api-bench-'));
  const config = join(dir, 'config.json');
  await writeFile(config, JSON.stringify({
    plans: [{ id: 'bench', name: 'Bench', running_session_limit: 50, cycle_session_limit: null, residential_cycle_mb_limit: null, location_access: false, programmatic_access: true, max_session_minutes: 60, idle_timeout_minutes: 60 }],
    rateLimit: { requests: 1_000_000_000, perSeconds: 1 },
    egress: { allow: ['127.0.0.1/32'] },
    ...(warm ? {} : { warm: { memoryMb: 0 } }),
    ...(operations === 'off' ? { operator: { metrics: false }, log: { level: 'silent' } } : { log: { level: extras.debugLog ? 'debug' : 'info', pretty: false } }),
    ...(extras.database ? { database: extras.database, cluster: { secret: 'bench-cluster-secret-0123456789abcdef' } } : {}),
  }));
  // The built command operators run (dist/, compiled once per bench run): under tsx every closure
  // the request path makes also gets a name defined on it, which alone cost the API about 10 %.
  const cli = ['bin/remote-browser-kit.mjs'];
  const engineArgs = process.env.RBK_BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.RBK_BENCH_PROFILE}`, ...cli] : cli;
  const { stdout } = await run('node', [...cli, 'accounts', 'create', '--data', join(dir, 'data'), '--config', config, '--contact', 'bench@example.com', '--plan', 'bench', '--json']);
  const key = (JSON.parse(stdout) as { apiKey: { key: string } }).apiKey.key;
  const engine = spawn('node', [...engineArgs, 'serve', '--port', '0', '--data', join(dir, 'data'), '--config', config, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let logBytes = 0;
  const traces = new Map<string, Record<string, any>>();
  let partial = '';
  engine.stderr.on('data', (chunk: Buffer) => {
    logBytes += chunk.length;
    if (!extras.debugLog) return;
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (!line.includes('"session start trace"')) continue;
      const record = JSON.parse(line) as Record<string, any>;
      traces.set(record.vmId as string, record);
    }
  });
  const stop = async () => {
    if (engine.exitCode === null && engine.signalCode === null) {
      engine.kill('SIGTERM');
      await new Promise((r) => engine.once('exit', r));
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const facts = await new Promise<{ url: string; operatorUrl: string | null }>((resolve, reject) => {
      let text = '';
      engine.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        const line = text.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve(JSON.parse(line) as { url: string; operatorUrl: string | null });
      });
      engine.once('exit', () => reject(new Error('the engine exited during start')));
    });
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const call = async (path: string, body?: unknown) => {
      const response = await fetch(`${facts.url}${path}`, body === undefined ? { headers } : { method: 'POST', headers, body: JSON.stringify(body) });
      return (await response.json()) as Record<string, any>;
    };
    const status = async (id: string) => ((await call(`/v8/vm/data?id=${id}`)).data as Array<{ status: string }>)[0]?.status;
    return {
      base: facts.url,
      operatorUrl: facts.operatorUrl,
      headers,
      pid: engine.pid!,
      logBytes: () => logBytes,
      call,
      status,
      async start(url) {
        const started = performance.now();
        const created = await call('/v8/vm/create', { browser: 'chromium', url });
        const answeredMs = performance.now() - started;
        if (created.status !== 'ok') throw new Error(`create failed: ${JSON.stringify(created)}`);
        let state = 'starting';
        while (state === 'starting') {
          await new Promise((r) => setTimeout(r, 10));
          state = (await status(created.vmId)) ?? 'missing';
        }
        if (state !== 'running') throw new Error(`session ended ${state}`);
        return { vmId: created.vmId as string, answeredMs, runningMs: performance.now() - started };
      },
      async remove(id) {
        await call('/v8/vm/remove', { id });
        while ((await status(id)) !== 'deleted') await new Promise((r) => setTimeout(r, 20));
      },
      traces,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A page on loopback for the sessions to open. */
async function benchPage() {
  const page = createServer((_, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<title>bench</title><h1>bench</h1>'));
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(page.address() as AddressInfo).port}/`, close: () => page.close() };
}

export async function apiBench(): Promise<void> {
  installSystemPackages(BENCH_PACKAGES);
  const page = await benchPage();
  // RBK_BENCH_API=start runs only the start half (api-start.ts), =polling only the half below.
  const part = process.env.RBK_BENCH_API;
  if (part !== 'polling') {
    try {
      await apiStartBench(page.url);
    } finally {
      if (part === 'start') page.close();
    }
    if (part === 'start') return;
  }
  // No warm browsers: create to running is a cold start here (the start half above measures warm ones).
  const engine = await startBenchEngine(operations, false);
  try {
    const answers: number[] = [];
    const toRunning: number[] = [];
    for (let i = 0; i < samples + 1; i++) {
      const { vmId, answeredMs, runningMs } = await engine.start(page.url);
      // The first sample warms caches; it is not counted.
      if (i > 0) {
        answers.push(answeredMs);
        toRunning.push(runningMs);
      }
      if (i === samples) {
        // Keep the last session running for the polling load.
        // The first seconds of load include V8 compiling the request path: a 3 s warm-up, reported
        // on its own, then the steady state that the target is about.
        const url = `${engine.base}/v8/vm/data?id=${vmId}`;
        const warmup = await pollWithWrk(url, { authorization: engine.headers.authorization! }, 3);
        report('api', 'status_poll_warmup_ms_p99', warmup.p99, 'ms', { tool: 'wrk', connections: 50, duration_s: 3, rps: warmup.rps });
        // With operations on, a Prometheus scrape every 5 s during the load, as a scraper would.
        const scrapes = engine.operatorUrl ? setInterval(() => void fetch(`${engine.operatorUrl}/metrics`).then((r) => r.text()).catch(() => undefined), 5000) : undefined;
        const poll = await pollWithWrk(url, { authorization: engine.headers.authorization! }, 10);
        clearInterval(scrapes);
        report('api', 'status_poll_rps', poll.rps, 'requests/s', { tool: 'wrk', connections: 50, duration_s: 10, non_2xx: poll.non2xx, socket_errors: poll.errors, operations });
        report('api', 'status_poll_ms_p50', poll.p50, 'ms', { tool: 'wrk', connections: 50, operations });
        report('api', 'status_poll_ms_p99', poll.p99, 'ms', { tool: 'wrk', connections: 50, operations });
      }
      await engine.remove(vmId);
    }
    report('api', 'create_response_ms_p50', percentile(answers, 50), 'ms', { samples, operations });
    report('api', 'create_to_running_ms_p50', percentile(toRunning, 50), 'ms', { samples, start: 'cold', operations });
    await new Promise((r) => setTimeout(r, 2000));
    const rss = Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${engine.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    report('api', 'engine_rss_mb', rss, 'MB', { state: 'idle, no session', runner: 'bin/remote-browser-kit.mjs (dist)', operations, log_bytes: engine.logBytes() });
  } finally {
    await engine.stop();
    page.close();
  }
}

/**
 * `npm run bench -- operations`: what metrics and logs cost the API (issue 27, target within 5 %).
 * Pairs of engines side by side, one with operations on and one off, each with one running
 * session; wrk polls one at a time, alternating on/off for 4 rounds of 5 s after a warm-up of
 * each, so slow drift on a shared machine hits both alike. A pair of fresh processes is not
 * enough: two engines of the same code were seen 10 % apart for a whole pair's life (each process
 * settles into its own speed), so `RBK_BENCH_PAIRS` pairs (default 3) are started one after the
 * other. Neither engine keeps warm browsers: two pools filling and refilling on 2 cores made two
 * engines with operations off differ by 7 % by start order alone. The figures: each side's median
 * requests/s and p99, each pair's median ratio on/off, and the median of all rounds' ratios.
 */
export async function operationsBench(): Promise<void> {
  installSystemPackages(BENCH_PACKAGES);
  const pairs = Number(process.env.RBK_BENCH_PAIRS ?? 3);
  const rounds = 4;
  const page = await benchPage();
  const figures = { on: [] as Array<{ rps: number; p99: number }>, off: [] as Array<{ rps: number; p99: number }> };
  const ratios: number[] = [];
  const pairRatios: number[] = [];
  const median = (values: number[]) => percentile(values, 50);
  let logBytes = 0;
  try {
    for (let pair = 0; pair < pairs; pair++) {
      // Alternate which engine starts first, and which is polled first in a round.
      const order = pair % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
      const engines: Partial<Record<'on' | 'off', BenchEngine>> = {};
      try {
        for (const side of order) engines[side] = await startBenchEngine(side, false);
        const urls = { on: '', off: '' };
        for (const side of order) {
          const { vmId } = await engines[side]!.start(page.url);
          urls[side] = `${engines[side]!.base}/v8/vm/data?id=${vmId}`;
          await pollWithWrk(urls[side], { authorization: engines[side]!.headers.authorization! }, 3);
        }
        // A Prometheus scrape every 5 s of the `on` engine throughout, as a scraper would.
        const scrapes = setInterval(() => void fetch(`${engines.on!.operatorUrl}/metrics`).then((r) => r.text()).catch(() => undefined), 5000);
        const these: number[] = [];
        try {
          for (let round = 0; round < rounds; round++) {
            const polled = { on: 0, off: 0 };
            for (const side of round % 2 === 0 ? order : ([...order].reverse() as Array<'on' | 'off'>)) {
              const figure = await pollWithWrk(urls[side], { authorization: engines[side]!.headers.authorization! }, 5);
              figures[side].push(figure);
              polled[side] = figure.rps;
            }
            these.push(polled.on / polled.off);
          }
        } finally {
          clearInterval(scrapes);
        }
        ratios.push(...these);
        pairRatios.push(median(these));
        logBytes += engines.on!.logBytes();
      } finally {
        await Promise.all(Object.values(engines).map((engine) => engine.stop()));
      }
    }
    for (const side of ['on', 'off'] as const) {
      report('operations', 'status_poll_rps', median(figures[side].map((f) => f.rps)), 'requests/s', { operations: side, pairs, rounds, each: figures[side].map((f) => Math.round(f.rps)) });
      report('operations', 'status_poll_ms_p99', median(figures[side].map((f) => f.p99)), 'ms', { operations: side, pairs, rounds });
    }
    const percent = (ratio: number) => Math.round((ratio - 1) * 1000) / 10;
    report('operations', 'on_vs_off_rps_percent', (median(ratios) - 1) * 100, '%', { measured: 'median of every round\'s ratio of requests/s, on / off', pairs: pairRatios.map(percent), each: ratios.map(percent), log_bytes: logBytes });
  } finally {
    page.close();
  }
}
