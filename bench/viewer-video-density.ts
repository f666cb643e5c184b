// `RBK_BENCH_VIEWER=video-density npm run bench -- viewer`: how many sessions, each playing the
// 1280x720 30 fps clip and each watched on its video channel, this machine carries at >= 25
// frames a second (issue 25). Each watcher is a Node WebSocket client counting access units and
// sending receipts (test/helpers/video-client.ts), not a browser: what is measured is the
// sessions' side (their browsers playing the clip, their encoders), not the viewers' decoding.
// Sessions are added one at a time; at each count: the median and lowest of the watchers' frames
// per second, the encoders' CPU per stream and the load average.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../src/engine/engine.js';
import { findMarkedProcesses } from '../src/engine/runtime/sandbox/processes.js';
import { watchVideo, type VideoClient } from '../test/helpers/video-client.js';
import type { WatchersAnswer, WatchersRequest } from './video-watchers.js';
import { clipPlaying, FULL_WINDOW_VIDEO_PAGE, startVideoSite } from '../test/helpers/video-site.js';
import { percentile, report } from './stats.js';
import { cpuTicks } from './viewer-video.js';

const SECONDS = 5;
/** `RBK_BENCH_VIDEO_RECEIPTS=0`: watchers that send no receipts (the engine's 64 KiB rule alone, no lateness rule). */
const RECEIPTS = process.env.RBK_BENCH_VIDEO_RECEIPTS !== '0';
/** At most this many sessions (`RBK_BENCH_VIDEO_SESSIONS`); the run stops earlier once the median falls under 25 frames a second. */
const MAX_SESSIONS = Number(process.env.RBK_BENCH_VIDEO_SESSIONS ?? 8);
/** Where the watchers run: a process of their own (default) or the engine's (`RBK_BENCH_VIDEO_WATCHERS=engine`). */
const WATCHERS_APART = process.env.RBK_BENCH_VIDEO_WATCHERS !== 'engine';

/** Each watcher's frames, format messages and latest bit rate so far. */
type Counts = { frames: number; formats: number; kbps: number }[];

