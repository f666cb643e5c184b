// `npm run bench -- runtime`: how fast sessions become ready and stop, what an idle session
// costs in memory, and whether anything leaks over many start/stop cycles.
import { readFile, mkdtemp, rm, readdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findMarkedProcesses } from '../src/engine/runtime/processes.js';
import { SessionRuntime, type RuntimeSession } from '../src/engine/runtime/runtime.js';
import { percentile, report } from './stats.js';

const PAGE = '<!doctype html><title>bench</title><body><h1>A simple page</h1><p>remote-browser-kit runtime benchmark</p>';
const egress = { allow: ['127.0.0.1/32'] };
const cycles = Number(process.env.RBK_BENCH_CYCLES ?? 50);
const samples = Number(process.env.RBK_BENCH_SAMPLES ?? 10);

async function pssMb(session: RuntimeSession): Promise<number> {
  let kb = 0;
  for (const p of await findMarkedProcesses({ dir: session.dir })) {
    if (p.zombie) continue;
    const rollup = await readFile(`/proc/${p.pid}/smaps_rollup`, 'utf8').catch(() => '');
    kb += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
  }
  return kb / 1024;
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runtimeBench(): Promise<void> {
  const server = createServer((_, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const root = await mkdtemp(join(tmpdir(), 'rbk-bench-'));
  const spec = { browser: 'chromium', url, language: 'en', layout: 'us' };
  try {
    // Cold starts: no warm pool.
    const { runtime: cold } = await SessionRuntime.open({ root: join(root, 'cold'), egress });
    await cold.stopSession((await cold.startSession(spec)).id); // first start fills the page cache
    const ready: number[] = [];
    const stops: number[] = [];
    for (let i = 0; i < samples; i++) {
      const session = await cold.startSession(spec);
      ready.push(session.readyMs);
      await settle(200);
      const started = performance.now();
      await cold.stopSession(session.id);
      stops.push(performance.now() - started);
    }
    report('runtime', 'cold_ready_ms_p50', percentile(ready, 50), 'ms', { samples });
    report('runtime', 'cold_ready_ms_p95', percentile(ready, 95), 'ms', { samples });
    report('runtime', 'stop_ms_p50', percentile(stops, 50), 'ms', { samples });

    const firefox: number[] = [];
    for (let i = 0; i < Math.max(3, Math.floor(samples / 3)); i++) {
      const session = await cold.startSession({ ...spec, browser: 'firefox-esr' });
      firefox.push(session.readyMs);
      await cold.stopSession(session.id);
    }
    report('runtime', 'firefox_cold_ready_ms_p50', percentile(firefox, 50), 'ms', { samples: firefox.length, readiness: 'window mapped' });

    // Memory of idle sessions at a simple page: one alone, then five side by side.
    const one = await cold.startSession(spec);
    await settle(1500);
    report('runtime', 'memory_mb_per_session', await pssMb(one), 'MB', { sessions: 1, measure: 'PSS of the session process group' });
    const five = [one, ...(await Promise.all([1, 2, 3, 4].map(() => cold.startSession(spec))))];
    await settle(2000);
    const total = (await Promise.all(five.map(pssMb))).reduce((a, b) => a + b, 0);
    report('runtime', 'memory_mb_per_session', total / five.length, 'MB', { sessions: 5, measure: 'PSS of the session process group' });
    await Promise.all(five.map((s) => cold.stopSession(s.id)));

    // Leaks: many start/stop cycles, then count what is left.
    for (let i = 0; i < cycles; i++) await cold.stopSession((await cold.startSession(spec)).id);
    const leftProcesses = (await findMarkedProcesses({ root: cold.root })).filter((p) => !p.zombie).length;
    const leftDirs = (await readdir(cold.root)).length;
    report('runtime', 'leaked_processes_after_50_cycles', leftProcesses, 'processes', { cycles, leftover_directories: leftDirs });
    await cold.close();

    // Warm starts: a ready browser per start; the pool refills between samples (not timed).
    const { runtime: warm } = await SessionRuntime.open({ root: join(root, 'warm'), egress, warm: { browsers: [{ browser: 'chromium', language: 'en', count: 1 }] } });
    const warmReady: number[] = [];
    for (let i = 0; i < samples; i++) {
      await warm.warmed();
      const session = await warm.startSession(spec);
      if (session.start !== 'warm-browser') throw new Error(`expected a warm browser, got ${session.start}`);
      warmReady.push(session.readyMs);
      await warm.stopSession(session.id);
    }
    report('runtime', 'warm_ready_ms_p50', percentile(warmReady, 50), 'ms', { samples });
    await warm.close();
  } finally {
    server.close();
    await rm(root, { recursive: true, force: true });
  }
}
