// End to end in a real browser: a session created through the v8 API, its share link opened in
// Debian Chromium (playwright-core), the waiting screen, the remote pixels drawn by the viewer,
// typing and clicking through the viewer, the ended screen, and the link gone after deletion.
import { chromium, type Browser, type Page, type WebSocket as PageSocket } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';

const FORM = `<!doctype html><title>Form</title><body style="margin:0;background:#ffd700">
<input id="field" style="position:absolute;left:40px;top:40px;width:400px;height:48px;font-size:28px">
<a id="next" href="/next" style="position:absolute;left:40px;top:160px;font-size:48px">next page</a>`;
const NEXT = '<!doctype html><title>Next</title><body style="margin:0;background:#00aa00">';

let fixture: EngineFixture;
let engine: Engine;
let origin: string;
let key: string;
let browser: Browser;

const api = v8Caller(() => engine.url, () => key);

/** RGB the viewer drew at a framebuffer position (noVNC's canvas holds the full framebuffer). */
function viewerPixel(page: Page, x: number, y: number): Promise<number[]> {
  return page.evaluate(([px, py]) => {
    const canvas = document.querySelector('.rbk-viewer__screen canvas') as HTMLCanvasElement;
    return Array.from(canvas.getContext('2d')!.getImageData(px!, py!, 1, 1).data.slice(0, 3));
  }, [x, y]);
}

async function waitForPixel(page: Page, x: number, y: number, rgb: number[], timeoutMs = 10_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let last: number[] = [];
  while (Date.now() < deadline) {
    last = await viewerPixel(page, x, y).catch(() => []);
    if (last.length === 3 && last.every((v, i) => Math.abs(v - rgb[i]!) <= 12)) return last;
    await page.waitForTimeout(50);
  }
  return last;
}

/** Page coordinates in the viewer of a framebuffer position (the viewer scales to fit). */
function viewerPoint(page: Page, x: number, y: number): Promise<{ x: number; y: number }> {
  return page.evaluate(([fx, fy]) => {
    const canvas = document.querySelector('.rbk-viewer__screen canvas') as HTMLCanvasElement;
    const rect = canvas.getBoundingClientRect();
    return { x: rect.left + (fx! * rect.width) / canvas.width, y: rect.top + (fy! * rect.height) / canvas.height };
  }, [x, y]);
}

beforeAll(async () => {
  fixture = await startEngine({ name: 'e2e', site: (request, response) => {
    if (request.url === '/favicon.ico') return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html' }).end(request.url === '/next' ? NEXT : FORM);
  } });
  ({ engine, account: { key }, site: { origin } } = fixture);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
});

afterAll(async () => {
  await browser?.close();
  await fixture?.close();
});

