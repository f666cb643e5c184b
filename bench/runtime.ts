// `npm run bench -- runtime`: how fast sessions become ready and stop, what an idle session
// costs in memory, and whether anything leaks over many start/stop cycles; each figure twice in
// one run, unconfined and confined (docs/security.md), so the cost of confinement is a ratio; then
// a mix of sessions against the default warm pool (warm-mix.ts).
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { findHierarchies } from '../src/engine/runtime/sandbox/cgroups.js';
import { guardedCommand } from '../src/engine/runtime/sandbox/exec-guard.js';
import { DEFAULT_CONFINEMENT, openConfinedSandbox } from '../src/engine/runtime/sandbox/confinement.js';
import { findMarkedProcesses } from '../src/engine/runtime/sandbox/processes.js';
import { rootKey, SessionRuntime, type RuntimeSession } from '../src/engine/runtime/runtime.js';
import { percentile, report as reportFigure } from './stats.js';
import { warmMixBench } from './warm-mix.js';

const PAGE = '<!doctype html><title>bench</title><body><h1>A simple page</h1><p>remote-browser-kit runtime benchmark</p>';
const egress = { allow: ['127.0.0.1/32'] };
const cycles = Number(process.env.RBK_BENCH_CYCLES ?? 50);
const samples = Number(process.env.RBK_BENCH_SAMPLES ?? 10);

/** What a process of the session is: its executable, and Chromium's process type where it has one. */
async function processKind(pid: number): Promise<string> {
  // Chromium's children rewrite their command line as one space-separated title.
  const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split(/[\0 ]/);
  const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const type = flag('type');
  const executable = (args[0] ?? '?').split('/').pop()!;
  if (!type) return executable;
  const subType = flag('utility-sub-type');
  return `${executable} ${type}${subType ? ` ${subType}` : ''}${args.includes('--top-chrome-webui') ? ' (top-chrome WebUI)' : ''}`;
}

/** PSS of the session's processes, in MB: the total and each process. */
async function pss(session: RuntimeSession): Promise<{ total: number; processes: { kind: string; mb: number }[] }> {
  const processes: { kind: string; mb: number }[] = [];
  for (const p of await findMarkedProcesses({ dir: session.dir })) {
    if (p.zombie) continue;
    const rollup = await readFile(`/proc/${p.pid}/smaps_rollup`, 'utf8').catch(() => '');
    processes.push({ kind: await processKind(p.pid), mb: Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) / 1024 });
  }
  return { total: processes.reduce((sum, p) => sum + p.mb, 0), processes };
}

const pssMb = async (session: RuntimeSession) => (await pss(session)).total;

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Mode = 'unconfined' | 'confined';

/** The same measurements for one way of running sessions; every figure carries its mode. */
async function measure(mode: Mode, root: string, spec: { browser: string; url: string; language: string; layout: string }): Promise<void> {
  const confinement = mode === 'confined' ? {} : (false as const);
  const report = (bench: string, metric: string, value: number, unit: string, extra: Record<string, unknown> = {}) =>
    reportFigure(bench, metric, value, unit, { confinement: mode, ...extra });
  // Cold starts: no warm pool.
  const { runtime: cold } = await SessionRuntime.open({ root: join(root, 'cold'), egress, confinement });
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
  const alone = await pss(one);
  report('runtime', 'memory_mb_per_session', alone.total, 'MB', { sessions: 1, measure: 'PSS of the session process group' });
  // Where it goes, process by process (docs/benchmarks.md reads these).
  for (const p of alone.processes.sort((a, b) => b.mb - a.mb)) {
    report('runtime', 'memory_mb_by_process', p.mb, 'MB', { sessions: 1, process: p.kind });
  }
  const five = [one, ...(await Promise.all([1, 2, 3, 4].map(() => cold.startSession(spec))))];
  await settle(2000);
  const total = (await Promise.all(five.map(pssMb))).reduce((a, b) => a + b, 0);
  report('runtime', 'memory_mb_per_session', total / five.length, 'MB', { sessions: 5, measure: 'PSS of the session process group' });
  await Promise.all(five.map((s) => cold.stopSession(s.id)));

  // Leaks: many start/stop cycles, then count what is left.
  for (let i = 0; i < cycles; i++) await cold.stopSession((await cold.startSession(spec)).id);
  const leftProcesses = (await findMarkedProcesses({ root: cold.root })).filter((p) => !p.zombie).length;
  const leftDirs = (await readdir(cold.root)).filter((entry) => !entry.startsWith('.')).length;
  report('runtime', 'leaked_processes_after_50_cycles', leftProcesses, 'processes', { cycles, leftover_directories: leftDirs, leftover_cgroups: await sessionCgroups(cold.root) });
  await cold.close();

  // Warm starts: a ready browser per start; the pool refills between samples (not timed).
  const { runtime: warm } = await SessionRuntime.open({ root: join(root, 'warm'), egress, confinement, warm: { browsers: [{ browser: 'chromium', language: 'en', count: 1 }] } });
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
}

