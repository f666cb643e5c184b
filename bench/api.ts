// `npm run bench -- api`: the v8 API's speed: time to the create answer, create to running,
// status polling throughput and tail latency (autocannon, 50 connections), engine memory idle.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { percentile, report } from './stats.js';

const run = promisify(execFile);
const samples = Number(process.env.RBK_BENCH_SAMPLES ?? 10);

export async function apiBench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'rbk-api-bench-'));
  const config = join(dir, 'config.json');
  await writeFile(config, JSON.stringify({
    plans: [{ id: 'bench', name: 'Bench', running_session_limit: 50, cycle_session_limit: null, residential_cycle_mb_limit: null, location_access: false, programmatic_access: true, max_session_minutes: 60, idle_timeout_minutes: 60 }],
    rateLimit: { requests: 1_000_000_000, perSeconds: 1 },
    egress: { allow: ['127.0.0.1/32'] },
  }));
  const page = createServer((_, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<title>bench</title><h1>bench</h1>'));
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  const pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
  const cli = ['--import', 'tsx', 'src/engine/cli.ts'];
  const { stdout } = await run('node', [...cli, 'accounts', 'create', '--data', join(dir, 'data'), '--config', config, '--contact', 'bench@example.com', '--plan', 'bench', '--json']);
  const key = (JSON.parse(stdout) as { apiKey: { key: string } }).apiKey.key;
  const engine = spawn('node', [...cli, 'serve', '--port', '0', '--data', join(dir, 'data'), '--config', config, '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const base = await new Promise<string>((resolve, reject) => {
      let text = '';
      engine.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        const line = text.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve((JSON.parse(line) as { url: string }).url);
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
        const result = await autocannon({ url: `${base}/v8/vm/data?id=${created.vmId}`, connections: 50, duration: 10, headers });
        report('api', 'status_poll_rps', result.requests.average, 'requests/s', { connections: 50, duration_s: 10, non_2xx: result.non2xx, errors: result.errors });
        report('api', 'status_poll_ms_p99', result.latency.p99, 'ms', { connections: 50 });
        await call('/v8/vm/remove', { id: created.vmId });
        while ((await status(created.vmId)) !== 'deleted') await new Promise((r) => setTimeout(r, 20));
      }
    }
    report('api', 'create_response_ms_p50', percentile(answers, 50), 'ms', { samples });
    report('api', 'create_to_running_ms_p50', percentile(toRunning, 50), 'ms', { samples, start: 'cold' });
    await new Promise((r) => setTimeout(r, 2000));
    const rss = Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${engine.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    report('api', 'engine_rss_mb', rss, 'MB', { state: 'idle, no session', runner: 'node --import tsx' });
  } finally {
    engine.kill('SIGTERM');
    await new Promise((r) => engine.once('exit', r));
    page.close();
    await rm(dir, { recursive: true, force: true });
  }
}
