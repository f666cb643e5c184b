// `npm run bench -- soak`: the engine under long use stays flat. One engine process (SQLite, as
// `serve` runs it) goes through: hundreds of sessions created and removed one after another
// (RBK_SOAK_SESSIONS, default 200); many viewers on one session (raw RFB clients connecting,
// reading and leaving, round after round); many status pollers at once; a person opening many
// tabs in one session (Ctrl+T through the viewer). Sampled all along: the engine's resident
// memory, its open files, and the processes of every session. It prints the sessions cycled, peak
// and final RSS and fds against the start, processes left, and every answer that was not ok.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { findMarkedProcesses } from '../src/engine/runtime/sandbox/processes.js';
import { Api, createAccount, makeWorkspace, removeWorkspace, startEngine, testConfig, type PlanConfig } from '../test/api/harness.js';
import { connectRfb } from '../test/helpers/rfb-client.js';
import { report } from './stats.js';

const SESSIONS = Number(process.env.RBK_SOAK_SESSIONS ?? 200);
/** A link's viewer cap (docs/viewer.md): every round fills it. */
const VIEWERS = 8;
const VIEWER_ROUNDS = 20;
const POLLERS = 50;
const POLL_SECONDS = 15;
const TABS = 25;

const PLAN: PlanConfig = {
  id: 'soak', name: 'Soak', running_session_limit: 5, cycle_session_limit: null, residential_cycle_mb_limit: null,
  location_access: false, programmatic_access: true, max_session_minutes: 600, idle_timeout_minutes: 600,
};

interface Sample {
  at: string;
  rssMb: number;
  fds: number;
  sessionProcesses: number;
}

