// End to end, the remote cursor while video shows (issue 25, decisions.md 69): a real engine with
// `video` on, a confined Chromium session whose page plays a 1280x720 clip under transparent
// regions with `cursor: pointer` and `cursor: text`, and the engine's viewer site in Debian
// Chromium (playwright-core). While the viewer shows video, moving the mouse over those regions
// changes the viewer's cursor to the remote shapes (the overlay takes no pointer events, so the
// pointer is over noVNC's canvas, whose CSS cursor noVNC sets), and RFB stays nearly silent: a
// cursor shape and a pixel, not a JPEG per frame.
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import type { BrowserControl } from '../../src/engine/runtime/browser/control.js';
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

/** The clip fills the page; over its upper half, a pointer region on the left and a text region on the right. */
const CURSOR_PAGE =
  '<!doctype html><title>cursor over video</title><body style="margin:0;background:#000;overflow:hidden">' +
  '<video src="/clip.mp4" autoplay muted loop style="display:block;width:100vw;height:100vh"></video>' +
  '<div style="position:fixed;left:0;top:0;width:50vw;height:50vh;cursor:pointer"></div>' +
  '<div style="position:fixed;left:50vw;top:0;width:50vw;height:50vh;cursor:text"></div></body>';

beforeAll(async () => {
  ({ engine, site, key } = fixture = await startVideoEngine('video-cursor', { '/': CURSOR_PAGE }));
  origin = site.origin;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await fixture?.close();
});

/** What the user sees as the pointer at a point of the viewer: the CSS cursor of the element under it. */
function cursorAt(page: Page, x: number, y: number): Promise<{ element: string; cursor: string }> {
  return page.evaluate(([px, py]) => {
    const element = document.elementFromPoint(px!, py!) as HTMLElement;
    return { element: `${element.tagName.toLowerCase()}.${element.className}`, cursor: getComputedStyle(element).cursor };
  }, [x, y]);
}

describe('the remote cursor while video shows', () => {
  it('takes the remote page’s shapes over the video, with RFB carrying only those', async () => {
    const created = await api('/vm/create', { browser: 'chromium', url: `${origin}/`, shareLanguage: 'en' });
    expect(created.status).toBe('ok');
    expect(await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (status) => status === 'running', 30_000)).toBe('running');
    const row = (await engine.store.session(created.vmId))!;
    const control: BrowserControl = engine.runtime.get(row.runtime_id!)!.control!;

    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    let rfbBytes = 0;
    page.on('websocket', (socket) => {
      if (new URL(socket.url()).pathname.endsWith('/rfb')) socket.on('framereceived', (frame) => (rfbBytes += typeof frame.payload === 'string' ? Buffer.byteLength(frame.payload) : frame.payload.length));
    });
    try {
      await page.goto(created.shareUrl);
      await page.waitForSelector('.rbk-viewer__live[data-connection="connected"]:not([aria-hidden])', { timeout: 30_000 });
      expect(await clipPlaying(control)).toBeGreaterThan(0.5);
      await page.waitForSelector('.rbk-viewer__live[data-video]', { timeout: 20_000 });
      await page.waitForTimeout(1000);

      // Points of the viewer over the remote page's regions: the browser's toolbar is above the page.
      const box = (await page.locator('.rbk-viewer__screen canvas:not(.rbk-viewer__video)').boundingBox())!;
      const top = Number(await control.evaluate('outerHeight - innerHeight'));
      const scale = box.height / Number(await control.evaluate('outerHeight'));
      const pageTop = box.y + top * scale;
      const pageHeight = box.height - top * scale;
      const points = {
        pointer: { x: box.x + box.width * 0.25, y: pageTop + pageHeight * 0.25 },
        text: { x: box.x + box.width * 0.75, y: pageTop + pageHeight * 0.25 },
        plain: { x: box.x + box.width * 0.5, y: pageTop + pageHeight * 0.8 },
      };

      // The arrow over the plain video first (wherever the remote pointer was before).
      await page.mouse.move(points.plain.x, points.plain.y, { steps: 4 });
      await page.waitForTimeout(1500);
      const before = rfbBytes;
      const shapes: Array<[string, string]> = [['plain', (await cursorAt(page, points.plain.x, points.plain.y)).cursor]];
      for (const name of ['pointer', 'text', 'plain'] as const) {
        const point = points[name];
        const previous = shapes.at(-1)![1];
        await page.mouse.move(point.x, point.y, { steps: 4 });
        // The viewer's cursor becomes the remote shape there (noVNC's URL cursor on its canvas).
        await expect.poll(async () => (await cursorAt(page, point.x, point.y)).cursor, { timeout: 5000 }).not.toBe(previous);
        const seen = await cursorAt(page, point.x, point.y);
        expect(seen.cursor).toMatch(/^url\(/);
        // The overlay takes no pointer events: the pointer is over noVNC's canvas, as without video.
        expect(seen.element).toBe('canvas.');
        shapes.push([name, seen.cursor]);
        // Video showed throughout.
        expect(await page.locator('.rbk-viewer__live[data-video]').count()).toBe(1);
      }
      // Three shapes (the pointing hand, the text beam, the arrow), and the arrow again where it was.
      expect(new Set(shapes.map(([, cursor]) => cursor)).size).toBe(3);
      expect(shapes[3]![1]).toBe(shapes[0]![1]);
      // RFB carried the shapes and a pixel, not the video: today's JPEG stream brings megabytes in this time.
      expect(rfbBytes - before).toBeLessThan(60_000);
    } finally {
      await page.close();
      await api('/vm/remove', { id: created.vmId });
    }
  }, 180_000);
});
