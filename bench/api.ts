// `npm run bench -- api`: the v8 API's speed: time to the create answer, create to running,
// status polling throughput and tail latency (wrk, 50 connections), engine memory idle.
// RBK_BENCH_OPERATIONS=off runs the engine without metrics and logs (operator.metrics false,
// log.level silent), to compare with the default (on: metrics recorded and scraped every 5 s
// during the load, info logs written to a pipe).
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
// @ts-expect-error: a plain ESM script without types
import { BENCH_PACKAGES, installSystemPackages } from '../scripts/setup.mjs';
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

export async function apiBench(): Promise<void> {
  installSystemPackages(BENCH_PACKAGES);
  const dir = await mkdtemp(join(tmpdir(), 'rbk-api-bench-'));
  const config = join(dir, 'config.json');
  await writeFile(config, JSON.stringify({
    plans: [{ id: 'bench', name: 'Bench', running_session_limit: 50, cycle_session_limit: null, residential_cycle_mb_limit: null, location_access: false, programmatic_access: true, max_session_minutes: 60, idle_timeout_minutes: 60 }],
    rateLimit: { requests: 1_000_000_000, perSeconds: 1 },
    egress: { allow: ['127.0.0.1/32'] },
    ...(operations === 'off' ? { operator: { metrics: false }, log: { level: 'silent' } } : { log: { level: 'info', pretty: false } }),
  }));
  const page = createServer((_, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<title>bench</title><h1>bench</h1>'));
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  const pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
  const cli = ['--import', 'tsx', 'src/engine/cli.ts'];
  const engineArgs = process.env.RBK_BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.RBK_BENCH_PROFILE}`, ...cli] : cli;
  const { stdout } = await run('node', [...cli, 'accounts', 'create', '--data', join(dir, 'data'), '--config', config, '--contact', 'bench@example.com', '--plan', 'bench', '--json']);
  const key = (JSON.parse(stdout) as { apiKey: { key: string } }).apiKey.key;
  const engine = spawn('node', [...engineArgs, 'serve', '--port', '0', '--data', join(dir, 'data'), '--config', config, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  // The logs are read and dropped, as a log shipper reading the engine's stderr would.
  let logBytes = 0;
  engine.stderr.on('data', (chunk: Buffer) => (logBytes += chunk.length));
  try {
    let operatorUrl: string | null = null;
    const base = await new Promise<string>((resolve, reject) => {
      let text = '';
      engine.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        const line = text.split('\n').find((l) => l.startsWith('{'));
        if (!line) return;
        const facts = JSON.parse(line) as { url: string; operatorUrl: string | null };
        operatorUrl = facts.operatorUrl;
        resolve(facts.url);
      });
      engine.once('exit', () => reject(new Error('the engine exited during start')));
    });
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const call = async (path: string, body?: unknown) => {
      const response = await fetch(`${base}${path}`, body === undefined ? { headers } : { method: 'POST', headers, body: JSON.stringify(body) });
      return (await response.json()) as Record<string, any>;
    };
    const status = async (id: string) => ((await call(`/v8/vm/data?id=${id}`)).data as Array<{ status: string }>)[0]?.status;

    const answers: number[] = [];
    const toRunning: number[] = [];
    for (let i = 0; i < samples + 1; i++) {
      const started = performance.now();
      const created = await call('/v8/vm/create', { browser: 'chromium', url: pageUrl });
      const answered = performance.now();
      if (created.status !== 'ok') throw new Error(`create failed: ${JSON.stringify(created)}`);
      let state = 'starting';
      while (state === 'starting') {
        await new Promise((r) => setTimeout(r, 10));
        state = (await status(created.vmId)) ?? 'missing';
      }
      if (state !== 'running') throw new Error(`session ended ${state}`);
      // The first sample warms caches; it is not counted.
      if (i > 0) {
        answers.push(answered - started);
        toRunning.push(performance.now() - started);
      }
      if (i < samples) {
        await call('/v8/vm/remove', { id: created.vmId });
        while ((await status(created.vmId)) !== 'deleted') await new Promise((r) => setTimeout(r, 20));
      } else {
        // Keep the last session running for the polling load.
        // The first seconds of load include V8 compiling the request path: a 3 s warm-up, reported
        // on its own, then the steady state that the target is about.
        const warmup = await pollWithWrk(`${base}/v8/vm/data?id=${created.vmId}`, { authorization: headers.authorization }, 3);
        report('api', 'status_poll_warmup_ms_p99', warmup.p99, 'ms', { tool: 'wrk', connections: 50, duration_s: 3, rps: warmup.rps });
        // With operations on, a Prometheus scrape every 5 s during the load, as a scraper would.
        const scrapes = operatorUrl ? setInterval(() => void fetch(`${operatorUrl}/metrics`).then((r) => r.text()).catch(() => undefined), 5000) : undefined;
        const poll = await pollWithWrk(`${base}/v8/vm/data?id=${created.vmId}`, { authorization: headers.authorization }, 10);
        clearInterval(scrapes);
        report('api', 'status_poll_rps', poll.rps, 'requests/s', { tool: 'wrk', connections: 50, duration_s: 10, non_2xx: poll.non2xx, socket_errors: poll.errors, operations });
        report('api', 'status_poll_ms_p50', poll.p50, 'ms', { tool: 'wrk', connections: 50, operations });
        report('api', 'status_poll_ms_p99', poll.p99, 'ms', { tool: 'wrk', connections: 50, operations });
        await call('/v8/vm/remove', { id: created.vmId });
        while ((await status(created.vmId)) !== 'deleted') await new Promise((r) => setTimeout(r, 20));
      }
    }
    report('api', 'create_response_ms_p50', percentile(answers, 50), 'ms', { samples, operations });
    report('api', 'create_to_running_ms_p50', percentile(toRunning, 50), 'ms', { samples, start: 'cold', operations });
    await new Promise((r) => setTimeout(r, 2000));
    const rss = Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${engine.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    report('api', 'engine_rss_mb', rss, 'MB', { state: 'idle, no session', runner: 'node --import tsx', operations, log_bytes: logBytes });
  } finally {
    engine.kill('SIGTERM');
    await new Promise((r) => engine.once('exit', r));
    page.close();
    await rm(dir, { recursive: true, force: true });
  }
}