export async function soakBench(): Promise<void> {
  const started = Date.now();
  const page = createServer((_, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<title>soak</title><body style="background:#fd0">soak</body>'));
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  const pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
  const workspace = await makeWorkspace(testConfig({ plans: [PLAN], rateLimit: { requests: 1_000_000_000, perSeconds: 1 } }));
  const engine = await startEngine({ workspace });
  const pid = engine.child.pid!;
  const root = join(workspace.dataDir, 'sessions');
  const api = new Api(engine.url, (await createAccount(workspace, [PLAN])).key);
  const errors: string[] = [];
  const samples: Sample[] = [];

  const sample = async (at: string): Promise<Sample> => {
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    const s = {
      at,
      rssMb: Math.round(rssKb / 102.4) / 10,
      fds: readdirSync(`/proc/${pid}/fd`).length,
      sessionProcesses: (await findMarkedProcesses({ root })).filter((p) => !p.zombie).length,
    };
    samples.push(s);
    return s;
  };
  const waitFor = async (vmId: string, wanted: string, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const reply = await api.data(vmId);
      const status = reply.json?.data?.[0]?.status as string | undefined;
      if (status === wanted) return;
      if (Date.now() > deadline || status === 'error' || status === 'suspended') throw new Error(`session ${vmId} is ${status}, not ${wanted}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const cycle = async (): Promise<void> => {
    const created = await api.create({ browser: 'chromium', url: pageUrl });
    if (created.json?.status !== 'ok') return void errors.push(`create: ${created.text.slice(0, 200)}`);
    try {
      await waitFor(created.json.vmId, 'running');
    } catch (error) {
      errors.push((error as Error).message);
    }
    const removed = await api.remove(created.json.vmId);
    if (removed.json?.status !== 'ok') errors.push(`remove: ${removed.text.slice(0, 200)}`);
    await waitFor(created.json.vmId, 'deleted').catch((error: Error) => errors.push(error.message));
  };

  try {
    for (let index = 0; index < 5; index++) await cycle();
    const baseline = await sample('after 5 warm-up sessions');

    // 1. Hundreds of sessions, one after another.
    for (let index = 1; index <= SESSIONS; index++) {
      await cycle();
      if (index % 25 === 0) await sample(`after ${index} sessions`);
    }
    const afterCycles = await sample(`after ${SESSIONS} sessions`);

    // 2. Many viewers on one session, connecting, reading and leaving.
    const watched = await api.create({ browser: 'chromium', url: pageUrl });
    await waitFor(watched.json.vmId, 'running');
    const link = new URL(watched.json.shareUrl).search.slice(1);
    const rfbUrl = `${engine.url.replace('http', 'ws')}/share/${link}/rfb`;
    let viewerReads = 0;
    for (let round = 0; round < VIEWER_ROUNDS; round++) {
      await Promise.all(
        Array.from({ length: VIEWERS }, async () => {
          try {
            const viewer = await connectRfb(rfbUrl);
            for (let read = 0; read < 10; read++) {
              await viewer.pixel(640, 600);
              viewerReads++;
            }
            viewer.close();
            await viewer.closed;
          } catch (error) {
            errors.push(`viewer: ${(error as Error).message}`);
          }
        }),
      );
    }
    const afterViewers = await sample(`after ${VIEWER_ROUNDS} rounds of ${VIEWERS} viewers`);

    // 3. Many pollers at once.
    let polls = 0;
    const pollUntil = Date.now() + POLL_SECONDS * 1000;
    await Promise.all(
      Array.from({ length: POLLERS }, async () => {
        while (Date.now() < pollUntil) {
          const reply = await api.data(watched.json.vmId).catch((error: Error) => ({ json: undefined, text: error.message }));
          polls++;
          if (reply.json?.status !== 'ok') errors.push(`poll: ${reply.text.slice(0, 200)}`);
        }
      }),
    );
    const afterPolls = await sample(`after ${POLLERS} pollers for ${POLL_SECONDS} s`);

    // 4. A person opens many tabs (Ctrl+T through the viewer), then the session ends.
    const person = await connectRfb(rfbUrl);
    for (let tab = 0; tab < TABS; tab++) {
      await person.keyChord(0xffe3, 0x74); // Control_L + t
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const withTabs = await sample(`the watched session with ${TABS} more tabs`);
    person.close();
    await api.remove(watched.json.vmId);
    await waitFor(watched.json.vmId, 'deleted');
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const final = await sample('at the end, every session removed');

    report('soak', 'sessions_cycled', SESSIONS + 6, 'sessions', { one_at_a_time: true, plus: 'one watched session' });
    report('soak', 'engine_rss_mb', final.rssMb, 'MB', { start: baseline.rssMb, after_sessions: afterCycles.rssMb, after_viewers: afterViewers.rssMb, after_pollers: afterPolls.rssMb, peak: Math.max(...samples.map((s) => s.rssMb)), growth: Math.round((final.rssMb - baseline.rssMb) * 10) / 10 });
    report('soak', 'engine_open_files', final.fds, 'fds', { start: baseline.fds, peak: Math.max(...samples.map((s) => s.fds)) });
    report('soak', 'session_processes_left', final.sessionProcesses, 'processes', { watched_session_with_tabs: withTabs.sessionProcesses, peak: Math.max(...samples.map((s) => s.sessionProcesses)) });
    report('soak', 'viewer_reads', viewerReads, 'reads', { viewers: VIEWERS * VIEWER_ROUNDS, expected: VIEWERS * VIEWER_ROUNDS * 10 });
    report('soak', 'status_polls', polls, 'requests', { pollers: POLLERS, seconds: POLL_SECONDS, per_second: Math.round(polls / POLL_SECONDS) });
    report('soak', 'errors', errors.length, 'answers', { first: errors.slice(0, 5) });
    report('soak', 'samples', samples.length, 'samples', { all: samples });
    report('soak', 'bench_duration_s', Math.round((Date.now() - started) / 1000), 's');
  } finally {
    await engine.stop();
    await removeWorkspace(workspace).catch((error: Error) => console.error(error.message));
    await new Promise((resolve) => page.close(resolve));
  }
}