/** Watchers in a forked process, or in this one. */
async function startWatchers(): Promise<{ watch(url: string): Promise<void>; counts(): Promise<Counts>; close(): void }> {
  if (!WATCHERS_APART) {
    const local: VideoClient[] = [];
    return {
      watch: async (url) => void local.push(await watchVideo(url, { receipts: RECEIPTS })),
      counts: async () => local.map((w) => ({ frames: w.frames.length, formats: w.formats.length, kbps: w.formats.at(-1)?.bitrateKbps ?? 0 })),
      close: () => local.forEach((w) => w.close()),
    };
  }
  const child: ChildProcess = fork(new URL('./video-watchers.ts', import.meta.url), { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const ask = (request: WatchersRequest) =>
    new Promise<WatchersAnswer>((resolve, reject) => {
      const exited = (code: number | null) => reject(new Error(`the watchers' process exited (${code})`));
      child.once('exit', exited);
      child.once('message', (answer: WatchersAnswer) => {
        child.off('exit', exited);
        resolve(answer);
      });
      child.send(request);
    });
  return {
    async watch(url) {
      const answer = await ask({ watch: url, receipts: RECEIPTS });
      if ('error' in answer) throw new Error(answer.error);
    },
    counts: async () => ((await ask({ counts: true })) as { counts: Counts }).counts,
    close: () => child.disconnect(),
  };
}

export async function videoDensityBench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'rbk-video-density-'));
  const site = await startVideoSite({ '/': FULL_WINDOW_VIDEO_PAGE }, 10);
  const { origin } = site;
  const engine = await createEngine({ dataDir: dir, port: 0, config: { egress: { allow: ['127.0.0.1/32'] }, rateLimit: { requests: 100_000, perSeconds: 1 }, video: {} } });
  const key = (await engine.accounts.create({ contact: 'bench@example.com', plans: ['team'] })).apiKey.key;
  const call = async (path: string, body: unknown) =>
    (await (await fetch(`${engine.url}/v8${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: JSON.stringify(body) })).json()) as Record<string, any>;
  const watched: { vmId: string; dir: string }[] = [];
  const watchers = await startWatchers();
  try {
    for (let count = 1; count <= MAX_SESSIONS; count++) {
      const created = await call('/vm/create', { browser: 'chromium', url: origin });
      if (created.status !== 'ok') {
        report('viewer', 'video_density_refused', count, 'sessions', { answer: JSON.stringify(created).slice(0, 200) });
        break;
      }
      let runtime;
      for (let i = 0; i < 300 && !runtime?.control; i++) {
        const row = await engine.store.session(created.vmId);
        runtime = row?.runtime_id ? engine.runtime.get(row.runtime_id) : undefined;
        if (!runtime?.control) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      if (!runtime?.control) throw new Error(`session ${count} did not start`);
      // The clip playing, then a watcher of its video.
      await clipPlaying(runtime.control);
      const linkId = new URL(created.shareUrl).search.slice(1);
      await watchers.watch(`${engine.url.replace('http', 'ws')}/share/${linkId}/video`);
      watched.push({ vmId: created.vmId, dir: runtime.dir });
      await new Promise((resolve) => setTimeout(resolve, 3000));

      // The encoders' CPU: their processes listed every half second (a ladder step restarts one),
      // each counted from when it was first seen (from its start, if it started meanwhile).
      const encoderPids = async () => (await Promise.all(watched.map(async (w) => (await findMarkedProcesses({ dir: w.dir })).filter((p) => !p.zombie && /ffmpeg .*x11grab/.test(p.command)).map((p) => p.pid)))).flat();
      const seen = new Map<number, { first: number; last: number }>();
      const sample = async (first: boolean) => {
        for (const pid of await encoderPids()) {
          const ticks = await cpuTicks(pid).catch(() => null);
          if (ticks === null) continue;
          const known = seen.get(pid);
          if (known) known.last = ticks;
          else seen.set(pid, { first: first ? ticks : 0, last: ticks });
        }
      };
      await sample(true);
      const before = await watchers.counts();
      const started = performance.now();
      while (performance.now() - started < SECONDS * 1000) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        await sample(false);
      }
      const after = await watchers.counts();
      const seconds = (performance.now() - started) / 1000;
      const fps = after.map((w, i) => (w.frames - before[i]!.frames) / seconds);
      const encoderCpu = [...seen.values()].reduce((sum, { first, last }) => sum + last - first, 0) / seconds / watched.length;
      const rungs = after.map((w) => w.kbps);
      // A new format per watcher for each encoder that took over (a join, a step of the ladder, a recovery).
      const restartsNow = after.reduce((sum, w, i) => sum + w.formats - before[i]!.formats, 0);
      const medianFps = percentile(fps, 50);
      const load = loadavg().map((l) => l.toFixed(2)).join(' ');
      report('viewer', 'video_density_fps_p50', medianFps, 'frames/s', { sessions: count, lowest: Math.round(Math.min(...fps) * 10) / 10, watcher: `Node WebSocket client counting access units (receipts ${RECEIPTS ? 'on' : 'off'}, loopback, ${WATCHERS_APART ? 'a process of their own' : "the engine's process"})`, load_average: load });
      report('viewer', 'video_density_encoder_cpu_percent', encoderCpu, '% of one core per stream', { sessions: count, encoder_kbps: rungs.join(' '), encoder_restarts_while_measured: restartsNow, load_average: load });
      if (medianFps < 25) break;
    }
  } finally {
    watchers.close();
    for (const w of watched) {
      await call('/vm/remove', { id: w.vmId }).catch(() => undefined);
    }
    await engine.close();
    await site.close();
    await rm(dir, { recursive: true, force: true });
  }
}