/** The session cgroups of one runtime root that exist now. */
async function sessionCgroups(root: string): Promise<number> {
  let count = 0;
  for (const { parent } of findHierarchies().hierarchies) {
    const entries = await readdir(parent, { withFileTypes: true }).catch(() => []);
    count += entries.filter((entry) => entry.isDirectory() && entry.name.startsWith(`${rootKey(root)}-`)).length;
  }
  return count;
}

/**
 * What the exec guard adds to every program a session starts: `true` run as an unprivileged uid
 * with no_new_privs, straight and through the guard, interleaved, in one run (docs/security.md).
 */
function execGuardCost(): void {
  const run = (command: string, args: string[]) => {
    const started = performance.now();
    const result = spawnSync('/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--no-new-privs', '--', command, ...args]);
    if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr}`);
    return performance.now() - started;
  };
  const straight: number[] = [];
  const guarded: number[] = [];
  for (let i = 0; i < samples * 5; i++) {
    straight.push(run('/bin/true', []));
    const [command, args] = guardedCommand('/bin/true', []);
    guarded.push(run(command, args));
  }
  const extra = { samples: samples * 5, confinement: 'confined' };
  reportFigure('runtime', 'program_start_ms_p50', percentile(straight, 50), 'ms', { ...extra, exec_guard: false });
  reportFigure('runtime', 'program_start_ms_p50', percentile(guarded, 50), 'ms', { ...extra, exec_guard: true });
}

/** What the sandbox alone costs: uid, cgroup and namespaces made and ended, nothing started in them. */
async function sandboxCost(root: string): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const dir = join(root, 'sandbox', String(i));
    const started = performance.now();
    const sandbox = await openConfinedSandbox({
      settings: DEFAULT_CONFINEMENT,
      hostDir: dir,
      sharedHostDir: join(root, 'sandbox', 'shared'),
      cgroupName: `rbk-bench-${process.pid}-${i}`,
      egressHostDir: join(dir, 'egress'),
      timeoutMs: 10_000,
    });
    times.push(performance.now() - started);
    await sandbox.stop();
  }
  reportFigure('runtime', 'sandbox_open_ms_p50', percentile(times, 50), 'ms', { samples, confinement: 'confined' });
}

/** What a hard cap of one core per session (`confinement.cpus: 1`) does to cold starts. */
async function cpuCapCost(root: string, spec: { browser: string; url: string; language: string; layout: string }): Promise<void> {
  const { runtime } = await SessionRuntime.open({ root, egress, confinement: { cpus: 1 } });
  await runtime.stopSession((await runtime.startSession(spec)).id);
  const ready: number[] = [];
  for (let i = 0; i < samples; i++) {
    const session = await runtime.startSession(spec);
    ready.push(session.readyMs);
    await runtime.stopSession(session.id);
  }
  reportFigure('runtime', 'cold_ready_ms_p50', percentile(ready, 50), 'ms', { samples, confinement: 'confined, one-core cap' });
  await runtime.close();
}

export async function runtimeBench(): Promise<void> {
  const server = createServer((_, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const root = await mkdtemp(join(tmpdir(), 'rbk-bench-'));
  const spec = { browser: 'chromium', url, language: 'en', layout: 'us' };
  try {
    for (const mode of ['unconfined', 'confined'] as const) await measure(mode, join(root, mode), spec);
    await mkdir(join(root, 'sandbox', 'shared'), { recursive: true });
    await sandboxCost(root);
    execGuardCost();
    await cpuCapCost(join(root, 'cpu-cap'), spec);
    await warmMixBench(join(root, 'warm-mix'), url.replace(/\/$/, ''));
  } finally {
    server.close();
    await rm(root, { recursive: true, force: true });
  }
}
