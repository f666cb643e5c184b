// The message API between a framed viewer and the page around it (issue 44, decisions.md 135), in
// a real browser (Debian Chromium through playwright-core) against a real engine and a real
// Chromium session in one-driver mode: the page on the allowed loopback origin hears ready, the
// state, the tabs and who drives; its commands open and switch the remote browser's tabs and ask
// for and release control; bad commands are answered with an error; a frame of another origin
// posting the same commands is ignored (counted in the viewer) and changes nothing; a view-only
// link's viewer refuses to act. Needs the viewer site built (`npm run build`).
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbedEvent } from '../../src/protocol/embed-messages.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';

let fixture: EngineFixture;
let browser: Browser;
let allowed: string;
let stranger: string;

/** The host page: the viewer's iframe, a small frame of `stranger`'s, every event the viewer posts kept in `events`. */
function hostPage(src: string, evil: string): string {
  return `<!doctype html><title>Host page</title>
<iframe id="viewer" style="width:900px;height:640px" src="${src}"></iframe>
<iframe id="evil" style="width:20px;height:20px" src="${evil}"></iframe>
<script>
  window.events = [];
  const viewer = document.getElementById('viewer');
  addEventListener('message', (event) => {
    if (event.source === viewer.contentWindow) window.events.push({ origin: event.origin, data: event.data });
  });
  window.command = (message) => viewer.contentWindow.postMessage(message, new URL(viewer.src).origin);
</script>`;
}

