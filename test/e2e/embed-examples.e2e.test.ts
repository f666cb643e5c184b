// The embedding examples run as users run them (issue 44, "Examples that run in the test suite"):
// examples/embed/plain.html and examples/embed/vue.html, served as they are from a loopback origin
// other than the engine's, each opened with `?link=<share link>` in a real browser (Debian Chromium
// through playwright-core) against a real engine and a real Chromium session. Each page shows the
// live session (the remote page's colour drawn in the element's screen), logs the message API's
// events on the page, and its own tab buttons switch the remote browser's tab. The machine has no
// internet, so the test's server answers Vue's CDN address in vue.html's import map with Vue's ESM
// browser build from node_modules; the file itself is served unchanged otherwise. Needs `npm run
// build` (the viewer site and the element's script).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngine, type EngineFixture } from '../helpers/engine.js';

const examples = join(dirname(fileURLToPath(import.meta.url)), '../../examples/embed');
const vueBuild = join(dirname(createRequire(import.meta.url).resolve('vue/package.json')), 'dist/vue.esm-browser.prod.js');
const vueCdn = 'https://unpkg.com/vue@3/dist/vue.esm-browser.prod.js';
/** The remote page's colour, looked for in the viewer's canvas. */
const yellow = [255, 214, 0];

let fixture: EngineFixture;
let browser: Browser;
let allowed: string;

/** The examples folder as a user serves it, Vue's CDN address pointed at the local build. */
async function example(name: string): Promise<string> {
  const html = await readFile(join(examples, name), 'utf8');
  if (name !== 'vue.html') return html;
  expect(html).toContain(vueCdn);
  return html.replace(vueCdn, '/vendor/vue.esm-browser.prod.js');
}

beforeAll(async () => {
  fixture = await startEngine({
    name: 'embed-examples',
    site: (request, response) => {
      const url = new URL(request.url ?? '/', 'http://site');
      const send = (type: string) => (body: string) => void response.writeHead(200, { 'content-type': type }).end(body);
      const fail = (error: Error) => void response.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
      if (url.pathname === '/plain.html' || url.pathname === '/vue.html') return void example(url.pathname.slice(1)).then(send('text/html'), fail);
      if (url.pathname === '/vendor/vue.esm-browser.prod.js') return void readFile(vueBuild, 'utf8').then(send('text/javascript'), fail);
      if (url.pathname === '/favicon.ico') return void response.writeHead(404).end();
      send('text/html')(`<!doctype html><title>Page ${url.pathname}</title><body style="margin:0;background:rgb(${yellow.join(',')})">${url.pathname}`);
    },
  });
  allowed = fixture.site.origin;
  expect(new URL(allowed).origin).not.toBe(new URL(fixture.engine.url).origin);
  expect(await fixture.call('/user/embed', { origins: [allowed] })).toEqual({ status: 'ok', origins: [allowed] });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
});

afterAll(async () => {
  await browser?.close();
  await fixture?.close();
});

/** The element's framed viewer: the frame the engine's viewer site serves. */
const viewerFrame = (page: Page): Frame | undefined => page.frames().find((frame) => frame.url().startsWith(new URL(fixture.engine.url).origin));

/** RGB at the middle of the viewer's canvas (noVNC's canvas holds the whole remote framebuffer). */
async function middlePixel(page: Page): Promise<number[]> {
  const frame = viewerFrame(page);
  if (!frame) return [];
  return frame.evaluate(() => {
    const canvas = document.querySelector<HTMLCanvasElement>('.rbk-viewer__screen canvas');
    if (!canvas || canvas.width === 0) return [];
    return Array.from(canvas.getContext('2d')!.getImageData(canvas.width >> 1, canvas.height >> 1, 1, 1).data.slice(0, 3));
  }).catch(() => []);
}
const isYellow = (rgb: number[]) => rgb.length === 3 && rgb.every((value, i) => Math.abs(value - yellow[i]!) <= 16);

/** The remote browser's tabs as the engine tells them (the share link's state). */
async function remoteTabs(share: string): Promise<Array<{ id: string; url: string; active: boolean }>> {
  const state = (await (await fetch(`${fixture.engine.url}/share/${new URL(share).search.slice(1)}`)).json()) as { tabs: Array<{ id: string; url: string; active: boolean }> };
  return state.tabs;
}
const activeUrl = async (share: string) => (await remoteTabs(share)).find((tab) => tab.active)?.url;

/** What both examples must do: the live session drawn, events logged, its tab buttons switch the remote tab. */
async function runsAsUsersRunIt(name: string, logSelector: string, tabButtons: string): Promise<void> {
  const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${allowed}/first` });
  expect(created.status).toBe('ok');
  const share = created.shareUrl as string;
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  try {
    await page.goto(`${allowed}/${name}?link=${encodeURIComponent(share)}`);

    // Live: the remote page's yellow, drawn in the element's screen.
    await expect.poll(async () => isYellow(await middlePixel(page)), { timeout: 60_000 }).toBe(true);
    // The page logs the message API's events.
    await expect.poll(() => page.locator(logSelector).textContent(), { timeout: 30_000 }).toMatch(/^.*ready \{"rbk":1,"type":"ready","viewOnly":false\}/m);
    await expect.poll(() => page.locator(logSelector).textContent(), { timeout: 30_000 }).toMatch(/state \{[^\n]*"state":"running"/);

    // A second remote tab (opened by the element's method), then the page's own button for the first switches back.
    await page.evaluate((url) => (document.querySelector('remote-browser-viewer') as unknown as { openTab(url: string): void }).openTab(url), `${allowed}/second`);
    await expect.poll(() => activeUrl(share), { timeout: 30_000 }).toBe(`${allowed}/second`);
    const first = page.locator(tabButtons, { hasText: 'Page /first' });
    await expect.poll(() => page.locator(tabButtons, { hasText: 'Page /second' }).getAttribute('aria-pressed').catch(() => null), { timeout: 30_000 }).toBe('true');
    await first.click();
    await expect.poll(() => activeUrl(share), { timeout: 30_000 }).toBe(`${allowed}/first`);
    await expect.poll(() => first.getAttribute('aria-pressed'), { timeout: 30_000 }).toBe('true');
    expect(await page.locator(logSelector).textContent()).toMatch(/tabs \{[^\n]*"url":"http:\/\/127\.0\.0\.1:\d+\/second"/);
    expect(problems).toEqual([]);
  } finally {
    await page.close();
    await fixture.call('/vm/delete', { id: created.id });
  }
}

describe('the embedding examples, served from another origin than the engine', () => {
  it('plain.html shows the live session, logs the events and switches the remote tab', async () => {
    await runsAsUsersRunIt('plain.html', '#log', '#tabs button');
  });

  it('vue.html (Vue 3) shows the live session, logs the events and switches the remote tab', async () => {
    await runsAsUsersRunIt('vue.html', 'pre', '[aria-label="Remote tabs"] button');
  });
});
