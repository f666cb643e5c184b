// <remote-browser-viewer> on a plain page without React (issue 44, decisions.md 136), in a real
// browser (Debian Chromium through playwright-core) against a real engine and a real Chromium
// session: the page on the allowed loopback origin loads the element's one script from the
// engine's viewer site (`/element.js`, another origin), hears the message API as DOM events
// (`rbk-ready`, `rbk-state`, `rbk-tabs`), switches the remote tab with the element's method, and
// honours `view-only` (ready says so; a command is refused), `chrome="compact"` and `language`. Needs
// `npm run build` (the viewer site and `vite build --mode element`).
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngine, type EngineFixture } from '../helpers/engine.js';

let fixture: EngineFixture;
let browser: Browser;
let allowed: string;

const plainPage = (engineUrl: string) => `<!doctype html><title>Plain page</title>
<script type="module" src="${engineUrl}/element.js"></script>
<remote-browser-viewer id="full" style="width:900px;height:600px"></remote-browser-viewer>
<remote-browser-viewer id="watch" view-only chrome="compact" language="de" style="width:600px;height:400px"></remote-browser-viewer>
<script>
  window.seen = [];
  for (const id of ['full', 'watch']) {
    for (const type of ['ready', 'state', 'tabs', 'control', 'error']) {
      document.getElementById(id).addEventListener('rbk-' + type, (event) => window.seen.push({ id, type: event.type, detail: event.detail }));
    }
  }
</script>`;

beforeAll(async () => {
  fixture = await startEngine({
    name: 'embed-element',
    site: (request, response) => {
      const url = new URL(request.url ?? '/', 'http://site');
      if (url.pathname === '/plain') return void response.writeHead(200, { 'content-type': 'text/html' }).end(plainPage(fixture.engine.url));
      if (request.url === '/favicon.ico') return void response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>Page ${url.pathname}</title>`);
    },
  });
  allowed = fixture.site.origin;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
});

afterAll(async () => {
  await browser?.close();
  await fixture?.close();
});

type Seen = { id: string; type: string; detail: Record<string, any> };
const seenOn = (page: Page): Promise<Seen[]> => page.evaluate(() => (window as unknown as { seen: Seen[] }).seen);

async function seen(page: Page, id: string, type: string, accept: (detail: Record<string, any>) => boolean = () => true, after = 0): Promise<Record<string, any>> {
  let found: Seen | undefined;
  await expect.poll(async () => {
    found = (await seenOn(page)).slice(after).find((event) => event.id === id && event.type === type && accept(event.detail));
    return found !== undefined;
  }, { timeout: 30_000 }).toBe(true);
  return found!.detail;
}

describe('<remote-browser-viewer> on a page without React', () => {
  it('shows the session, sends the message API as DOM events, switches a tab, and honours view-only and compact chrome', async () => {
    expect(await fixture.call('/user/embed', { origins: [allowed] })).toEqual({ status: 'ok', origins: [allowed] });
    const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${allowed}/first` });
    expect(created.status).toBe('ok');
    const page = await browser.newPage();
    try {
      await page.goto(`${allowed}/plain`);
      expect(await page.evaluate(() => typeof (window as unknown as { React?: unknown }).React)).toBe('undefined');
      await page.evaluate((share) => {
        document.getElementById('full')!.setAttribute('src', share);
        document.getElementById('watch')!.setAttribute('src', share);
      }, created.shareUrl as string);

      expect(await seen(page, 'full', 'rbk-ready')).toEqual({ rbk: 1, type: 'ready', viewOnly: false });
      expect(await seen(page, 'watch', 'rbk-ready')).toEqual({ rbk: 1, type: 'ready', viewOnly: true });
      await seen(page, 'full', 'rbk-state', (detail) => detail.state === 'running');
      const first = (await seen(page, 'full', 'rbk-tabs', (detail) => detail.tabs.length === 1 && detail.tabs[0].active)).tabs[0];

      await page.evaluate((url) => (document.getElementById('full') as unknown as { openTab(url: string): void }).openTab(url), `${allowed}/second`);
      await seen(page, 'full', 'rbk-tabs', (detail) => detail.tabs.length === 2 && detail.tabs.find((tab: { url: string }) => tab.url === `${allowed}/second`)?.active);
      const before = (await seenOn(page)).length;
      await page.evaluate((id) => (document.getElementById('full') as unknown as { switchTab(id: string): void }).switchTab(id), first.id);
      await seen(page, 'full', 'rbk-tabs', (detail) => detail.tabs.find((tab: { id: string }) => tab.id === first.id)?.active === true, before);
      // The watching element sees the same tabs and may not change them.
      await seen(page, 'watch', 'rbk-tabs', (detail) => detail.tabs.length === 2);
      await page.evaluate(() => (document.getElementById('watch') as unknown as { openTab(): void }).openTab());
      expect(await seen(page, 'watch', 'rbk-error')).toMatchObject({ command: 'tab', message: expect.stringMatching(/view-only/) });

      // Compact chrome and the language reached the framed viewer.
      const watchFrame = page.frames().find((frame) => frame.url().includes('&chrome=compact&view-only'))!;
      expect(await watchFrame.evaluate(() => document.querySelector('.rbk-viewer')?.getAttribute('data-chrome'))).toBe('compact');
      expect(await watchFrame.evaluate(() => document.querySelector('.rbk-viewer')?.getAttribute('lang'))).toBe('de');
    } finally {
      await page.close();
    }
  });

  it('says so in its shadow root when src is not a share link', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${allowed}/plain`);
      await page.evaluate(() => document.getElementById('full')!.setAttribute('src', 'javascript:alert(1)'));
      await expect.poll(() => page.evaluate(() => document.getElementById('full')!.shadowRoot?.querySelector('[part=message]')?.textContent)).toMatch(/not a share link/);
      expect(await page.evaluate(() => document.getElementById('full')!.shadowRoot?.querySelector('iframe'))).toBeNull();
    } finally {
      await page.close();
    }
  });
});