beforeAll(async () => {
  fixture = await startEngine({
    name: 'embed-messages',
    site: (request, response) => {
      const url = new URL(request.url ?? '/', 'http://site');
      if (url.pathname === '/host') return void response.writeHead(200, { 'content-type': 'text/html' }).end(hostPage(url.searchParams.get('src') ?? '', url.searchParams.get('evil') ?? ''));
      if (request.url === '/favicon.ico') return void response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>Page ${url.pathname}</title><body>${url.pathname}`);
    },
  });
  allowed = fixture.site.origin;
  stranger = allowed.replace('127.0.0.1', 'localhost');
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
});

afterAll(async () => {
  await browser?.close();
  await fixture?.close();
});

type Seen = { origin: string; data: EmbedEvent };
const eventsOf = (page: Page): Promise<Seen[]> => page.evaluate(() => (window as unknown as { events: Seen[] }).events);
const command = (page: Page, message: unknown) => page.evaluate((m) => (window as unknown as { command: (m: unknown) => void }).command(m), message);
const viewerFrame = (page: Page): Frame => page.frames().find((frame) => frame.name() === 'viewer')!;

/** Waits for an event the viewer posted (after the first `after` events) that `accept` takes; answers it. */
async function nextEvent<T extends EmbedEvent['type']>(page: Page, type: T, accept: (event: Extract<EmbedEvent, { type: T }>) => boolean = () => true, after = 0): Promise<Extract<EmbedEvent, { type: T }>> {
  let found: Extract<EmbedEvent, { type: T }> | undefined;
  await expect.poll(async () => {
    found = (await eventsOf(page)).slice(after).map((seen) => seen.data).find((data): data is Extract<EmbedEvent, { type: T }> => data.type === type && accept(data as Extract<EmbedEvent, { type: T }>));
    return found !== undefined;
  }, { timeout: 30_000 }).toBe(true);
  return found!;
}

describe('the message API of a framed viewer', () => {
  let share: string;
  let view: string;
  let page: Page;

  beforeAll(async () => {
    expect(await fixture.call('/user/embed', { origins: [allowed] })).toEqual({ status: 'ok', origins: [allowed] });
    const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${allowed}/first`, control: 'one' });
    expect(created.status).toBe('ok');
    share = created.shareUrl;
    const linkId = new URL(share).search.slice(1);
    view = ((await (await fetch(`${fixture.engine.url}/share/${linkId}/view-only`, { method: 'POST' })).json()) as { shareUrl: string }).shareUrl;
    page = await browser.newPage();
    await page.goto(`${allowed}/host?src=${encodeURIComponent(share)}&evil=${encodeURIComponent(`${stranger}/evil`)}`);
  }, 60_000);

  afterAll(async () => {
    await page?.close();
  });

  it('tells the page it is ready, the state, the tabs and who drives, only from the engine origin', async () => {
    expect(await nextEvent(page, 'ready')).toEqual({ rbk: 1, type: 'ready', viewOnly: false });
    await nextEvent(page, 'state', (event) => event.state === 'running');
    await nextEvent(page, 'tabs', (event) => event.tabs.length === 1 && event.tabs[0]!.url === `${allowed}/first` && event.tabs[0]!.active);
    expect(await nextEvent(page, 'control')).toMatchObject({ mode: 'one' });
    expect(new Set((await eventsOf(page)).map((seen) => seen.origin))).toEqual(new Set([new URL(fixture.engine.url).origin]));
  });

  it("opens and switches the remote browser's tabs on the page's commands", async () => {
    const first = (await nextEvent(page, 'tabs', (event) => event.tabs.length === 1)).tabs[0]!;
    await command(page, { rbk: 1, type: 'tab', action: 'open', url: `${allowed}/second` });
    await nextEvent(page, 'tabs', (event) => event.tabs.length === 2 && event.tabs.some((tab) => tab.url === `${allowed}/second` && tab.active));
    const before = (await eventsOf(page)).length;
    await command(page, { rbk: 1, type: 'tab', action: 'switch', tab: first.id });
    await nextEvent(page, 'tabs', (event) => event.tabs.length === 2 && event.tabs.find((tab) => tab.id === first.id)?.active === true, before);
  });

  it('asks for control and releases it on the page\'s commands', async () => {
    await command(page, { rbk: 1, type: 'control', action: 'ask' });
    const driving = await nextEvent(page, 'control', (event) => event.you !== null && event.driver?.id === event.you);
    const before = (await eventsOf(page)).length;
    await command(page, { rbk: 1, type: 'control', action: 'release' });
    await nextEvent(page, 'control', (event) => event.you === driving.you && event.driver === null, before);
  });

  it('answers a malformed command or another version with an error, and counts it', async () => {
    const before = (await eventsOf(page)).length;
    await command(page, { rbk: 1, type: 'tab', action: 'switch' });
    expect(await nextEvent(page, 'error', () => true, before)).toMatchObject({ command: 'tab', message: expect.stringMatching(/^not understood: tab: /) });
    await command(page, { rbk: 2, type: 'hello' });
    expect(await nextEvent(page, 'error', (event) => event.command === 'hello', before)).toMatchObject({ message: 'rbk: version 2 is not understood; this viewer speaks 1' });
    expect(Number(await viewerFrame(page).evaluate(() => document.documentElement.dataset.embedIgnored))).toBeGreaterThanOrEqual(2);
  });

  it('ignores the same commands from a frame of another origin: counted, nothing changes', async () => {
    const frame = viewerFrame(page);
    const ignored = Number(await frame.evaluate(() => document.documentElement.dataset.embedIgnored ?? '0'));
    const evil = page.frames().find((candidate) => candidate.url().startsWith(`${stranger}/evil`))!;
    await evil.evaluate(() => {
      const viewer = window.parent.frames[0]!;
      viewer.postMessage({ rbk: 1, type: 'tab', action: 'open', url: 'http://127.0.0.1:9/evil' }, '*');
      viewer.postMessage({ rbk: 1, type: 'control', action: 'ask' }, '*');
    });
    await expect.poll(async () => Number(await frame.evaluate(() => document.documentElement.dataset.embedIgnored))).toBe(ignored + 2);
    // A command of the page's own after them is answered: the stranger's were handled (ignored) before it.
    const before = (await eventsOf(page)).length;
    await command(page, { rbk: 1, type: 'hello' });
    await nextEvent(page, 'ready', () => true, before);
    const linkId = new URL(share).search.slice(1);
    const state = (await (await fetch(`${fixture.engine.url}/share/${linkId}`)).json()) as { tabs: Array<{ url: string }> };
    expect(state.tabs.map((tab) => tab.url)).toEqual([`${allowed}/first`, `${allowed}/second`]);
  });

  it("refuses to act from a view-only link's viewer, saying so", async () => {
    const watcher = await browser.newPage();
    try {
      await watcher.goto(`${allowed}/host?src=${encodeURIComponent(view)}&evil=about:blank`);
      expect(await nextEvent(watcher, 'ready')).toEqual({ rbk: 1, type: 'ready', viewOnly: true });
      await nextEvent(watcher, 'tabs', (event) => event.tabs.length === 2);
      await command(watcher, { rbk: 1, type: 'tab', action: 'open' });
      expect(await nextEvent(watcher, 'error')).toMatchObject({ command: 'tab', message: expect.stringMatching(/view-only/) });
    } finally {
      await watcher.close();
    }
  });

  it('tells who comes and goes and the recording, focuses, and leaves on the page\'s command (decisions.md 152)', async () => {
    const second = await browser.newPage();
    try {
      await second.goto(`${allowed}/host?src=${encodeURIComponent(share)}&evil=about:blank`);
      const people = await nextEvent(second, 'people', (event) => event.you !== null && event.people.length >= 1);
      expect(people.people.some((person) => person.id === people.you)).toBe(true);
      expect(await nextEvent(second, 'recording')).toMatchObject({ recording: false });
      // The first page's viewer hears the second come.
      await nextEvent(page, 'joined', (event) => event.person.id === people.you);
      await second.locator('iframe#viewer').focus();
      const before = (await eventsOf(second)).length;
      await command(second, { rbk: 1, type: 'focus' });
      await expect.poll(() => viewerFrame(second).evaluate(() => document.activeElement?.className ?? ''), { timeout: 15_000 }).toContain('rbk-viewer__keyboard-input');
      await command(second, { rbk: 1, type: 'leave' });
      expect(await nextEvent(second, 'closed', () => true, before)).toEqual({ rbk: 1, type: 'closed', leaveUrl: `${new URL(fixture.engine.url).origin}/` });
      // Closed: no viewer in the frame any more, the frame still where it was, and the first page hears it go.
      await expect.poll(() => viewerFrame(second).evaluate(() => document.querySelector('.rbk-viewer') === null)).toBe(true);
      expect(viewerFrame(second).url()).toBe(share);
      await nextEvent(page, 'left', (event) => event.person.id === people.you);
      expect((await eventsOf(second)).slice(before).some((seen) => seen.data.type === 'error')).toBe(false);
    } finally {
      await second.close();
    }
  });
});
