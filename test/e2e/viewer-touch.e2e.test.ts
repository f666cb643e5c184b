// End to end on a phone (issue 36): Debian Chromium in mobile emulation (touch, a phone's viewport),
// touches dispatched through DevTools, a real engine and session. One finger taps (the remote
// button's click handler runs), a long press is a right click (the remote `contextmenu` fires),
// two fingers scroll the remote page, a pinch zooms this viewer's view and not the remote display
// (its size, and the remote page's zoom, unchanged; a tap in the zoomed view lands where it shows);
// a tap into a remote text field focuses the viewer's input asking for the on-screen keyboard, and
// what is typed arrives. A view-only link's gestures pan and zoom its own view and send nothing.
import { WebSocket } from 'ws';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import type { BrowserControl } from '../../src/engine/runtime/browser/control.js';
import { parseShareLink, shareBaseOf } from '../../src/protocol/share.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { v8Caller } from '../helpers/site.js';

// Fixed controls over a page taller than the window: scrolling moves the page, never the controls.
const PAGE = `<!doctype html><title>Touch</title><meta name="viewport" content="width=device-width">
<body style="margin:0;height:5000px;background:linear-gradient(#ffd700,#4169e1)">
<button id="tap" style="position:fixed;left:20px;top:20px;width:200px;height:80px;font-size:24px" onclick="window.taps++">Tap</button>
<div id="menu" style="position:fixed;left:20px;top:130px;width:200px;height:80px;background:#c00" oncontextmenu="window.menus++;event.preventDefault()"></div>
<input id="field" style="position:fixed;left:20px;top:240px;width:300px;height:48px;font-size:24px">
<script>window.taps = 0; window.menus = 0;</script>`;

let fixture: EngineFixture;
let engine: Engine;
let key: string;
let browser: Browser;
let shareUrl: string;
let control: BrowserControl;
const api = v8Caller(() => engine.url, () => key);
const remote = async <T>(expression: string) => (await control.evaluate(expression)) as T;

/** A phone: Chromium's mobile emulation with touch. */
async function openPhone(url: string): Promise<{ context: BrowserContext; page: Page; cdp: CDPSession; sent: number[] }> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, hasTouch: true, isMobile: true });
  const page = await context.newPage();
  // SetDesktopSize messages (RFB type 251) the viewer sends, counted as they leave.
  const sent: number[] = [];
  page.on('websocket', (socket) =>
    socket.on('framesent', (frame) => {
      const bytes = typeof frame.payload === 'string' ? Buffer.from(frame.payload, 'latin1') : frame.payload;
      if (bytes[0] === 251 && bytes.length >= 8) sent.push(Date.now());
    }),
  );
  await page.goto(url);
  await page.waitForSelector('.rbk-viewer__screen canvas', { timeout: 30_000 });
  await expect.poll(() => page.locator('.rbk-viewer__live').getAttribute('data-connection'), { timeout: 15_000 }).toBe('connected');
  return { context, page, cdp: await context.newCDPSession(page), sent };
}

/** Where a point of the remote page (CSS pixels of its window) shows in the viewer now. */
async function shown(page: Page, x: number, y: number): Promise<{ x: number; y: number }> {
  const chrome = await remote<number>('outerHeight - innerHeight');
  return page.evaluate(
    ({ x, y }) => {
      const canvas = document.querySelector('.rbk-viewer__screen canvas') as HTMLCanvasElement;
      const rect = canvas.getBoundingClientRect();
      return { x: rect.left + (x * rect.width) / canvas.width, y: rect.top + (y * rect.height) / canvas.height };
    },
    { x, y: y + chrome },
  );
}

type Point = { x: number; y: number };
const touch = (cdp: CDPSession, type: 'touchStart' | 'touchMove' | 'touchEnd', points: Point[]) =>
  cdp.send('Input.dispatchTouchEvent', { type, touchPoints: points.map((p, id) => ({ x: p.x, y: p.y, id })) });

/**
 * A tap: the finger's start and end sent together (DevTools runs them in order), so the tap is as
 * short as a finger's. Awaited one after the other, a loaded test process (the engine runs in it)
 * could hold the finger down past noVNC's 1 s tap time, making it a long press.
 */
async function tap(cdp: CDPSession, at: Point): Promise<void> {
  await Promise.all([touch(cdp, 'touchStart', [at]), touch(cdp, 'touchEnd', [])]);
}

