// `npm run bench -- viewer` (alone: `RBK_BENCH_VIEWER=video`): video in the live view (issue 25).
// A real 1280x720 30 fps clip (a test card, made here with ffmpeg, served on loopback, `<video
// autoplay muted loop>` filling the remote window) watched through the share link in Debian
// Chromium, on an engine with `video` on: the distinct frames the viewer draws per second, the bits
// it receives, the encoder's CPU; the same clip as today's RFB stream (a viewer without WebCodecs);
// the same with the viewer's link throttled to 2 Mbit/s, by DevTools (pacing inside the viewer
// browser) and by a real slow link (test/helpers/throttled-link.ts: a TCP proxy with backpressure,
// so the engine's socket backs up); key press to changed pixels while the video shows, on loopback
// and on that 2 Mbit/s link; and key press to changed pixels with video offered (noVNC asking for
// each update) against the figures of the picture without it. First (part `frames`, issue 37):
// frames drawn against frames the remote page presented, quiet and loaded (bench/viewer-video-frames.ts).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { loadavg, tmpdir } from 'node:os';
import { chromium, type Page } from 'playwright-core';
import { createEngine } from '../src/engine/engine.js';
import { findMarkedProcesses } from '../src/engine/runtime/sandbox/processes.js';
import { startThrottledLink, type ThrottledLink } from '../test/helpers/throttled-link.js';
import { FULL_WINDOW_VIDEO_PAGE, startVideoSite } from '../test/helpers/video-site.js';
import { percentile, report } from './stats.js';
import { keyToChangedPixel } from './viewer-input.js';
import { countFrames, FRAMES_VIEWPORT, IN_PAGE, reportFrames, startBusyLoops } from './viewer-video-frames.js';

const SECONDS = 5;
/** `RBK_BENCH_VIDEO_PARTS=frames,clip,rfb,devtools,link,keys` measures only those parts (all by default); `RBK_BENCH_VIDEO_TRACE=1` prints the slow-link viewer quarter second by quarter second. */
const part = (name: string) => !process.env.RBK_BENCH_VIDEO_PARTS || process.env.RBK_BENCH_VIDEO_PARTS.split(',').includes(name);
const PAGES: Record<string, string> = {
  '/video': FULL_WINDOW_VIDEO_PAGE,
  // The clip over the top 60 % of the window, and below it a strip that changes colour at each key.
  '/video-keys': '<!doctype html><title>video and keys</title><body style="margin:0;background:#ff0000;overflow:hidden"><video src="/clip.mp4" autoplay muted loop style="display:block;width:100vw;height:60vh;background:#000"></video><script>let on=false;addEventListener("keydown",()=>{on=!on;document.body.style.background=on?"#0000ff":"#ff0000"})</script>',
  '/keys': '<!doctype html><title>keys</title><body style="margin:0;background:#ff0000"><script>let on=false;addEventListener("keydown",()=>{on=!on;document.body.style.background=on?"#0000ff":"#ff0000"})</script>',
};
/** A viewer page without WebCodecs: what a browser outside a secure context gets (today's RFB stream). */
const NO_WEBCODECS = 'delete window.VideoDecoder; delete window.EncodedVideoChunk;';
/** The slow link: 2 Mbit/s each way, 10 ms each way. */
const SLOW_LINK = { kbitPerSecond: 2000, delayMs: 10 };

/**
 * In the viewer page: ms from the next keydown to the screen's pixel (centre, four fifths down)
 * changing in what the viewer shows: the video overlay while it shows, else noVNC's canvas.
 */
const NEXT_KEY_TO_SHOWN_PIXEL = `new Promise((resolve) => {
  const shown = () => { const overlay = document.querySelector('.rbk-viewer__video'); return overlay && overlay.style.display !== 'none' ? overlay : document.querySelector('.rbk-viewer__screen canvas'); };
  // The overlay belongs to the video's worker (an OffscreenCanvas's placeholder): read through a canvas of our own.
  const pixel = document.createElement('canvas').getContext('2d', { willReadFrequently: true });
  const read = () => { const canvas = shown(); pixel.drawImage(canvas, Math.floor(canvas.width / 2), Math.floor(canvas.height * 0.8), 1, 1, 0, 0, 1, 1); return Array.from(pixel.getImageData(0, 0, 1, 1).data.slice(0, 3)); };
  const before = read();
  document.addEventListener('keydown', () => {
    const started = performance.now();
    const poll = () => {
      let now;
      try { now = read(); } catch (error) { return resolve(-1); }
      (now.some((c, i) => Math.abs(c - before[i]) > 64) || performance.now() - started > 3000) ? resolve(performance.now() - started) : setTimeout(poll, 1);
    };
    poll();
  }, { capture: true, once: true });
})`;

