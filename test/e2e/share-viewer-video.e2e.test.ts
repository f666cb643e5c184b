// End to end, video in the live view (issue 25): a real engine with `video` on, a confined Chromium
// session whose page plays a 1280x720 30 fps clip (made here with Debian's ffmpeg, served on
// loopback, `<video autoplay muted loop>`), and the engine's own viewer site in Debian Chromium
// (playwright-core) on http://127.0.0.1, a secure context, so WebCodecs exists. The viewer switches
// to video: H.264 frames arrive on the video channel and the RFB stream falls quiet (not today's
// JPEG per frame). The page's text changes, then the video stops: the viewer goes back to RFB within seconds, receives nothing
// while nothing changes, and its picture of the page's text is the display's own pixels (read raw
// over RFB). A view-only viewer of phone size gets video too, laid over its scaled picture.
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import type { BrowserControl } from '../../src/engine/runtime/browser/control.js';
import { connectRfb } from '../helpers/rfb-client.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';
import { startVideoEngine, type VideoEngine } from '../helpers/video-engine.js';
import { clipPlaying, type VideoSite } from '../helpers/video-site.js';

let fixture: VideoEngine | undefined;
let engine: Engine;
let site: VideoSite;
let origin: string;
let key: string;
let browser: Browser;

const api = v8Caller(() => engine.url, () => key);

const VIDEO_PAGE = '<!doctype html><title>video</title><body style="margin:0;background:#fff;overflow:hidden"><p id="t" style="margin:0;padding:8px 12px;font:24px sans-serif;color:#000;background:#fff">Video in the live view: text that stays sharp.</p><video src="/clip.mp4" autoplay muted loop style="display:block;width:100vw;height:calc(100vh - 45px);background:#000"></video>';

/** A viewer page with the bytes it receives counted per channel. */
async function openViewer(url: string, viewport: { width: number; height: number }) {
  const page = await browser.newPage({ viewport });
  const received = { rfb: 0, video: 0, videoMessages: 0 };
  page.on('websocket', (socket) => {
    const path = new URL(socket.url()).pathname;
    const channel = path.endsWith('/video') ? 'video' : path.endsWith('/rfb') ? 'rfb' : null;
    if (!channel) return;
    socket.on('framereceived', (frame) => {
      received[channel] += typeof frame.payload === 'string' ? Buffer.byteLength(frame.payload) : frame.payload.length;
      if (channel === 'video') received.videoMessages++;
    });
  });
  await page.goto(url);
  await page.waitForSelector('.rbk-viewer__live[data-connection="connected"]:not([aria-hidden])', { timeout: 30_000 });
  return { page, received };
}

/** Bytes each channel brought over `ms`. */
async function rates(viewer: { page: Page; received: { rfb: number; video: number; videoMessages: number } }, ms: number) {
  const before = { ...viewer.received };
  await viewer.page.waitForTimeout(ms);
  return { rfb: viewer.received.rfb - before.rfb, video: viewer.received.video - before.video, videoMessages: viewer.received.videoMessages - before.videoMessages };
}

beforeAll(async () => {
  ({ engine, site, key } = fixture = await startVideoEngine('video', { '/': VIDEO_PAGE }));
  origin = site.origin;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await fixture?.close();
});