/** Two fingers from `from` to `to`, in steps (a finger's path as a phone reports it). */
async function twoFingers(cdp: CDPSession, from: [Point, Point], to: [Point, Point], steps = 12): Promise<void> {
  await touch(cdp, 'touchStart', from);
  for (let i = 1; i <= steps; i++) {
    const at = from.map((p, n) => ({ x: p.x + ((to[n]!.x - p.x) * i) / steps, y: p.y + ((to[n]!.y - p.y) * i) / steps }));
    await touch(cdp, 'touchMove', at);
    await new Promise((r) => setTimeout(r, 16));
  }
  await touch(cdp, 'touchEnd', []);
}

const geometry = (page: Page) =>
  page.evaluate(() => {
    const area = document.querySelector('.rbk-viewer__screen')!.getBoundingClientRect();
    const canvas = document.querySelector('.rbk-viewer__screen canvas') as HTMLCanvasElement;
    const drawn = canvas.getBoundingClientRect();
    return { area: { w: area.width, h: area.height }, drawn: { w: drawn.width, h: drawn.height }, framebuffer: { w: canvas.width, h: canvas.height } };
  });
const zoomOf = async (page: Page) => Number((await page.locator('.rbk-viewer__live').getAttribute('data-zoom')) ?? 1);
const remoteSize = () => remote<number[]>('[screen.width, screen.height, innerWidth, devicePixelRatio]');

