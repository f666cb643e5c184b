// End to end in Debian Chromium: a share link opened on a phone-sized viewer gets a remote display
// of its shape (the browser window fills it, the viewer shows it without bands), a window resize
// follows; any text a person can type arrives exactly in the remote page (an IME's composition,
// accented and CJK text, emoji, AltGr and dead keys on a German layout, pasted text); and a
// view-only link made from the viewer watches, counted, with nothing it does reaching the page.
import { chromium, type Browser, type CDPSession, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { BrowserControl } from '../../src/engine/runtime/browser/control.js';
import { v8Caller } from '../helpers/site.js';

const FORM = `<!doctype html><title>Form</title><meta name="viewport" content="width=device-width">
<body style="margin:0;background:#ffd700">
<input id="field" autofocus style="position:absolute;left:10px;top:10px;width:300px;height:48px;font-size:24px">`;

let fixture: EngineFixture;
let engine: Engine;
let key: string;
let browser: Browser;
let shareUrl: string;
let control: BrowserControl;

const api = v8Caller(() => engine.url, () => key);

/** The viewer's screen area and the canvas noVNC draws the remote display on, in page pixels. */
function viewerGeometry(page: Page) {
  return page.evaluate(() => {
    const screen = document.querySelector('.rbk-viewer__screen')!.getBoundingClientRect();
    const canvas = document.querySelector('.rbk-viewer__screen canvas') as HTMLCanvasElement;
    const drawn = canvas.getBoundingClientRect();
    return { area: { w: screen.width, h: screen.height }, drawn: { w: drawn.width, h: drawn.height }, framebuffer: { w: canvas.width, h: canvas.height } };
  });
}

const remoteScreen = async () => (await control.evaluate('[screen.width, screen.height, outerWidth, outerHeight]')) as number[];
const fieldValue = async () => String(await control.evaluate("document.getElementById('field').value"));
const clearField = () => control.evaluate("document.getElementById('field').value = ''");

/** SetDesktopSize messages (RFB type 251) each viewer page has sent, counted as they leave. */
const resizeRequests = new WeakMap<Page, number[]>();

async function openViewer(url: string, viewport: { width: number; height: number }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  const sent: number[] = [];
  resizeRequests.set(page, sent);
  page.on('websocket', (socket) =>
    socket.on('framesent', (frame) => {
      const bytes = typeof frame.payload === 'string' ? Buffer.from(frame.payload, 'latin1') : frame.payload;
      if (bytes[0] === 251 && bytes.length >= 8) sent.push(Date.now());
    }),
  );
  await page.goto(url);
  await page.waitForSelector('.rbk-viewer__screen canvas', { timeout: 30_000 });
  await expect.poll(() => page.locator('.rbk-viewer__live').getAttribute('data-connection'), { timeout: 15_000 }).toBe('connected');
  return page;
}

/** The names of the toolbar's buttons a person can see now. */
async function shownToolbarButtons(page: Page): Promise<string[]> {
  return page.locator('.rbk-viewer__toolbar button').evaluateAll((buttons) => buttons.filter((button) => button.checkVisibility()).map((button) => button.textContent!.trim()));
}

/** Presses the remote page's field through the viewer (the viewer scales the display to fit). */
async function pressField(page: Page): Promise<void> {
  const chromeHeight = Number(await control.evaluate('outerHeight - innerHeight'));
  const point = await page.evaluate((y) => {
    const canvas = document.querySelector('.rbk-viewer__screen canvas') as HTMLCanvasElement;
    const rect = canvas.getBoundingClientRect();
    return { x: rect.left + (60 * rect.width) / canvas.width, y: rect.top + (y * rect.height) / canvas.height };
  }, chromeHeight + 34);
  await page.mouse.click(point.x, point.y);
}

async function pressKey(cdp: CDPSession, down: { key: string; code: string; text?: string; keyCode?: number }): Promise<void> {
  await cdp.send('Input.dispatchKeyEvent', { type: down.text ? 'keyDown' : 'rawKeyDown', key: down.key, code: down.code, ...(down.text ? { text: down.text, unmodifiedText: down.text } : {}), windowsVirtualKeyCode: down.keyCode ?? 0 });
  await cdp.send('Input.dispatchKeyEvent', { type: 'keyUp', key: down.key, code: down.code, windowsVirtualKeyCode: down.keyCode ?? 0 });
}

beforeAll(async () => {
  fixture = await startEngine({ name: 'fit', site: FORM });
  ({ engine, account: { key } } = fixture);
  const origin = fixture.site.origin;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  const created = await api('/vm/create', { browser: 'chromium', url: `${origin}/`, layout: 'de' });
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

describe('a phone-sized viewer', () => {
  it('gets a display of its shape that the browser window fills, shown without bands; a resize follows', async () => {
    const page = await openViewer(shareUrl, { width: 390, height: 844 });
    try {
      const { area } = await viewerGeometry(page);
      // Narrower than a browser window can be: the narrowest window, with the phone's shape.
      const expected = [500, Math.round((Math.floor(area.h) * 500) / Math.floor(area.w))];
      await expect.poll(remoteScreen, { timeout: 10_000 }).toEqual([...expected, ...expected]);
      expect(Number(await control.evaluate('innerWidth'))).toBe(500);
      const shown = await viewerGeometry(page);
      expect(shown.framebuffer).toEqual({ w: expected[0], h: expected[1] });
      expect(Math.abs(shown.drawn.w - area.w)).toBeLessThanOrEqual(2);
      expect(Math.abs(shown.drawn.h - area.h)).toBeLessThanOrEqual(2);
      // The viewer asked once for that size and does not keep asking (noVNC alone would, since
      // the size it got is not its area's).
      const settled = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(resizeRequests.get(page)!.filter((at) => at >= settled)).toEqual([]);
      // The viewer's own chrome on a phone is one floating button (decisions.md 163, 180): the only
      // control it shows until it is opened.
      expect(await shownToolbarButtons(page)).toEqual(['More']);

      // The viewer's window grows (a rotation, or a desktop window dragged larger): the display follows.
      // Its chrome changes with its width too (the phone's one button, then a desktop's row), so
      // what holds is that the display follows the area the viewer settles on and is drawn filling it.
      await page.setViewportSize({ width: 1000, height: 700 });
      const followed = async () => {
        const { area, drawn } = await viewerGeometry(page);
        const size = [Math.floor(area.w), Math.floor(area.h)];
        return { screen: await remoteScreen(), area: [...size, ...size], gap: Math.max(Math.abs(drawn.w - area.w), Math.abs(drawn.h - area.h)) };
      };
      await expect.poll(async () => {
        const { screen, area, gap } = await followed();
        return area[0]! > 900 && screen.join() === area.join() && gap <= 2;
      }, { timeout: 15_000 }).toBe(true);
      // On a desktop the link's default chrome is one row: the files, full screen, Leave and "More" in it.
      const row = (await page.getByRole('toolbar', { name: 'Session controls' }).boundingBox())!;
      expect(row.height).toBeLessThan(64);
      expect(await shownToolbarButtons(page)).toEqual(expect.arrayContaining(['Files', 'Full screen', 'Leave', 'More']));
    } finally {
      await page.close();
    }
  });
});

describe('typing through the viewer', () => {
  it('delivers IME compositions, accented, CJK and emoji text, AltGr and dead keys (layout de), and pasted text exactly', async () => {
    const page = await openViewer(shareUrl, { width: 1100, height: 760 });
    try {
      const cdp = await page.context().newCDPSession(page);
      await pressField(page);
      await expect.poll(() => control.evaluate("document.activeElement && document.activeElement.id"), { timeout: 5000 }).toBe('field');
      await expect.poll(() => page.evaluate(() => document.activeElement?.className), { timeout: 5000 }).toContain('rbk-viewer__keyboard-input');

      // An IME: composing, then committing the conversion.
      await clearField();
      await cdp.send('Input.imeSetComposition', { text: 'にほんご', selectionStart: 4, selectionEnd: 4 });
      await cdp.send('Input.imeSetComposition', { text: '日本語の', selectionStart: 4, selectionEnd: 4 });
      await cdp.send('Input.insertText', { text: '日本語のテキスト' });
      await expect.poll(fieldValue, { timeout: 10_000 }).toBe('日本語のテキスト');

      for (const text of ['Grüße, ça va? ñ', '😀']) {
        await clearField();
        await cdp.send('Input.insertText', { text });
        await expect.poll(fieldValue, { timeout: 10_000 }).toBe(text);
      }

      // A German keyboard: AltGr+Q is @; the dead key ´ then e is é; plain keys type as themselves.
      await clearField();
      await cdp.send('Input.dispatchKeyEvent', { type: 'rawKeyDown', key: 'AltGraph', code: 'AltRight', windowsVirtualKeyCode: 18 });
      await pressKey(cdp, { key: '@', code: 'KeyQ', text: '@', keyCode: 81 });
      await cdp.send('Input.dispatchKeyEvent', { type: 'keyUp', key: 'AltGraph', code: 'AltRight', windowsVirtualKeyCode: 18 });
      await pressKey(cdp, { key: 'Dead', code: 'Equal', keyCode: 221 });
      await pressKey(cdp, { key: 'é', code: 'KeyE', text: 'é', keyCode: 69 });
      await pressKey(cdp, { key: 'z', code: 'KeyY', text: 'z', keyCode: 90 });
      await pressKey(cdp, { key: 'Backspace', code: 'Backspace', keyCode: 8 });
      await pressKey(cdp, { key: 'y', code: 'KeyZ', text: 'y', keyCode: 89 });
      await expect.poll(fieldValue, { timeout: 10_000 }).toBe('@éy');

      // Pasted text, through the remote clipboard.
      await clearField();
      await page.evaluate(() => {
        const data = new DataTransfer();
        data.setData('text/plain', 'pasted: Überraschung ✓ 漢字');
        document.querySelector('.rbk-viewer__keyboard-input')!.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
      });
      await expect.poll(fieldValue, { timeout: 10_000 }).toBe('pasted: Überraschung ✓ 漢字');
    } finally {
      await page.close();
    }
  });
});

describe('a view-only link made in the viewer', () => {
  it('watches, is counted, and nothing typed or pressed in it reaches the page', async () => {
    // The full toolbar, asked for by name: it writes out what this link may do and how many watch
    // (the default one row keeps them to the people button and its status line, decisions.md 180).
    const owner = await openViewer(`${shareUrl}&toolbar=full`, { width: 1000, height: 700 });
    let watcher: Page | undefined;
    try {
      await owner.getByRole('button', { name: 'Share view-only' }).click();
      const viewUrl = await owner.getByRole('textbox', { name: 'View-only link' }).inputValue();
      expect(viewUrl).not.toBe(shareUrl);
      await expect.poll(() => owner.getByText('You can control').isVisible()).toBe(true);
      watcher = await openViewer(`${viewUrl}&toolbar=full`, { width: 800, height: 600 });
      await expect.poll(() => watcher!.getByText('View only', { exact: true }).isVisible()).toBe(true);
      await expect.poll(() => owner.getByText('2 watching').isVisible(), { timeout: 10_000 }).toBe(true);
      await expect.poll(() => watcher!.getByText('2 watching').isVisible(), { timeout: 10_000 }).toBe(true);
      expect(await watcher.getByRole('button', { name: 'Share view-only' }).count()).toBe(0);

      await clearField();
      const sizeBefore = await remoteScreen();
      await pressField(watcher);
      await watcher.keyboard.type('watcher');
      await watcher.setViewportSize({ width: 600, height: 500 });
      await new Promise((r) => setTimeout(r, 1500));
      expect(await fieldValue()).toBe('');
      expect(await remoteScreen()).toEqual(sizeBefore);

      await watcher.close();
      watcher = undefined;
      await expect.poll(() => owner.getByText('1 watching').isVisible(), { timeout: 10_000 }).toBe(true);
    } finally {
      await watcher?.close();
      await owner.close();
    }
  });
});