describe('video in the live view', () => {
  it('switches to H.264 while the page plays a video, and back to sharp, silent RFB once it stops; a view-only phone viewer gets video too', async () => {
    const created = await api('/vm/create', { browser: 'chromium', url: `${origin}/`, shareLanguage: 'en' });
    expect(created.status).toBe('ok');
    expect(await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (status) => status === 'running', 30_000)).toBe('running');
    const row = (await engine.store.session(created.vmId))!;
    const control: BrowserControl = engine.runtime.get(row.runtime_id!)!.control!;
    const linkId = new URL(created.shareUrl).search.slice(1);
    expect((await (await fetch(`${engine.url}/share/${linkId}`)).json()).video).toBe(true);

    const viewer = await openViewer(created.shareUrl, { width: 1280, height: 800 });
    let watcher: Awaited<ReturnType<typeof openViewer>> | undefined;
    try {
      expect(await clipPlaying(control)).toBeGreaterThan(0.5);
      // Sustained motion: the viewer switches to video.
      await viewer.page.waitForSelector('.rbk-viewer__live[data-video]', { timeout: 20_000 });
      await viewer.page.waitForTimeout(1000);
      const playing = await rates(viewer, 2000);
      // Frames arrive (the encoder's 30 a second, less what a loaded machine drops) ...
      expect(playing.videoMessages).toBeGreaterThan(20);
      // ... and RFB is quiet: no JPEG per frame (a few bytes of cursor or a last update at most).
      expect(playing.rfb).toBeLessThan(20_000);
      expect(playing.video).toBeLessThan((3_000_000 / 8) * 2);
      // The overlay lies exactly over noVNC's picture.
      const boxes = await viewer.page.evaluate(() => {
        const [screen, overlay] = [document.querySelector('.rbk-viewer__screen canvas:not(.rbk-viewer__video)')!, document.querySelector('.rbk-viewer__video')!].map((el) => el.getBoundingClientRect());
        return { screen: [screen!.left, screen!.top, screen!.width, screen!.height].map(Math.round), overlay: [overlay!.left, overlay!.top, overlay!.width, overlay!.height].map(Math.round) };
      });
      expect(boxes.overlay).toEqual(boxes.screen);

      // A view-only viewer the size of a phone: scaled to fit, it switches to video as well.
      const made = await fetch(`${engine.url}/share/${linkId}/view-only`, { method: 'POST' });
      watcher = await openViewer(((await made.json()) as { shareUrl: string }).shareUrl, { width: 390, height: 844 });
      await watcher.page.waitForSelector('.rbk-viewer__live[data-video]', { timeout: 20_000 });
      expect((await rates(watcher, 1000)).videoMessages).toBeGreaterThan(10);
      await watcher.page.close();
      watcher = undefined;

      // The text changes while the video shows (Xvnc notes it, sends nothing), then the video
      // stops (the element goes): back to RFB, which brings the new text, then nothing at all.
      await control.evaluate('document.getElementById("t").textContent = "Changed while the video played: as sharp."');
      await viewer.page.waitForTimeout(500);
      await control.evaluate('document.querySelector("video").remove()');
      await viewer.page.waitForSelector('.rbk-viewer__live:not([data-video])', { timeout: 5000 });
      await expect.poll(() => viewer.page.evaluate(() => (document.querySelector('.rbk-viewer__video') as HTMLElement | null)?.style.display ?? 'none'), { timeout: 3000 }).toBe('none');
      await viewer.page.waitForTimeout(1000);
      const still = await rates(viewer, 3000);
      expect(still).toEqual({ rfb: 0, video: 0, videoMessages: 0 });
      expect(engine.sessions.endsOf(created.vmId)).toBeTruthy();

      // The text as the viewer shows it is the display's own pixels, read raw over RFB.
      const raw = await connectRfb(`${engine.url.replace('http', 'ws')}/share/${linkId}/rfb`);
      try {
        // The page's first line, below the browser's own toolbar (the window fills the display).
        const top = Number(await control.evaluate('outerHeight - innerHeight'));
        const points = Array.from({ length: 64 }, (_, i) => ({ x: 12 + i * 7, y: top + 14 + (i % 5) * 3 }));
        const truth: number[][] = [];
        for (const { x, y } of points) truth.push(await raw.pixel(x, y));
        const shown = await viewer.page.evaluate((at) => {
          const canvas = document.querySelector('.rbk-viewer__screen canvas:not(.rbk-viewer__video)') as HTMLCanvasElement;
          const context = canvas.getContext('2d', { willReadFrequently: true })!;
          return at.map(({ x, y }) => Array.from(context.getImageData(x, y, 1, 1).data.slice(0, 3)));
        }, points);
        // Some of it is ink (the sample crosses the text), and each pixel is the display's, within JPEG-free rounding.
        expect(truth.filter(([r]) => r! < 128).length).toBeGreaterThan(4);
        const off = shown.map((rgb, i) => Math.max(...rgb.map((c, k) => Math.abs(c - truth[i]![k]!))));
        expect(Math.max(...off)).toBeLessThanOrEqual(2);
      } finally {
        raw.close();
      }
    } finally {
      await watcher?.page.close();
      await viewer.page.close();
      await api('/vm/remove', { id: created.vmId });
    }
  }, 180_000);
});