describe('a share link in a real browser', () => {
  it('waits, shows the live remote browser, takes typing and clicks, ends, and is gone after deletion', async () => {
    // A slow start, made to happen: the runtime's start waits until the test has seen the viewer's
    // waiting screen (a warm start is over before a loaded machine has the viewer page up).
    let releaseStart = () => undefined as void;
    const held = new Promise<void>((resolve) => (releaseStart = resolve));
    const start = engine.runtime.startSession.bind(engine.runtime);
    engine.runtime.startSession = async (spec) => {
      engine.runtime.startSession = start;
      await held;
      return start(spec);
    };
    const created = await api('/vm/create', { browser: 'chromium', url: `${origin}/form`, shareLanguage: 'en' });
    expect(created.status).toBe('ok');
    const page = await browser.newPage({ viewport: { width: 1100, height: 720 } });
    const sockets: PageSocket[] = [];
    page.on('websocket', (socket) => sockets.push(socket));
    try {
      await page.goto(created.shareUrl);
      await expect.poll(() => page.getByRole('heading', { name: 'Preparing your browser' }).isVisible().catch(() => false), { timeout: 45_000 }).toBe(true);
      releaseStart();

      // Live: the remote page's yellow, drawn by the viewer.
      await page.waitForSelector('.rbk-viewer__screen canvas', { timeout: 20_000 });
      await expect.poll(() => page.locator('.rbk-viewer__live').getAttribute('data-connection'), { timeout: 10_000 }).toBe('connected');
      // The remote display takes the viewer's area (docs/viewer.md) before anything is pressed.
      const area = await page.evaluate(() => {
        const rect = document.querySelector('.rbk-viewer__screen')!.getBoundingClientRect();
        return [Math.floor(rect.width), Math.floor(rect.height)];
      });
      await expect.poll(() => page.evaluate(() => {
        const canvas = document.querySelector('.rbk-viewer__screen canvas') as HTMLCanvasElement;
        return [canvas.width, canvas.height];
      }), { timeout: 10_000 }).toEqual(area);
      expect(await waitForPixel(page, 640, 450, [255, 215, 0])).toEqual([255, 215, 0]);

      // Where the remote page's elements are on the remote screen (below the browser's toolbar).
      const row = (await engine.store.session(created.vmId))!;
      const control = engine.runtime.get(row.runtime_id!)!.control!;
      const chromeHeight = Number(await control.evaluate('window.outerHeight - window.innerHeight'));
      const field = await viewerPoint(page, 240, chromeHeight + 64);
      await page.mouse.click(field.x, field.y);
      await page.keyboard.type('typed through the viewer');
      await expect.poll(() => control.evaluate("document.getElementById('field').value"), { timeout: 5000 }).toBe('typed through the viewer');

      // A viewer's F12 and Ctrl+Shift+I reach the remote browser like any key, and open no
      // developer tools there (docs/security.md): the browser's policy blocks them, and Chromium
      // says so in a dialog ("DevTools not allowed on this page") that the viewer closes with Esc.
      await page.keyboard.press('F12');
      await page.keyboard.press('Control+Shift+I');
      await new Promise((r) => setTimeout(r, 1500));
      expect((await control.targets()).filter((t) => t.url.startsWith('devtools://'))).toEqual([]);

      // The dialog may still be on its way on a loaded machine: Esc, then the link, until the link is followed.
      const link = await viewerPoint(page, 120, chromeHeight + 190);
      await expect.poll(async () => {
        await page.keyboard.press('Escape');
        await page.mouse.click(link.x, link.y);
        return waitFor(() => control.evaluate('document.title'), (title) => title === 'Next', 2000);
      }, { timeout: 20_000, interval: 0 }).toBe('Next');
      expect(await waitForPixel(page, 640, 450, [0, 170, 0])).toEqual([0, 170, 0]);

      // The service ends the session (as at its maximum duration): ended screen, connection closed.
      await engine.sessions.suspend(created.vmId, 'maximum session duration reached');
      await expect.poll(() => page.getByRole('heading', { name: 'This session has ended' }).isVisible().catch(() => false), { timeout: 5000 }).toBe(true);
      const rfb = sockets.find((s) => new URL(s.url()).pathname.endsWith('/rfb'));
      expect(rfb?.isClosed()).toBe(true);

      // Deleted: the link is gone, in the open page and for anyone opening it afresh.
      expect(await api('/vm/remove', { id: created.vmId })).toEqual({ status: 'ok' });
      await expect.poll(() => page.getByRole('heading', { name: 'This link is no longer valid' }).isVisible().catch(() => false), { timeout: 5000 }).toBe(true);
      const linkId = new URL(created.shareUrl).search.slice(1);
      expect((await fetch(`${engine.url}/share/${linkId}`)).status).toBe(404);
      await page.reload();
      await expect.poll(() => page.getByRole('heading', { name: 'This link is no longer valid' }).isVisible().catch(() => false), { timeout: 5000 }).toBe(true);
    } finally {
      await page.close();
    }
  }, 120_000);

  it('serves the viewer page with headers that keep the link private', async () => {
    // A link that never existed: the page (which says so) with 404, and the same headers.
    const response = await fetch(`${engine.url}/de/s?AAAAAAAAAAAAAAAAAAAAAA`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await fetch(`${engine.url}/s?AAAAAAAAAAAAAAAAAAAAAA`)).status).toBe(404);
    expect((await fetch(`${engine.url}/`)).headers.get('content-type')).toContain('text/html');
  });
});

describe('the share API', () => {
  it('refuses unknown links, and limits how many look-ups one address may try', async () => {
    let limited: Response | undefined;
    for (let i = 0; i < 200 && !limited; i++) {
      const response = await fetch(`${engine.url}/share/${'B'.repeat(21)}${i % 10}`);
      if (response.status === 429) limited = response;
      else expect(response.status).toBe(404);
    }
    expect(limited?.status).toBe(429);
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limited?.json()).toMatchObject({ status: 'insecure', reason: 'rate_limited' });
  });
});
