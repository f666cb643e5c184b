// `npm run bench -- viewer`: what a viewer gets: time from running to the first remote pixels,
// key press to changed pixels (on a desktop-sized and a phone-sized viewer), a viewer's area
// change to the remote page redrawn at the new size, frame rate and bandwidth on animated and
// static pages, and the CPU the display's VNC server spends streaming; and the session's sound as
// the viewer hears it (bench/viewer-sound.ts) and video in the live view (bench/viewer-video.ts,
// and how many sessions playing video the machine carries: bench/viewer-video-density.ts), and how
// soon a tab the remote browser opens shows in the viewer's tab strip (bench/viewer-tabs.ts), and
// the viewer embedded in another site's page (bench/viewer-embed.ts).
// A real engine, a real browser as the viewer.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { findMarkedProcesses } from '../src/engine/runtime/sandbox/processes.js';
import { createEngine } from '../src/engine/engine.js';
import { soundFigures } from './viewer-sound.js';
import { percentile, report } from './stats.js';
import { videoBench } from './viewer-video.js';
import { videoDensityBench } from './viewer-video-density.js';
import { tabsBench } from './viewer-tabs.js';
import { embedBench } from './viewer-embed.js';
import { keyToChangedPixel } from './viewer-input.js';

const samples = Number(process.env.RBK_BENCH_SAMPLES ?? 5);
/** `RBK_BENCH_VIEWER=sound` measures the sound alone (the picture's figures take most of the run). */
const soundOnly = process.env.RBK_BENCH_VIEWER === 'sound';
/** `RBK_BENCH_VIEWER=video` measures video in the live view alone (bench/viewer-video.ts; issue 25). */
const videoOnly = process.env.RBK_BENCH_VIEWER === 'video';
/** `RBK_BENCH_VIEWER=video-density`: sessions playing video carried at >= 25 fps (bench/viewer-video-density.ts). */
const videoDensityOnly = process.env.RBK_BENCH_VIEWER === 'video-density';
/** `RBK_BENCH_VIEWER=tabs`: a tab opened in the remote browser to the viewer's strip (bench/viewer-tabs.ts; issue 36). */
const tabsOnly = process.env.RBK_BENCH_VIEWER === 'tabs';
/** `RBK_BENCH_VIEWER=embed`: the first frame framed and through the element against the share page, and the display's share of the viewer (bench/viewer-embed.ts; issue 44). */
const embedOnly = process.env.RBK_BENCH_VIEWER === 'embed';
/** A window width's colour (an RGB triple), the same in the '/resize' page and in the watcher. */
const RESIZE_COLOUR = '(w) => { const h = Math.imul(w, 2654435761) >>> 0; return [h >>> 24, (h >>> 16) & 255, (h >>> 8) & 255]; }';
/** The display size the engine gives a viewer's area (src/engine/channels/rfb/viewer-room.ts displaySizeFor, default limits). */
const DISPLAY_SIZE_FOR = '(w, h) => w > 0 && w < 500 ? [500, Math.round((h * 500) / w)] : [w, h]';
const PAGES: Record<string, string> = {
  '/static': '<!doctype html><title>static</title><body style="margin:0;background:#fff;font:24px sans-serif"><p>A static page.</p>',
  // Each key press flips the background, so its effect is one colour change to watch for.
  '/keys': '<!doctype html><title>keys</title><body style="margin:0;background:#ff0000"><script>let on=false;addEventListener("keydown",()=>{on=!on;document.body.style.background=on?"#0000ff":"#ff0000"})</script>',
  // The whole window in a colour computed from its width (RESIZE_COLOUR), repainted at every
  // resize; the time the resize event reached the page is kept for the breakdown of a sample.
  '/resize': `<!doctype html><title>resize</title><style>html,body{margin:0;height:100%}</style><script>const colour=${RESIZE_COLOUR};const paint=()=>{window.__resizedAt=performance.timeOrigin+performance.now();window.__resizedTo=innerWidth;document.documentElement.style.background="rgb("+colour(innerWidth).join(",")+")"};addEventListener("resize",paint);paint()</script>`,
  // A full-window animation: a colour that changes every frame.
  // A 440 Hz tone, silent until the bench turns `level` up (DevTools in the session's browser).
  '/tone': '<!doctype html><title>tone</title><body style="margin:0;background:#fff"><script>addEventListener("load",()=>{const c=new AudioContext({sampleRate:48000});const g=c.createGain();g.gain.value=0;const o=c.createOscillator();o.frequency.value=440;o.connect(g).connect(c.destination);o.start();window.tone=o;window.level=g})</script>',
  '/animated': '<!doctype html><title>animated</title><body style="margin:0"><canvas id=c style="width:100vw;height:100vh;display:block"></canvas><script>const c=document.getElementById("c"),x=c.getContext("2d");c.width=innerWidth;c.height=innerHeight;let i=0;function f(){i++;x.fillStyle=`hsl(${i*7%360} 80% 50%)`;x.fillRect(0,0,c.width,c.height);x.fillStyle="#fff";x.fillRect((i*13)%c.width,200,120,120);requestAnimationFrame(f)}f()</script>',
};