beforeAll(async () => {
  fixture = await startEngine({ name: 'touch', site: PAGE });
  ({ engine, account: { key } } = fixture);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  const created = await api('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/` });
  expect(created.status).toBe('ok');
  shareUrl = created.shareUrl;
  for (let i = 0; i < 150 && (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status !== 'running'; i++) await new Promise((r) => setTimeout(r, 200));
  const row = (await engine.store.session(created.vmId))!;
  control = engine.runtime.get(row.runtime_id!)!.control!;
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await fixture?.close();
});

describe('a phone controlling the session', () => {
  it('taps, long-presses, scrolls with two fingers, pinches its own view, and types into a tapped field', async () => {
    const { context, page, cdp, sent } = await openPhone(shareUrl);
    try {
      // The display takes the phone's shape first (viewer-fit-input.e2e.test.ts); then it stays.
      await expect.poll(async () => (await geometry(page)).framebuffer.w, { timeout: 15_000 }).toBe(500);
      // ... and the browser's window fills it.
      await expect.poll(async () => {
        const [w, h, outerW, outerH] = await remote<number[]>('[screen.width, screen.height, outerWidth, outerHeight]');
        const { framebuffer } = await geometry(page);
        return w === outerW && h === outerH && framebuffer.w === w && framebuffer.h === h;
      }, { timeout: 15_000 }).toBe(true);
      const input = page.locator('.rbk-viewer__keyboard-input');

      // One finger taps: the remote button's click handler runs; no keyboard is asked for.
      await tap(cdp, await shown(page, 120, 60));
      await expect.poll(() => remote<number>('window.taps'), { timeout: 10_000 }).toBe(1);
      await expect.poll(() => input.evaluate((el) => (el as HTMLTextAreaElement).inputMode), { timeout: 5000 }).toBe('none');

      // A long press is a right click: the remote contextmenu fires while the finger is down.
      await touch(cdp, 'touchStart', [await shown(page, 120, 170)]);
      await expect.poll(() => remote<number>('window.menus'), { timeout: 10_000 }).toBe(1);
      await touch(cdp, 'touchEnd', []);

      // Two fingers moving up scroll the remote page down.
      const a = await shown(page, 150, 500);
      const b = await shown(page, 300, 500);
      await twoFingers(cdp, [a, b], [{ x: a.x, y: a.y - 250 }, { x: b.x, y: b.y - 250 }]);
      await expect.poll(() => remote<number>('scrollY'), { timeout: 10_000 }).toBeGreaterThan(0);
      expect(await remote<number>('window.taps')).toBe(1);

      // A pinch zooms this view: the remote display keeps its size, the remote page its zoom.
      // (The remote browser scrolls smoothly: the scroll is read once it has come to rest.)
      let last = -1;
      await expect.poll(async () => last === (last = await remote<number>('scrollY')), { timeout: 10_000, interval: 300 }).toBe(true);
      const scrolled = last;
      const sizeBefore = await remoteSize();
      const before = await geometry(page);
      const resizesBefore = sent.length;
      // Pinched open around the remote text field: it stays under the fingers.
      const c = await shown(page, 170, 264);
      await twoFingers(cdp, [{ x: c.x - 25, y: c.y }, { x: c.x + 25, y: c.y }], [{ x: c.x - 85, y: c.y }, { x: c.x + 85, y: c.y }]);
      await expect.poll(() => zoomOf(page), { timeout: 5000 }).toBeGreaterThan(2);
      const zoomed = await geometry(page);
      expect(zoomed.framebuffer).toEqual(before.framebuffer);
      expect(zoomed.area).toEqual(before.area);
      expect(zoomed.drawn.w).toBeGreaterThan(before.drawn.w * 2);
      await new Promise((r) => setTimeout(r, 1000));
      expect(await remoteSize()).toEqual(sizeBefore);
      expect(sent.length).toBe(resizesBefore);
      expect(await remote<number>('scrollY')).toBe(scrolled);
      await expect.poll(() => page.getByRole('button', { name: /Fit to screen/ }).isVisible()).toBe(true);

      // In the zoomed view a tap still lands where it shows: on the field, which takes the focus;
      // the viewer's input has the focus and asks for the keyboard, and typing reaches the field.
      const field = await shown(page, 170, 264);
      expect(Math.abs(field.x - c.x)).toBeLessThan(40);
      expect(Math.abs(field.y - c.y)).toBeLessThan(40);
      await tap(cdp, field);
      await expect.poll(() => remote<string>('document.activeElement && document.activeElement.id'), { timeout: 10_000 }).toBe('field');
      await expect.poll(() => input.evaluate((el) => (el as HTMLTextAreaElement).inputMode), { timeout: 10_000 }).toBe('text');
      expect(await page.evaluate(() => document.activeElement?.className)).toContain('rbk-viewer__keyboard-input');
      await cdp.send('Input.insertText', { text: 'from a phone' });
      await expect.poll(() => remote<string>("document.getElementById('field').value"), { timeout: 10_000 }).toBe('from a phone');

      // Back to the fitted picture; the field losing the focus puts the keyboard away.
      await page.getByRole('button', { name: /Fit to screen/ }).click();
      await expect.poll(() => zoomOf(page)).toBe(1);
      await remote("document.getElementById('field').blur()");
      await expect.poll(() => input.evaluate((el) => (el as HTMLTextAreaElement).inputMode), { timeout: 10_000 }).toBe('none');
    } finally {
      await context.close();
    }
  });
});

describe('a phone with a view-only link', () => {
  it('zooms and pans its own view and sends nothing', async () => {
    const base = shareBaseOf(shareUrl);
    const link = parseShareLink(shareUrl)!;
    const answer = (await (await fetch(`${base}/share/${link.linkId}/view-only`, { method: 'POST' })).json()) as { shareUrl: string };
    const { context, page, cdp } = await openPhone(answer.shareUrl);
    try {
      await remote("window.taps = 0; window.menus = 0; window.scrollTo(0, 0); document.getElementById('field').value = ''");
      expect(await page.locator('.rbk-viewer__keyboard-input').count()).toBe(0);
      // The editing channel is the share link's: a view-only link is refused before it opens.
      const viewLink = parseShareLink(answer.shareUrl)!.linkId;
      const refused = await new Promise<number>((resolve) => {
        const socket = new WebSocket(`${base!.replace(/^http/, 'ws')}/share/${viewLink}/editing`);
        socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
        socket.on('open', () => resolve(101));
        socket.on('error', () => undefined);
      });
      expect(refused).toBe(403);
      const before = await geometry(page);
      const sizeBefore = await remoteSize();
      const c = { x: before.area.w / 2, y: 300 };
      await twoFingers(cdp, [{ x: c.x - 40, y: c.y }, { x: c.x + 40, y: c.y }], [{ x: c.x - 140, y: c.y }, { x: c.x + 140, y: c.y }]);
      await expect.poll(() => zoomOf(page), { timeout: 5000 }).toBeGreaterThan(2);
      // Two fingers drag the zoomed view (the canvas moves with them).
      const left = (await page.locator('.rbk-viewer__screen canvas').boundingBox())!.x;
      await twoFingers(cdp, [{ x: 100, y: 400 }, { x: 200, y: 400 }], [{ x: 300, y: 400 }, { x: 400, y: 400 }]);
      await expect.poll(async () => (await page.locator('.rbk-viewer__screen canvas').boundingBox())!.x, { timeout: 5000 }).toBeGreaterThan(left + 50);
      await tap(cdp, await shown(page, 120, 60));
      await touch(cdp, 'touchStart', [await shown(page, 120, 170)]);
      await new Promise((r) => setTimeout(r, 1500));
      await touch(cdp, 'touchEnd', []);
      await new Promise((r) => setTimeout(r, 1000));
      expect(await remote<number[]>('[window.taps, window.menus, scrollY]')).toEqual([0, 0, 0]);
      expect(await remoteSize()).toEqual(sizeBefore);
    } finally {
      await context.close();
    }
  });
});
