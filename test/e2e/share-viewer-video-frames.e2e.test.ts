// End to end, every decoded frame reaches the picture (issue 37, decisions.md 90): a real engine
// with its default video settings, a confined Chromium session playing the full-window 1280x720
// 30 fps clip, and the engine's viewer site in Debian Chromium (playwright-core) at 1280x760, as a
// new user makes it. Over a short stretch of the clip the viewer draws exactly the frames it decodes
// (the overlay's `data-frames-*` counts), what it draws moves, and it goes on drawing while the
// viewer page's own thread is held by a script (the video plays in a worker of its own: a page that
// is busy does not stop the picture). No speed is asserted here: figures are bench/'s.
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';
import { startVideoEngine, type VideoEngine } from '../helpers/video-engine.js';
import { clipPlaying, FULL_WINDOW_VIDEO_PAGE } from '../helpers/video-site.js';

let fixture: VideoEngine | undefined;
let engine: Engine;
let key: string;
let origin: string;
let browser: Browser;

const api = v8Caller(() => engine.url, () => key);

type Counts = { received: number; skipped: number; decoded: number; drawn: number };

/** The overlay's frame counts (every player of this connection so far). */
const counts = (page: Page): Promise<Counts> =>
  page.evaluate(() => {
    const data = (document.querySelector('.rbk-viewer__video') as HTMLElement | null)?.dataset ?? {};
    return { received: Number(data.framesReceived ?? 0), skipped: Number(data.framesSkipped ?? 0), decoded: Number(data.framesDecoded ?? 0), drawn: Number(data.framesDrawn ?? 0) };
  });

/** A small copy of what the overlay shows (read through a canvas of the test's own). */
const overlayPicture = (page: Page): Promise<number[]> =>
  page.evaluate(() => {
    const small = document.createElement('canvas');
    small.width = 64;
    small.height = 36;
    const context = small.getContext('2d', { willReadFrequently: true })!;
    context.drawImage(document.querySelector('.rbk-viewer__video') as HTMLCanvasElement, 0, 0, 64, 36);
    return Array.from(context.getImageData(0, 0, 64, 36).data);
  });

beforeAll(async () => {
  ({ engine, key } = fixture = await startVideoEngine('video-frames', { '/': FULL_WINDOW_VIDEO_PAGE }));
  origin = fixture.site.origin;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await fixture?.close();
});

describe('video frames at the viewer', () => {
  it('draws every frame it decodes, and goes on drawing while the viewer page is busy', async () => {
    const created = await api('/vm/create', { browser: 'chromium', url: `${origin}/`, shareLanguage: 'en' });
    expect(created.status).toBe('ok');
    expect(await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (status) => status === 'running', 30_000)).toBe('running');
    const control = engine.runtime.get((await engine.store.session(created.vmId))!.runtime_id!)!.control!;
    const page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
    try {
      await page.goto(created.shareUrl);
      expect(await clipPlaying(control)).toBeGreaterThan(0.5);
      await page.waitForSelector('.rbk-viewer__live[data-video]', { timeout: 30_000 });

      // A short stretch of the clip: what is decoded is drawn, every frame, and the picture moves.
      const first = await overlayPicture(page);
      await page.waitForTimeout(2000);
      const stretch = await counts(page);
      expect(stretch.decoded).toBeGreaterThan(0);
      expect(stretch.drawn).toBe(stretch.decoded);
      expect(stretch.decoded + stretch.skipped).toBeLessThanOrEqual(stretch.received);
      expect(await overlayPicture(page)).not.toEqual(first);

      // The viewer page's thread held for two seconds by a script: the video's frames are drawn
      // meanwhile (each frame's drawing time, read afterwards from the overlay's attribute).
      const held = await page.evaluate(async () => {
        const overlay = document.querySelector('.rbk-viewer__video') as HTMLElement;
        const times: number[] = [];
        const observer = new MutationObserver((records) => {
          for (const record of records) if (record.oldValue) times.push(Number(record.oldValue));
        });
        observer.observe(overlay, { attributes: true, attributeFilter: ['data-frame-drawn-at'], attributeOldValue: true });
        const from = performance.timeOrigin + performance.now();
        while (performance.timeOrigin + performance.now() < from + 2000) {
          /* the page's own thread, busy */
        }
        const to = performance.timeOrigin + performance.now();
        // The worker's messages of those two seconds come in now.
        await new Promise((resolve) => setTimeout(resolve, 1000));
        observer.disconnect();
        times.push(Number(overlay.dataset.frameDrawnAt));
        return { drawnMeanwhile: new Set(times.filter((at) => at > from && at < to)).size };
      });
      expect(held.drawnMeanwhile).toBeGreaterThan(0);

      const after = await counts(page);
      expect(after.drawn).toBeGreaterThan(stretch.drawn);
      expect(after.drawn).toBe(after.decoded);
    } finally {
      await page.close();
      await api('/vm/remove', { id: created.vmId });
    }
  }, 180_000);
});