async function cpuTicks(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Distinct frames the viewer drew per second, sampled at each animation frame of the viewer page. */
function framesPerSecond(page: Page, seconds: number): Promise<number> {
  return page.evaluate(async (duration) => {
    const canvas = document.querySelector('.rbk-viewer__screen canvas') as HTMLCanvasElement;
    const context = canvas.getContext('2d', { willReadFrequently: true })!;
    let last = '';
    let changes = 0;
    const end = performance.now() + duration * 1000;
    while (performance.now() < end) {
      await new Promise(requestAnimationFrame);
      const key = Array.from(context.getImageData(Math.floor(canvas.width / 2), 100, 1, 1).data).join(',') + Array.from(context.getImageData(Math.floor(canvas.width / 2), 260, 1, 1).data).join(',');
      if (key !== last) changes++;
      last = key;
    }
    return changes / duration;
  }, seconds);
}

export async function viewerBench(): Promise<void> {
  if (videoOnly) return videoBench();
  if (videoDensityOnly) return videoDensityBench();
  if (tabsOnly) return tabsBench();
  if (embedOnly) return embedBench();
  const site = createServer((request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(PAGES[request.url ?? ''] ?? PAGES['/static']));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const dir = await mkdtemp(join(tmpdir(), 'rbk-viewer-bench-'));
  const engine = await createEngine({ dataDir: dir, port: 0, config: { egress: { allow: ['127.0.0.1/32'] }, rateLimit: { requests: 100_000, perSeconds: 1 } } });
  const key = (await engine.accounts.create({ contact: 'bench@example.com', plans: ['team'] })).apiKey.key;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'] });
  const call = async (path: string, body: unknown) =>
    (await (await fetch(`${engine.url}/v8${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: JSON.stringify(body) })).json()) as Record<string, any>;

  /** Opens a session's share link while it starts; resolves once the viewer is connected. */
  async function watch(path: string, viewport = { width: 1280, height: 800 }, on = browser, initScript?: string) {
    const created = await call('/vm/create', { browser: 'chromium', url: `${origin}${path}` });
    let runningAt = 0;
    const onStatus = ({ id, status }: { id: string; status: string }) => {
      if (id === created.vmId && status === 'running') runningAt = Date.now();
    };
    engine.sessions.on('status', onStatus);
    const page = await on.newPage({ viewport });
    if (initScript) await page.addInitScript(initScript);
    // Bytes the viewer receives, by channel: the picture (RFB) and the sound (Opus packets).
    const received = { rfb: 0, sound: 0 };
    page.on('websocket', (socket) => {
      const channel = socket.url().endsWith('/sound') ? 'sound' : socket.url().endsWith('/rfb') ? 'rfb' : null;
      if (channel) socket.on('framereceived', (frame) => (received[channel] += typeof frame.payload === 'string' ? Buffer.byteLength(frame.payload) : frame.payload.length));
    });
    // First remote pixels the person sees: the live screen is shown (no longer behind the waiting
    // screen) and its canvas holds something other than its initial transparent black.
    await page.addInitScript(`(() => {
      const check = () => {
        const live = document.querySelector('.rbk-viewer__live:not([aria-hidden])');
        const canvas = live && live.querySelector('.rbk-viewer__screen canvas');
        if (canvas && canvas.width > 0 && canvas.getContext('2d').getImageData(canvas.width / 2, canvas.height - 40, 1, 1).data[3] !== 0) {
          window.__firstVisiblePixelAt = Date.now();
          return;
        }
        requestAnimationFrame(check);
      };
      requestAnimationFrame(check);
    })()`);
    await page.goto(created.shareUrl);
    await page.waitForSelector('.rbk-viewer__live[data-connection="connected"]:not([aria-hidden])', { timeout: 30_000 });
    await page.waitForFunction('window.__firstVisiblePixelAt > 0', undefined, { timeout: 10_000 });
    // Recorded in the page as it happens (not when the test asks), at every animation frame.
    const firstPixelAt = Number(await page.evaluate('window.__firstVisiblePixelAt'));
    engine.sessions.off('status', onStatus);
    const runtime = engine.runtime.get((await engine.store.session(created.vmId))!.runtime_id!)!;
    // The Xvnc process itself (a confined session starts it through nsenter and setpriv).
    const xvnc = (await findMarkedProcesses({ dir: runtime.dir })).find((p) => !p.zombie && /(^|\/)Xvnc\b/.test(p.command.split(' ')[0] ?? ''));
    return {
      page,
      runtime,
      firstFrameMs: firstPixelAt - runningAt,
      /** The picture's bytes so far (the sound channel is counted apart: `soundBytes`). */
      bytes: () => received.rfb,
      soundBytes: () => received.sound,
      vmId: created.vmId as string,
      xvncPid: xvnc?.pid ?? runtime.display.server.pid,
      async end() {
        await page.close();
        await call('/vm/remove', { id: created.vmId });
      },
    };
  }

  type Watched = Awaited<ReturnType<typeof watch>>;

  /** Waits until the viewer's canvas has the display size the engine gives the viewer's area. */
  async function displayFollows(page: Page): Promise<{ width: number; height: number }> {
    const handle = await page.waitForFunction(
      `(() => {
        const area = document.querySelector('.rbk-viewer__screen').getBoundingClientRect();
        const canvas = document.querySelector('.rbk-viewer__screen canvas');
        const [w, h] = (${DISPLAY_SIZE_FOR})(Math.floor(area.width), Math.floor(area.height));
        return canvas && canvas.width === w && canvas.height === h && { width: w, height: h };
      })()`,
      undefined,
      { timeout: 15_000 },
    );
    return (await handle.jsonValue()) as { width: number; height: number };
  }

  /**
   * Key press to changed pixels on the '/keys' page, `presses` times. The pixel read is inside the
   * canvas whatever its size (the display follows the viewer's area): half its width, 80 % down.
   */
  async function inputLatencies(keys: Watched, presses: number): Promise<number[]> {
    await displayFollows(keys.page);
    await keys.page.waitForTimeout(500); // the remote page laid out and drawn at that size
    const latencies: number[] = [];
    // Focus the remote page by clicking into it through the viewer, as a person would (this also
    // focuses the viewer's keyboard input, which the keys then go through).
    const remoteColour = () => keys.runtime.control!.evaluate('document.body.style.background') as Promise<string>;
    for (let attempt = 1; ; attempt++) {
      const box = (await keys.page.locator('.rbk-viewer__screen canvas').boundingBox())!;
      await keys.page.mouse.click(box.x + box.width / 2, box.y + box.height * 0.8);
      await keys.page.waitForTimeout(300);
      // One press first, checked in the remote page itself: do the viewer's keys arrive at all?
      const before = await remoteColour();
      await keys.page.keyboard.press('a');
      const deadline = Date.now() + 2000;
      while ((await remoteColour()) === before && Date.now() < deadline) await keys.page.waitForTimeout(50);
      if ((await remoteColour()) !== before) break;
      // Seen when the viewer connected twice while the session started: the first connection's
      // late 'disconnect' clears the viewer's handle on the second, and keys go nowhere.
      console.log(JSON.stringify({ bench: 'viewer', warning: 'a key typed in the viewer did not reach the remote page; reloading the viewer', viewer: `${keys.page.viewportSize()?.width}x${keys.page.viewportSize()?.height}`, attempt }));
      if (attempt === 3) throw new Error('keys typed in the viewer do not reach the remote page');
      await keys.page.reload();
      await keys.page.waitForSelector('.rbk-viewer__live[data-connection="connected"]:not([aria-hidden])', { timeout: 30_000 });
      await displayFollows(keys.page);
      await keys.page.waitForTimeout(500);
    }
    await keys.page.waitForTimeout(300);
    for (let i = 0; i < presses; i++) {
      // The watcher starts the clock at the viewer's own keydown (a real key press from the
      // browser's input pipeline) and stops it when the remote page's colour change is drawn.
      // A string, not a function: the TypeScript runner would wrap named helpers in code the page lacks.
      latencies.push(await keyToChangedPixel(keys.page));
      await keys.page.waitForTimeout(100);
    }
    // A press whose change was not drawn within 2 s would count as 2,000 ms: say so.
    const lost = latencies.filter((ms) => ms > 2000).length;
    if (lost > 0) console.log(JSON.stringify({ bench: 'viewer', warning: `${lost} of ${presses} key presses not drawn within 2 s (counted as 2,000 ms)` }));
    return latencies;
  }

  try {
    if (soundOnly) return await soundFigures({ watch, engine, samples });
    const firstFrames: number[] = [];
    for (let i = 0; i < samples; i++) {
      const viewer = await watch('/static');
      firstFrames.push(viewer.firstFrameMs);
      if (i < samples - 1) await viewer.end();
      else {
        await viewer.page.waitForTimeout(1000);
        const before = viewer.bytes();
        await viewer.page.waitForTimeout(5000);
        report('viewer', 'bytes_per_s', (viewer.bytes() - before) / 5, 'B/s', { page: 'static' });
        await viewer.end();
      }
    }
    report('viewer', 'first_frame_ms_p50', percentile(firstFrames, 50), 'ms', { samples, from: 'status running (engine) to first pixels drawn (viewer)' });

    const keys = await watch('/keys');
    const desktopSize = await displayFollows(keys.page);
    const latencies = await inputLatencies(keys, 20);
    const desktop = { viewer: '1280x800', display: `${desktopSize.width}x${desktopSize.height}`, samples: latencies.length };
    report('viewer', 'input_to_display_ms_p50', percentile(latencies, 50), 'ms', desktop);
    report('viewer', 'input_to_display_ms_p95', percentile(latencies, 95), 'ms', desktop);
    await keys.end();

    // The same on a phone-sized viewer: the display is 500 px wide with the phone's shape, shown
    // scaled down to the viewer's area.
    const phoneKeys = await watch('/keys', { width: 390, height: 844 });
    const phoneSize = await displayFollows(phoneKeys.page);
    const phoneLatencies = await inputLatencies(phoneKeys, 20);
    const phone = { viewer: '390x844', display: `${phoneSize.width}x${phoneSize.height}`, samples: phoneLatencies.length };
    report('viewer', 'input_to_display_ms_p50', percentile(phoneLatencies, 50), 'ms', phone);
    report('viewer', 'input_to_display_ms_p95', percentile(phoneLatencies, 95), 'ms', phone);
    report('viewer', 'input_to_display_phone_vs_desktop', percentile(phoneLatencies, 50) / percentile(latencies, 50), 'x', { measured: 'p50 390x844 / p50 1280x800, same run' });
    await phoneKeys.end();

    // A viewer's area changes (a window resized, a phone turned): the time from the viewer page's
    // own resize event to the remote page redrawn at the new size in the viewer, i.e. the
    // canvas has the display size the engine gives the new area AND the pixel near its
    // bottom-right corner has the '/resize' page's colour for that width. Polled at every
    // animation frame. Between samples the viewer waits well past noVNC's and the engine's
    // 100 ms merging of resizes.
    const resizing = await watch('/resize');
    await displayFollows(resizing.page);
    await resizing.page.waitForTimeout(1000);
    const desktopA = { width: 1000, height: 700 };
    const desktopB = { width: 1280, height: 800 };
    const phoneSizeViewport = { width: 390, height: 844 };
    const sizes = [desktopA, desktopB, phoneSizeViewport, desktopB, desktopA, desktopB, desktopA, phoneSizeViewport, desktopA, desktopB, desktopA, desktopB];
    const redraws: number[] = [];
    const framebuffers: number[] = [];
    const remoteResizes: number[] = [];
    const perSample: string[] = [];
    for (const size of sizes) {
      await resizing.page.evaluate(`window.__resizeWatch = new Promise((resolve) => {
        const colour = ${RESIZE_COLOUR};
        const displaySizeFor = ${DISPLAY_SIZE_FOR};
        const screen = document.querySelector('.rbk-viewer__screen');
        const canvas = screen.querySelector('canvas');
        const context = canvas.getContext('2d', { willReadFrequently: true });
        const armed = performance.now();
        let started = 0;
        let framebufferAt = 0;
        addEventListener('resize', () => { started = performance.now(); }, { capture: true, once: true });
        const check = () => {
          const now = performance.now();
          const area = screen.getBoundingClientRect();
          const [w, h] = displaySizeFor(Math.floor(area.width), Math.floor(area.height));
          if (started && canvas.width === w && canvas.height === h) {
            if (!framebufferAt) framebufferAt = now;
            const pixel = context.getImageData(w - 20, h - 20, 1, 1).data;
            if (colour(w).every((c, i) => Math.abs(c - pixel[i]) <= 24)) {
              return resolve({ ms: now - started, framebufferMs: framebufferAt - started, startedAt: performance.timeOrigin + started, display: w + 'x' + h });
            }
          }
          if (now - armed > 5000) return resolve({ ms: NaN, framebufferMs: NaN, startedAt: 0, display: canvas.width + 'x' + canvas.height + ' (timed out; wanted ' + w + 'x' + h + ')' });
          requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      }), undefined`);
      await resizing.page.setViewportSize(size);
      const sample = (await resizing.page.evaluate('window.__resizeWatch')) as { ms: number; framebufferMs: number; startedAt: number; display: string };
      // When the remote page saw its own resize event (the same machine's clock).
      const remoteAt = Number(await resizing.runtime.control!.evaluate('window.__resizedAt'));
      redraws.push(sample.ms);
      framebuffers.push(sample.framebufferMs);
      remoteResizes.push(remoteAt - sample.startedAt);
      perSample.push(`${size.width}x${size.height}->${sample.display}: ${Math.round(sample.ms)} ms (canvas resized ${Math.round(sample.framebufferMs)}, remote resize event ${Math.round(remoteAt - sample.startedAt)})`);
      await resizing.page.waitForTimeout(1000);
    }
    const measured = { samples: redraws.length, viewers: '1000x700 <-> 1280x800, twice 390x844', measured: "viewer's resize event -> canvas at the new display size showing the remote page's colour for the new width" };
    report('viewer', 'resize_to_redraw_ms_p50', percentile(redraws, 50), 'ms', measured);
    report('viewer', 'resize_to_redraw_ms_p95', percentile(redraws, 95), 'ms', measured);
    report('viewer', 'resize_to_framebuffer_ms_p50', percentile(framebuffers, 50), 'ms', { measured: "viewer's resize event -> canvas at the new display size (noVNC got the new size from Xvnc)" });
    report('viewer', 'resize_to_remote_page_ms_p50', percentile(remoteResizes, 50), 'ms', { measured: "viewer's resize event -> the remote page's resize event (wall clocks of the two browsers)" });
    console.log(JSON.stringify({ bench: 'viewer', detail: 'resize_samples', samples: perSample }));
    await resizing.end();

    const animated = await watch('/animated');
    const animatedSize = await displayFollows(animated.page);
    const animatedPage = `animated ${animatedSize.width}x${animatedSize.height}`;
    await animated.page.waitForTimeout(1000);
    const bytesBefore = animated.bytes();
    const ticksBefore = await cpuTicks(animated.xvncPid);
    const fps = await framesPerSecond(animated.page, 5);
    const ticks = (await cpuTicks(animated.xvncPid)) - ticksBefore;
    report('viewer', 'updates_per_s', fps, 'updates/s', { page: animatedPage, measured: 'distinct frames drawn by the viewer, sampled per animation frame' });
    report('viewer', 'bytes_per_s', (animated.bytes() - bytesBefore) / 5, 'B/s', { page: animatedPage });
    report('viewer', 'streaming_cpu_percent', ticks / 5, '% of one core', { process: 'Xvnc (encoding and sending)', page: animatedPage });
    await animated.end();

    await soundFigures({ watch, engine, samples });
    await videoBench();
    await videoDensityBench();
    await tabsBench();
    await embedBench();
  } finally {
    await browser.close();
    await engine.close();
    site.close();
    await rm(dir, { recursive: true, force: true });
  }
}