export async function cpuTicks(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * Distinct frames the viewer shows per second: the video overlay while it shows, else noVNC's
 * canvas, scaled down to 160x90 at each animation frame (any change of the picture changes it).
 */
function framesPerSecond(page: Page, seconds: number): Promise<number> {
  return page.evaluate(`(async () => {
    const end = performance.now() + ${seconds} * 1000;
    const small = document.createElement('canvas');
    small.width = 160;
    small.height = 90;
    const context = small.getContext('2d', { willReadFrequently: true });
    let last = null;
    let changes = 0;
    while (performance.now() < end) {
      await new Promise(requestAnimationFrame);
      const overlay = document.querySelector('.rbk-viewer__video');
      const canvas = overlay && overlay.style.display !== 'none' ? overlay : document.querySelector('.rbk-viewer__screen canvas');
      context.drawImage(canvas, 0, 0, 160, 90);
      const data = context.getImageData(0, 0, 160, 90).data;
      if (!last || data.some((v, i) => v !== last[i])) changes++;
      last = data;
    }
    return changes / ${seconds};
  })()`);
}

/** Frames the remote page's video presented per second (its own requestVideoFrameCallback): the ceiling of what a viewer can draw. */
const PAGE_FPS = (seconds: number) => `new Promise((resolve) => {
  const video = document.querySelector('video');
  let frames = 0;
  const count = () => { frames++; video.requestVideoFrameCallback(count); };
  video.requestVideoFrameCallback(count);
  setTimeout(() => resolve(frames / ${seconds}), ${seconds} * 1000);
})`;

export async function videoBench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'rbk-video-bench-'));
  const site = await startVideoSite({ '/': PAGES['/video']!, ...PAGES }, 10);
  const { origin } = site;
  const engine = await createEngine({ dataDir: dir, port: 0, config: { egress: { allow: ['127.0.0.1/32'] }, rateLimit: { requests: 100_000, perSeconds: 1 }, video: {} } });
  const key = (await engine.accounts.create({ contact: 'bench@example.com', plans: ['team'] })).apiKey.key;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'] });
  const call = async (path: string, body: unknown) =>
    (await (await fetch(`${engine.url}/v8${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: JSON.stringify(body) })).json()) as Record<string, any>;

  /** A session on `path` and a viewer of it (1280x800), its received bytes counted per channel. */
  async function watch(path: string, options: { webCodecs: boolean; throttleKbps?: number; link?: ThrottledLink; viewport?: { width: number; height: number }; inPage?: boolean }) {
    const created = await call('/vm/create', { browser: 'chromium', url: `${origin}${path}` });
    const page = await browser.newPage({ viewport: options.viewport ?? { width: 1280, height: 800 } });
    if (!options.webCodecs) await page.addInitScript(NO_WEBCODECS);
    if (options.inPage) await page.addInitScript(IN_PAGE);
    if (options.throttleKbps) {
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: (options.throttleKbps * 1000) / 8, uploadThroughput: (options.throttleKbps * 1000) / 8 });
    }
    const received = { rfb: 0, video: 0 };
    /** The encoder's bit rate as each format message said it (the ladder's rungs, decisions.md 68). */
    const rungs: number[] = [];
    page.on('websocket', (socket) => {
      const channel = socket.url().endsWith('/video') ? 'video' : socket.url().endsWith('/rfb') ? 'rfb' : null;
      if (channel) socket.on('framereceived', (frame) => {
        received[channel] += typeof frame.payload === 'string' ? Buffer.byteLength(frame.payload) : frame.payload.length;
        if (channel === 'video' && typeof frame.payload === 'string') rungs.push(Number(JSON.parse(frame.payload).bitrateKbps));
      });
    });
    await page.goto(options.link ? options.link.through(created.shareUrl) : created.shareUrl);
    await page.waitForSelector('.rbk-viewer__live[data-connection="connected"]:not([aria-hidden])', { timeout: 30_000 });
    const runtime = engine.runtime.get((await engine.store.session(created.vmId))!.runtime_id!)!;
    const processes = async (pattern: RegExp) => (await findMarkedProcesses({ dir: runtime.dir })).filter((p) => !p.zombie && pattern.test(p.command));
    return {
      page,
      runtime,
      received,
      rungs,
      /** The display's Xvnc, and the video encoder while it runs. */
      xvnc: async () => (await processes(/(^|\/)Xvnc\b/)).map((p) => p.pid),
      encoder: async () => (await processes(/ffmpeg .*x11grab/)).map((p) => p.pid),
      async end() {
        await page.close();
        await call('/vm/remove', { id: created.vmId });
      },
    };
  }

  /** Frames, bits and CPU over SECONDS of the clip playing. */
  async function playing(viewer: Awaited<ReturnType<typeof watch>>) {
    const pids = [...(await viewer.xvnc()), ...(await viewer.encoder())];
    const encoderPids = new Set(await viewer.encoder());
    const before = { ...viewer.received };
    const ticks = await Promise.all(pids.map((pid) => cpuTicks(pid).catch(() => null)));
    const [fps, pageFps] = await Promise.all([framesPerSecond(viewer.page, SECONDS), viewer.runtime.control!.evaluate(PAGE_FPS(SECONDS)).then(Number)]);
    // An encoder restarted meanwhile (a new watcher, a new rung) is gone: its share is not counted.
    const after = await Promise.all(pids.map((pid) => cpuTicks(pid).catch(() => null)));
    const cpu = (only: (pid: number) => boolean) => pids.reduce((sum, pid, i) => sum + (only(pid) && after[i] !== null && ticks[i] !== null ? after[i]! - ticks[i]! : 0), 0) / SECONDS;
    return {
      fps,
      pageFps,
      kbitPerS: ((viewer.received.rfb - before.rfb + viewer.received.video - before.video) * 8) / 1000 / SECONDS,
      videoShare: (viewer.received.video - before.video) / Math.max(1, viewer.received.rfb - before.rfb + viewer.received.video - before.video),
      encoderCpu: cpu((pid) => encoderPids.has(pid)),
      xvncCpu: cpu((pid) => !encoderPids.has(pid)),
    };
  }

  const clipInfo = { clip: 'testsrc2 1280x720 30 fps (ffmpeg), <video autoplay muted loop> filling the window', viewer: '1280x800', get load_average() { return loadavg().map((l) => l.toFixed(2)).join(' '); } };
  try {
    if (part('frames')) {
    // Frames drawn against frames presented (issue 37): quiet, then under busy loops of our own;
    // the video in its worker, then in the page (the way before), in the same run.
    for (const loaded of [false, true]) {
      const busy = loaded ? startBusyLoops() : null;
      try {
        for (const inPage of [false, true]) {
          const viewer = await watch('/video', { webCodecs: true, viewport: FRAMES_VIEWPORT, inPage });
          const switched = await viewer.page.waitForSelector('.rbk-viewer__live[data-video]', { timeout: 30_000 }).then(() => true, () => false);
          await viewer.page.waitForTimeout(2000);
          const figures = await countFrames(viewer.page, viewer.runtime.control!);
          reportFrames(figures, { load: busy ? `${busy.count} busy-loop processes` : 'quiet', video_thread: inPage ? 'the page (as before decision 90)' : 'its worker', switched_to_video: switched, encoder_kbps: viewer.rungs.join(' -> ') });
          await viewer.end();
        }
      } finally {
        busy?.stop();
      }
    }
    }

    if (part('clip')) {
    // Video: the viewer switches once motion is sustained; measured after it did.
    const video = await watch('/video', { webCodecs: true });
    await video.page.waitForSelector('.rbk-viewer__live[data-video]', { timeout: 30_000 });
    await video.page.waitForTimeout(2000);
    const withVideo = await playing(video);
    report('viewer', 'video_fps', withVideo.fps, 'frames/s', { ...clipInfo, measured: 'distinct frames drawn by the viewer, sampled per animation frame', remote_page_fps: withVideo.pageFps, encoder_kbps: video.rungs.join(' -> ') });
    report('viewer', 'video_kbit_per_s', withVideo.kbitPerS, 'kbit/s', { ...clipInfo, video_share: Math.round(withVideo.videoShare * 1000) / 1000, encoder_kbps: video.rungs.join(' -> ') });
    report('viewer', 'video_cpu_percent', withVideo.encoderCpu, '% of one core', { ...clipInfo, process: 'ffmpeg (x11grab + libx264) in the session', xvnc_percent: Math.round(withVideo.xvncCpu) });
    // The clip stops: back to RFB, and then nothing.
    await video.runtime.control!.evaluate('document.querySelector("video").remove()');
    const stoppedAt = Date.now();
    await video.page.waitForSelector('.rbk-viewer__live:not([data-video])', { timeout: 10_000 });
    report('viewer', 'video_off_after_ms', Date.now() - stoppedAt, 'ms', { measured: 'the remote video removed -> the viewer back on RFB' });
    await video.page.waitForTimeout(1000);
    const still = { ...video.received };
    await video.page.waitForTimeout(SECONDS * 1000);
    report('viewer', 'bytes_per_s', (video.received.rfb - still.rfb + video.received.video - still.video) / SECONDS, 'B/s', { page: 'the video page once its video is removed', video: 'offered' });
    await video.end();
    }

    if (part('rfb')) {
    // Today's stream for the same clip: a viewer without WebCodecs gets RFB alone.
    const rfb = await watch('/video', { webCodecs: false });
    await rfb.page.waitForTimeout(3000);
    const withoutVideo = await playing(rfb);
    report('viewer', 'rfb_fps', withoutVideo.fps, 'frames/s', { ...clipInfo, measured: 'distinct frames drawn by a viewer without WebCodecs (RFB, Tight JPEG)', remote_page_fps: withoutVideo.pageFps });
    report('viewer', 'rfb_kbit_per_s', withoutVideo.kbitPerS, 'kbit/s', clipInfo);
    report('viewer', 'rfb_cpu_percent', withoutVideo.xvncCpu, '% of one core', { ...clipInfo, process: 'Xvnc (encoding and sending)' });
    await rfb.end();
    }

    if (part('devtools')) {
    // A viewer on a 2 Mbit/s link (DevTools network throttling of the viewer page, WebSockets included).
    const slow = await watch('/video', { webCodecs: true, throttleKbps: 2000 });
    const switched = await slow.page.waitForSelector('.rbk-viewer__live[data-video]', { timeout: 30_000 }).then(() => true, () => false);
    await slow.page.waitForTimeout(2000);
    const throttled = await playing(slow);
    const devtools = 'DevTools throttling of the viewer page 2 Mbit/s, 20 ms (paces inside the browser: no backpressure)';
    report('viewer', 'video_fps', throttled.fps, 'frames/s', { ...clipInfo, link: devtools, switched_to_video: switched, remote_page_fps: throttled.pageFps, encoder_kbps: slow.rungs.join(' -> ') });
    report('viewer', 'video_kbit_per_s', throttled.kbitPerS, 'kbit/s', { ...clipInfo, link: devtools, video_share: Math.round(throttled.videoShare * 1000) / 1000, encoder_kbps: slow.rungs.join(' -> ') });
    await slow.end();
    }

    if (part('link')) {
    // A real slow link: the throttling proxy (2 Mbit/s with TCP backpressure, 20 ms round trip).
    const link = await startThrottledLink({ port: Number(new URL(engine.url).port), ...SLOW_LINK });
    const linkLabel = 'TCP proxy 2 Mbit/s (backpressure), 20 ms round trip';
    try {
      const proxied = await watch('/video', { webCodecs: true, link });
      const switchedThere = await proxied.page.waitForSelector('.rbk-viewer__live[data-video]', { timeout: 30_000 }).then(() => true, () => false);
      // Time for the ladder to find its rung.
      await proxied.page.waitForTimeout(4000);
      if (process.env.RBK_BENCH_VIDEO_TRACE) {
        for (let i = 0; i < 40; i++) {
          const before = { ...proxied.received };
          await proxied.page.waitForTimeout(250);
          const mode = await proxied.page.locator('.rbk-viewer__live[data-video]').count();
          console.error(`trace ${i * 250} ms video=${mode} rfb=${proxied.received.rfb - before.rfb} video=${proxied.received.video - before.video} rungs=${proxied.rungs.join(',')}`);
        }
      }
      const linked = await playing(proxied);
      report('viewer', 'video_fps', linked.fps, 'frames/s', { ...clipInfo, link: linkLabel, switched_to_video: switchedThere, remote_page_fps: linked.pageFps, encoder_kbps: proxied.rungs.join(' -> ') });
      report('viewer', 'video_kbit_per_s', linked.kbitPerS, 'kbit/s', { ...clipInfo, link: linkLabel, video_share: Math.round(linked.videoShare * 1000) / 1000, encoder_kbps: proxied.rungs.join(' -> ') });
      await proxied.end();

      // Key press to changed pixels while the video shows (the strip under the clip changes colour),
      // on loopback and on the slow link.
      for (const through of [undefined, link]) {
        console.error(`video keys: ${through ? 'slow link' : 'loopback'}`);
        const keys = await watch('/video-keys', { webCodecs: true, link: through });
        const showing = await keys.page.waitForSelector('.rbk-viewer__live[data-video]', { timeout: 30_000 }).then(() => true, () => false);
        await keys.page.waitForTimeout(through ? 4000 : 1500);
        const box = (await keys.page.locator('.rbk-viewer__screen canvas').first().boundingBox())!;
        await keys.page.mouse.click(box.x + box.width / 2, box.y + box.height * 0.8);
        await keys.page.waitForTimeout(500);
        const latencies: number[] = [];
        let inVideo = 0;
        for (let i = 0; i < 20; i++) {
          const measured = keys.page.evaluate(NEXT_KEY_TO_SHOWN_PIXEL);
          await keys.page.waitForTimeout(20);
          await keys.page.keyboard.press('a');
          const ms = Number(await Promise.race([measured, new Promise((resolve) => setTimeout(() => resolve(-2), 8000))]));
          if (ms < 0) {
            console.error(`video keys: sample ${i} not measured (${ms === -1 ? 'the picture could not be read' : 'no answer in 8 s'})`);
            continue;
          }
          latencies.push(ms);
          if (process.env.RBK_BENCH_VIDEO_TRACE) console.error(`trace key ${i}: ${Math.round(ms)} ms at ${Math.round(performance.now())}`);
          if (await keys.page.locator('.rbk-viewer__live[data-video]').count()) inVideo++;
          await keys.page.waitForTimeout(150);
        }
        const measured = { viewer: '1280x800', samples: latencies.length, load_average: clipInfo.load_average, link: through ? linkLabel : 'loopback', video_showing: showing ? `${inVideo}/${latencies.length} samples` : 'no', encoder_kbps: keys.rungs.join(' -> '), max_ms: Math.round(Math.max(...latencies)) };
        report('viewer', 'video_input_to_display_ms_p50', percentile(latencies, 50), 'ms', measured);
        report('viewer', 'video_input_to_display_ms_p95', percentile(latencies, 95), 'ms', measured);
        await keys.end();
      }
    } finally {
      await link.close();
    }
    }

    // Key press to changed pixels, with video offered (noVNC asks for each update: no continuous
    // updates) and without (a viewer without WebCodecs: today's stream), in the same run.
    for (const webCodecs of part('keys') ? [false, true] : []) {
      const keys = await watch('/keys', { webCodecs });
      await keys.page.waitForTimeout(1500);
      const box = (await keys.page.locator('.rbk-viewer__screen canvas').first().boundingBox())!;
      await keys.page.mouse.click(box.x + box.width / 2, box.y + box.height * 0.8);
      await keys.page.waitForTimeout(500);
      const latencies: number[] = [];
      for (let i = 0; i < 20; i++) {
        latencies.push(await keyToChangedPixel(keys.page));
        await keys.page.waitForTimeout(100);
      }
      const measured = { viewer: '1280x800', samples: latencies.length, video: webCodecs ? 'offered (noVNC asks for each update)' : 'none (no WebCodecs: continuous updates)' };
      report('viewer', 'input_to_display_ms_p50', percentile(latencies, 50), 'ms', measured);
      report('viewer', 'input_to_display_ms_p95', percentile(latencies, 95), 'ms', measured);
      await keys.end();
    }
  } finally {
    await browser.close();
    await engine.close();
    await site.close();
    await rm(dir, { recursive: true, force: true });
  }
}
