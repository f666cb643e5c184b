// `npm run bench -- standby` (issue 46): N idle, confined Chromium sessions on a real engine
// (RBK_BENCH_STANDBY_N, default 4: the machine is shared). Their CPU (every process of each session,
// user + system, from /proc) and memory (each session's cgroup) over the same window, first awake
// (held awake by the engine, nothing attached, the page's one-second clock ticking), then in
// standby; then the wake time: a viewer connecting through the share link to its first frame of
// the page (standby woken first), and a program connecting over DevTools to its first answered
// command, each against the same on an awake session. Medians; figures, not tests.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../src/engine/engine.js';
import { programFirstCommand as firstCommand, viewerFirstFrame as firstFrame, type Colour } from './first-touch.js';
import { cpuMs, groupOf, procs } from './session-processes.js';
import { percentile, report } from './stats.js';

const N = Number(process.env.RBK_BENCH_STANDBY_N ?? 4);
const WINDOW_MS = 10_000;
const AFTER_SECONDS = 3;
const GREEN: Colour = [20, 160, 60];
/** An idle page as most are: a clock that ticks every second, on one colour. */
const PAGE = '<!doctype html><title>idle</title><body style="margin:0;background:rgb(20,160,60)"><p id="t"></p><script>setInterval(() => (document.getElementById("t").textContent = new Date().toISOString()), 1000)</script></body>';

const median = (values: number[]) => percentile(values, 50);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every process of the session (its freezer group, named after its runtime id). */
function pidsOf(runtimeId: string): number[] {
  const group = groupOf(runtimeId);
  if (!group) throw new Error(`no freezer group for runtime ${runtimeId}`);
  return procs(group);
}

export async function standbyBench(): Promise<void> {
  const site = createServer((request, response) => (request.url === '/favicon.ico' ? response.writeHead(404).end() : response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE)));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const dir = await mkdtemp(join(tmpdir(), 'rbk-standby-bench-'));
  const engine = await createEngine({ dataDir: join(dir, 'data'), port: 0, config: { egress: { allow: ['127.0.0.1/32'] }, rateLimit: { requests: 100_000, perSeconds: 1 }, standby: { afterSeconds: AFTER_SECONDS } } });
  const releases: Array<() => void> = [];
  try {
    const key = (await engine.accounts.create({ contact: 'bench@example.com', plans: ['team'] })).apiKey.key;
    const call = async (path: string, body?: unknown) =>
      (await (await fetch(`${engine.url}/v8${path}`, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${key}` }, ...(body ? { body: JSON.stringify(body) } : {}) })).json()) as Record<string, any>;

    // N sessions, each held awake by the engine itself (nothing attached) from its creation.
    const sessions: Array<{ id: string; link: string; runtimeId: string }> = [];
    for (let i = 0; i < N; i++) {
      const created = await call('/vm/create', { browser: 'chromium', url: `${origin}/` });
      if (created.status !== 'ok') throw new Error(`create: ${JSON.stringify(created)}`);
      releases.push(await engine.sessions.hold(created.vmId));
      const running = await call(`/vm/data?id=${created.vmId}&wait=60000`);
      if (running.data[0].status !== 'running') throw new Error(`session ${created.vmId} is ${running.data[0].status}`);
      sessions.push({ id: created.vmId, link: new URL(created.shareUrl).search.slice(1), runtimeId: (await engine.store.session(created.vmId))!.runtime_id! });
    }
    await sleep(3000); // the pages settle after their start

    const measure = async (phase: string) => {
      const pids = sessions.map((s) => pidsOf(s.runtimeId));
      const before = pids.map(cpuMs);
      const began = performance.now();
      await sleep(WINDOW_MS);
      const seconds = (performance.now() - began) / 1000;
      const cpu = pids.map((p, i) => (cpuMs(p) - before[i]!) / seconds / 10); // % of one core
      const memory = sessions.map((s) => (engine.runtime.get(s.runtimeId)?.sandbox.memoryBytes() ?? 0) / 1024 / 1024);
      report('standby', `cpu_percent_per_session_${phase}`, median(cpu), '% of a core', { sessions: N, windowMs: WINDOW_MS, total: Math.round(cpu.reduce((a, b) => a + b, 0) * 10) / 10 });
      report('standby', `memory_mb_per_session_${phase}`, median(memory), 'MB', { sessions: N, measured: "each session's memory cgroup", total: Math.round(memory.reduce((a, b) => a + b, 0)) });
    };
    await measure('awake');

    // The same, awake: a viewer's first frame and a program's first command, as the baseline.
    const viewerFirstFrame = (link: string) => firstFrame(engine.url, link, GREEN, 30_000);
    const programFirstCommand = async (id: string) => (await firstCommand(call, id, origin, 1, 30_000)).ms;
    const awakeViewer = [];
    const awakeProgram = [];
    for (const s of sessions) awakeViewer.push(await viewerFirstFrame(s.link));
    for (const s of sessions) awakeProgram.push(await programFirstCommand(s.id));

    // Let go: each goes into standby AFTER_SECONDS later.
    for (const release of releases.splice(0)) release();
    const deadline = Date.now() + 60_000;
    while (sessions.some((s) => !engine.sessions.standby.isFrozen(s.id))) {
      if (Date.now() > deadline) throw new Error('the sessions did not go into standby within 60 s');
      await sleep(200);
    }
    await measure('standby');

    const wokenViewer = [];
    for (const s of sessions) {
      wokenViewer.push(await viewerFirstFrame(s.link));
    }
    // Back into standby, then woken by a program.
    while (sessions.some((s) => !engine.sessions.standby.isFrozen(s.id))) {
      if (Date.now() > deadline + 60_000) throw new Error('the sessions did not go back into standby');
      await sleep(200);
    }
    const wokenProgram = [];
    for (const s of sessions) wokenProgram.push(await programFirstCommand(s.id));
    report('standby', 'viewer_first_frame_ms_awake', median(awakeViewer), 'ms', { sessions: N, measured: 'share-link RFB connect to the page colour on screen' });
    report('standby', 'viewer_first_frame_ms_from_standby', median(wokenViewer), 'ms', { sessions: N, all: wokenViewer.map(Math.round) });
    report('standby', 'program_first_command_ms_awake', median(awakeProgram), 'ms', { sessions: N, measured: 'vm/automation, connectOverCDP, one page.evaluate' });
    report('standby', 'program_first_command_ms_from_standby', median(wokenProgram), 'ms', { sessions: N, all: wokenProgram.map(Math.round) });
    for (const s of sessions) await call('/vm/remove', { id: s.id });
  } finally {
    for (const release of releases) release();
    await engine.close();
    site.close();
    await rm(dir, { recursive: true, force: true });
  }
}
