// Part `frames` of `RBK_BENCH_VIEWER=video npm run bench -- viewer` (issue 37, decisions.md 90):
// frames the viewer draws against frames the remote page presented, in one run, on a quiet machine
// and under a CPU load this bench starts and ends itself (busy-loop processes, one per core). The
// viewer is the one a new user makes: Debian Chromium headless at 1280x760, the full-window clip,
// the engine's defaults, and a sampler in the viewer page that reads every canvas at full size at
// each animation frame (what keeps the page's thread busy). Each viewer plays the video in its
// worker (today) and in the page (the way before: no OffscreenCanvas), one after the other.
// Per second: the remote page's presented frames (its requestVideoFrameCallback) and the viewer's
// counts from the overlay (`data-frames-*`: received, skipped, decoded, drawn); medians of the
// seconds, and drawn / presented over the whole window.
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import type { Page } from 'playwright-core';
import { percentile, report } from './stats.js';

const SECONDS = Number(process.env.RBK_BENCH_VIDEO_FRAMES_SECONDS ?? 8);
/** Busy-loop processes for the loaded half (`RBK_BENCH_VIDEO_BUSY`, one per core by default). */
const BUSY = Number(process.env.RBK_BENCH_VIDEO_BUSY ?? availableParallelism());
export const FRAMES_VIEWPORT = { width: 1280, height: 760 };
/** A viewer page whose video plays in the page, not in a worker (the way before decision 90). */
export const IN_PAGE = 'delete window.OffscreenCanvas;';

/** In the viewer page: every canvas read whole at each animation frame, until `window.__rbkSamplerStop`. */
const FULL_SIZE_SAMPLER = `(() => {
  const copies = new Map();
  const step = () => {
    if (window.__rbkSamplerStop) return;
    for (const canvas of document.querySelectorAll('canvas')) {
      if (!canvas.width || !canvas.height || !canvas.isConnected) continue;
      let copy = copies.get(canvas);
      if (!copy) copies.set(canvas, (copy = Object.assign(document.createElement('canvas'), { width: canvas.width, height: canvas.height }).getContext('2d', { willReadFrequently: true })));
      copy.drawImage(canvas, 0, 0);
      copy.getImageData(0, 0, canvas.width, canvas.height);
    }
    requestAnimationFrame(step);
  };
  requestAnimationFrame(step);
})()`;
/** In the remote page: frames its video presented so far. */
const PRESENTED = `(() => {
  if (window.__rbkPresented === undefined) {
    window.__rbkPresented = 0;
    const video = document.querySelector('video');
    const count = () => { window.__rbkPresented++; video.requestVideoFrameCallback(count); };
    video.requestVideoFrameCallback(count);
  }
  return window.__rbkPresented;
})()`;
const VIEWER_COUNTS = `(() => { const d = document.querySelector('.rbk-viewer__video')?.dataset ?? {}; return [+d.framesReceived || 0, +d.framesSkipped || 0, +d.framesDecoded || 0, +d.framesDrawn || 0]; })()`;

/** Busy loops in processes of their own, ended by `stop`. */
export function startBusyLoops(count = BUSY): { count: number; stop(): void } {
  const loops: ChildProcess[] = Array.from({ length: count }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  return { count, stop: () => loops.forEach((loop) => loop.kill('SIGKILL')) };
}

/** Per second over SECONDS: presented, and the viewer's received, skipped, decoded, drawn. */
export async function countFrames(viewer: Page, remote: { evaluate(expression: string): Promise<unknown> }) {
  await viewer.evaluate(FULL_SIZE_SAMPLER);
  await remote.evaluate(PRESENTED);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  // Each reading with when it was taken (a loaded machine answers late): rates per elapsed second.
  const read = async () => {
    const counts = [Number(await remote.evaluate(PRESENTED)), ...((await viewer.evaluate(VIEWER_COUNTS)) as number[])];
    return { at: performance.now(), counts };
  };
  const seconds: number[][] = [];
  let last = await read();
  const first = last;
  for (let i = 0; i < SECONDS; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = await read();
    seconds.push(now.counts.map((n, j) => ((n - last.counts[j]!) * 1000) / (now.at - last.at)));
    last = now;
  }
  await viewer.evaluate('window.__rbkSamplerStop = true');
  const total = last.counts.map((n, j) => n - first.counts[j]!);
  const median = (j: number) => percentile(seconds.map((s) => s[j]!), 50);
  return { presented: median(0), received: median(1), skipped: median(2), decoded: median(3), drawn: median(4), ratio: total[4]! / Math.max(1, total[0]!), total };
}

/** One line per figure for one viewer; `where` says the load and the thread. */
export function reportFrames(figures: Awaited<ReturnType<typeof countFrames>>, where: Record<string, unknown>): void {
  const extra = { ...where, viewer: `${FRAMES_VIEWPORT.width}x${FRAMES_VIEWPORT.height}`, sampler: 'every canvas read whole per animation frame', seconds: SECONDS, load_average: loadavg().map((l) => l.toFixed(2)).join(' ') };
  report('viewer', 'video_presented_fps_p50', figures.presented, 'frames/s', { ...extra, measured: 'the remote page video (requestVideoFrameCallback)' });
  report('viewer', 'video_decoded_fps_p50', figures.decoded, 'frames/s', { ...extra, received_fps_p50: figures.received, skipped_fps_p50: figures.skipped });
  report('viewer', 'video_drawn_fps_p50', figures.drawn, 'frames/s', extra);
  report('viewer', 'video_drawn_per_presented', Math.round(figures.ratio * 1000) / 1000, 'ratio', { ...extra, totals: `presented ${figures.total[0]}, received ${figures.total[1]}, skipped ${figures.total[2]}, decoded ${figures.total[3]}, drawn ${figures.total[4]}` });
}
