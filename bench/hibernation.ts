// `npm run bench -- hibernation` (issue 46, decisions.md 165-168): N idle, confined Chromium
// sessions on a real engine (RBK_BENCH_HIBERNATION_N, default 10), each with four tabs of a loopback
// page whose clock ticks every second. Three phases over the same 10 s window: awake (held awake
// by the engine, nothing attached), in standby (frozen), hibernated (processes ended). Each
// phase's CPU (user + system of every process of each session, from /proc, its freezer group's
// members) and memory (each session's memory cgroup), and the node's whole (every group this engine
// made: the sessions and the warm pool, CPU from /proc and PSS from smaps_rollup). Then the wake
// time from standby and the resume time from hibernation, each to a share-link viewer's first frame
// of the page and to a program's first answered command (`vm/automation`, connectOverCDP, its four
// pages found, one page.evaluate). Standby after 1 s, hibernation RBK_BENCH_HIBERNATE_MINUTES (default 1)
// later: long enough for the standby window and the wakes. Medians; figures, not tests.
// RBK_BENCH_HIBERNATION=capacity runs instead how many sessions the node holds with ten in use
// (hibernation-capacity.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../src/engine/engine.js';
import { hibernationCapacityBench } from './hibernation-capacity.js';
import { programFirstCommand as firstCommand, viewerFirstFrame as firstFrame, type Colour } from './first-touch.js';
import { cpuMs, groupOf, groups, memoryMb, procs } from './session-processes.js';
import { percentile, report } from './stats.js';

const N = Number(process.env.RBK_BENCH_HIBERNATION_N ?? 10);
const HIBERNATE_MINUTES = Number(process.env.RBK_BENCH_HIBERNATE_MINUTES ?? 1);
const WINDOW_MS = 10_000;
const GREEN: Colour = [20, 160, 60];
const PAGE = '<!doctype html><title>idle</title><body style="margin:0;background:rgb(20,160,60)"><p id="t"></p><script>setInterval(() => (document.getElementById("t").textContent = new Date().toISOString()), 1000)</script></body>';

const median = (values: number[]) => percentile(values, 50);
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const round = (value: number) => Math.round(value * 10) / 10;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

export async function hibernationBench(): Promise<void> {
  // RBK_BENCH_HIBERNATION=capacity: how many sessions the node holds with ten in use (hibernation-capacity.ts).
  if (process.env.RBK_BENCH_HIBERNATION === 'capacity') return hibernationCapacityBench();
  const site = createServer((request, response) => (request.url === '/favicon.ico' ? response.writeHead(404).end() : response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE)));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const dir = await mkdtemp(join(tmpdir(), 'rbk-hibernation-bench-'));
  const engine = await createEngine({ dataDir: join(dir, 'data'), port: 0, config: { egress: { allow: ['127.0.0.1/32'] }, rateLimit: { requests: 100_000, perSeconds: 1 }, standby: { afterSeconds: 1, hibernateAfterMinutes: HIBERNATE_MINUTES } } });
  const releases: Array<() => void> = [];
  try {
    const key = (await engine.accounts.create({ contact: 'bench@example.com', plans: ['team'] })).apiKey.key;
    const call = async (path: string, body?: unknown) =>
      (await (await fetch(`${engine.url}/v8${path}`, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${key}` }, ...(body ? { body: JSON.stringify(body) } : {}) })).json()) as Record<string, any>;
    const hibernated = async (ids: string[]) => {
      const deadline = Date.now() + 300_000;
      while ((await Promise.all(ids.map(async (id) => (await call(`/vm/data?id=${id}`)).data[0].hibernated === true))).includes(false)) {
        if (Date.now() > deadline) throw new Error('the sessions were not hibernated within 300 s');
        await sleep(200);
      }
    };
    const inStandby = async (ids: string[]) => {
      const deadline = Date.now() + 60_000;
      while (ids.some((id) => !engine.sessions.standby.isFrozen(id))) {
        if (Date.now() > deadline) throw new Error('the sessions did not go into standby within 60 s');
        await sleep(200);
      }
    };

    // N sessions with four tabs each, held awake by the engine itself (nothing attached).
    const sessions: Array<{ id: string; link: string; group: string; prefix: string }> = [];
    for (let i = 0; i < N; i++) {
      const created = await call('/vm/create', { browser: 'chromium', url: `${origin}/` });
      if (created.status !== 'ok') throw new Error(`create: ${JSON.stringify(created)}`);
      releases.push(await engine.sessions.hold(created.vmId));
      const link = new URL(created.shareUrl).search.slice(1);
      const running = await call(`/vm/data?id=${created.vmId}&wait=60000`);
      if (running.data[0].status !== 'running') throw new Error(`session ${created.vmId} is ${running.data[0].status}`);
      for (const path of ['/second', '/third', '/']) {
        await fetch(`${engine.url}/share/${link}/tabs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'open', url: `${origin}${path}` }) });
      }
      const runtimeId = (await engine.store.session(created.vmId))!.runtime_id!;
      const group = groupOf(runtimeId);
      if (!group) throw new Error(`no freezer group for runtime ${runtimeId}`);
      sessions.push({ id: created.vmId, link, group, prefix: group.slice(0, group.length - runtimeId.length) });
    }
    const prefix = sessions[0]!.prefix;
    await sleep(5000); // the pages settle after their start

    const measure = async (phase: string) => {
      const pids = sessions.map((s) => procs(s.group));
      const nodePids = groups(prefix).map(procs);
      const before = pids.map(cpuMs);
      const nodeBefore = nodePids.map(cpuMs);
      const loadBefore = load();
      const began = performance.now();
      await sleep(WINDOW_MS);
      const seconds = (performance.now() - began) / 1000;
      const cpu = pids.map((p, i) => (cpuMs(p) - before[i]!) / seconds / 10); // % of one core
      const nodeCpu = sum(nodePids.map((p, i) => (cpuMs(p) - nodeBefore[i]!) / seconds / 10));
      const runtimes = await Promise.all(sessions.map(async (s) => (await engine.store.session(s.id))?.runtime_id));
      const memory = runtimes.map((id) => (id ? (engine.runtime.get(id)?.sandbox.memoryBytes() ?? 0) : 0) / 1024 / 1024);
      const processes = sum(pids.map((p) => p.length));
      report('hibernation', `cpu_percent_per_session_${phase}`, median(cpu), '% of a core', { sessions: N, windowMs: WINDOW_MS, total: round(sum(cpu)), processes, load: `${loadBefore} -> ${load()}` });
      report('hibernation', `memory_mb_per_session_${phase}`, median(memory), 'MB', { measured: "each session's memory cgroup", total: Math.round(sum(memory)) });
      report('hibernation', `node_${phase}`, round(nodeCpu), '% of a core', { measured: "every group of this engine (sessions + warm pool): CPU from /proc, PSS", groups: nodePids.length, processes: sum(nodePids.map((p) => p.length)), pssMb: Math.round(sum(nodePids.map((p) => memoryMb(p)))) });
    };
    const viewerFirstFrame = (link: string) => firstFrame(engine.url, link, GREEN);
    const programFirstCommand = (id: string) => firstCommand(call, id, origin, 4);

    await measure('awake');
    for (const release of releases.splice(0)) release();
    const ids = sessions.map((s) => s.id);
    await inStandby(ids);
    await measure('standby');

    const wokenViewer = [];
    for (const s of sessions) wokenViewer.push(await viewerFirstFrame(s.link));
    await inStandby(ids);
    const wokenProgram = [];
    for (const s of sessions) wokenProgram.push((await programFirstCommand(s.id)).ms);
    report('hibernation', 'viewer_first_frame_ms_from_standby', median(wokenViewer), 'ms', { sessions: N, all: wokenViewer.map(Math.round), measured: 'share-link RFB connect to the page colour on screen' });
    report('hibernation', 'program_first_command_ms_from_standby', median(wokenProgram), 'ms', { sessions: N, all: wokenProgram.map(Math.round), measured: 'vm/automation, connectOverCDP, its 4 pages found, one page.evaluate' });

    const asleepAt = performance.now();
    await hibernated(ids);
    report('hibernation', 'all_hibernated_after_ms', performance.now() - asleepAt, 'ms', { sessions: N, settings: `standby after 1 s, hibernation ${HIBERNATE_MINUTES} min later` });
    await measure('hibernated');
    const stored = await engine.store.sql.all<{ n: number; bytes: number }>('SELECT COUNT(*) AS n, SUM(LENGTH(data)) AS bytes FROM hibernation_chunks');
    report('hibernation', 'stored_kb_per_session', Number(stored[0]!.bytes) / 1024 / N, 'KB', { chunks: Number(stored[0]!.n) });

    const resumedViewer = [];
    for (const s of sessions) resumedViewer.push(await viewerFirstFrame(s.link));
    await hibernated(ids);
    const resumedProgram = [];
    const found = [];
    for (const s of sessions) {
      const { ms, pages } = await programFirstCommand(s.id);
      resumedProgram.push(ms);
      found.push(pages);
    }
    report('hibernation', 'viewer_first_frame_ms_from_hibernation', median(resumedViewer), 'ms', { sessions: N, all: resumedViewer.map(Math.round) });
    report('hibernation', 'program_first_command_ms_from_hibernation', median(resumedProgram), 'ms', { sessions: N, all: resumedProgram.map(Math.round), pagesFound: found });
    for (const s of sessions) await call('/vm/remove', { id: s.id });
  } finally {
    for (const release of releases) release();
    await engine.close();
    site.close();
    await rm(dir, { recursive: true, force: true });
  }
}
