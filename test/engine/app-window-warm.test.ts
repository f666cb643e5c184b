// A Chromium app window starts warm (issue 44, decisions.md 175), against a real engine and real
// confined Chromium: a session created with `window: "app"` takes a warm browser (the runtime says
// `warm start`), and the display, read through the share link's RFB stream as a viewer reads it,
// shows the page's colour from its top row to its bottom one (no tab strip, no address bar, no
// bubble about fullscreen in the seconds after), and again after the viewer gives the display
// another size. A tab the page opens (a person's click on a link
// with target=_blank) stays in that window, still filling the display, and the share state lists
// both tabs. The page's own fullscreen entered and left, and F11 pressed in the viewer, leave the
// app window as it is; left some other way (a program's DevTools), it is put back at the engine's
// next look at the tabs. A session no warm browser serves (an engine without warm browsers) still
// starts cold in kiosk mode, and fills the display too. In both, a window Ctrl+N opens (kiosk mode
// opens one with its own strip) is made to fill the display as well.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ShareTab, ViewerState } from '../../src/protocol/index.js';
import type { RuntimeEvent, RuntimeSession } from '../../src/engine/runtime/runtime.js';
import { WATCHED_LOOK_MS } from '../../src/engine/runtime/browser/tabs.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { connectRfb, type RfbClient } from '../helpers/rfb-client.js';
import { waitFor, x } from '../helpers/session.js';
import { followShareEvents } from '../helpers/share-events.js';

const FIRST: [number, number, number] = [0x22, 0x88, 0x44];
const SECOND: [number, number, number] = [0x88, 0x22, 0x66];
const hex = (rgb: [number, number, number]) => `#${rgb.map((c) => c.toString(16).padStart(2, '0')).join('')}`;
const PAGES: Record<string, string> = {
  '/': `<!doctype html><title>First</title><a href="/second" target="_blank" style="position:fixed;inset:0;display:block;background:${hex(FIRST)}"></a>`,
  // A click asks for the page's own fullscreen (as a video's button does), the next click leaves it.
  '/second': `<!doctype html><title>Second</title><body style="margin:0;height:100vh;background:${hex(SECOND)}" onclick="document.fullscreenElement ? document.exitFullscreen() : document.body.requestFullscreen()"></body>`,
};
/** A start on a loaded two-core machine (a warm browser may still be warming). */
const START_MS = 90_000;
/** A test's own bound (also the RFB client's, whose deadline counts from its connection). */
const TEST_MS = 240_000;

function site(request: import('node:http').IncomingMessage, response: import('node:http').ServerResponse): void {
  const html = PAGES[request.url ?? ''];
  if (!html) return void response.writeHead(404).end();
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
}

const close = (a: number[], b: number[]) => a.every((c, i) => Math.abs(c - b[i]!) <= 8);

/**
 * The display's pixels along its top rows, its left and right edges and its bottom row: every one
 * the page's colour when the page fills the display (a tab strip or address bar would be grey or
 * white there). Answers the first pixel that is not, or null.
 */
async function notFilled(viewer: RfbClient, rgb: [number, number, number]): Promise<string | null> {
  const { width, height } = viewer;
  const points: Array<[number, number]> = [];
  for (const y of [0, 10, 40, 80]) for (let i = 0; i <= 8; i++) points.push([Math.min(width - 1, Math.round((i * width) / 8)), y]);
  for (const x of [0, width - 1]) for (const y of [Math.round(height / 2), height - 1]) points.push([x, y]);
  for (const [px, py] of points) {
    const seen = await viewer.pixel(px, py);
    if (!close(seen, rgb)) return `(${px},${py}) is ${hex(seen)}, not ${hex(rgb)}`;
  }
  return null;
}

/** Samples the display for `ms`: answers the first pixel seen that is not the page's colour, or null. */
async function staysFilled(viewer: RfbClient, rgb: [number, number, number], ms: number): Promise<string | null> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const wrong = await notFilled(viewer, rgb);
    if (wrong) return wrong;
  }
  return null;
}

async function fills(viewer: RfbClient, rgb: [number, number, number], timeoutMs = 20_000): Promise<string | null> {
  return waitFor(() => notFilled(viewer, rgb), (wrong) => wrong === null, timeoutMs);
}

async function createAppWindow(fixture: EngineFixture): Promise<{ vmId: string; linkId: string; session: RuntimeSession }> {
  const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/`, window: 'app' });
  expect(created.status).toBe('ok');
  const status = await waitFor(async () => (await fixture.call(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running' || s === 'error', START_MS);
  expect([status, (await fixture.engine.store.session(created.vmId))?.end_reason]).toEqual(['running', null]);
  const session = fixture.engine.runtime.get((await fixture.engine.store.session(created.vmId))!.runtime_id!)!;
  return { vmId: created.vmId, linkId: new URL(created.shareUrl).search.slice(1), session };
}

function act(fixture: EngineFixture, linkId: string, body: unknown): Promise<number> {
  return fetch(`${fixture.engine.url}/share/${linkId}/tabs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((response) => response.status);
}

/**
 * Ctrl+N in the viewer, then the new window's tab sent to the second page through the share link
 * (the viewer's address field): answers whether the display then shows that page alone, as notFilled.
 */
async function newWindowFills(fixture: EngineFixture, viewer: RfbClient, linkId: string, states: ViewerState[]): Promise<string | null> {
  const before = states.at(-1)?.tabs?.length ?? 0;
  await viewer.keyChord(0xffe3, 0x6e);
  const tabs = await waitFor(() => states.at(-1)?.tabs ?? [], (list) => list.length === before + 1 && list.at(-1)!.active, 20_000);
  expect(tabs.length).toBe(before + 1);
  expect(await act(fixture, linkId, { action: 'go', tab: tabs.at(-1)!.id, url: `${fixture.site.origin}/second` })).toBe(200);
  return fills(viewer, SECOND);
}

const rfbUrl = (fixture: EngineFixture, linkId: string) => `${fixture.engine.url.replace(/^http/, 'ws')}/share/${linkId}/rfb`;
const shown = (tabs: ShareTab[] | undefined) => (tabs ?? []).map((tab) => `${tab.title}${tab.active ? '*' : ''}`).join(',');

/** The visible top-level windows on the session's display (the browser's). */
async function windows(session: RuntimeSession): Promise<number> {
  return (await x(session, 'xdotool', ['search', '--onlyvisible', '--name', '.']).catch(() => '')).trim().split('\n').filter(Boolean).length;
}

describe('a Chromium app window from a warm browser', () => {
  let fixture: EngineFixture;
  const events: RuntimeEvent[] = [];

  beforeAll(async () => {
    fixture = await startEngine({ name: 'app-window-warm', site, config: { warm: { memoryMb: 1024, browsers: 1, displays: 0, languages: ['en'], quietMinutes: 10 } } });
    fixture.engine.runtime.on('event', (event) => events.push(event));
  }, 120_000);

  afterAll(async () => {
    await fixture?.close();
  });

  it('starts warm, fills the display with the page, keeps a tab the page opens in that window, and is put back when left', async () => {
    await waitFor(() => fixture.engine.runtime.warmStats().browsers.some((kind) => kind.browser === 'chromium'), Boolean, START_MS);
    const { linkId, session } = await createAppWindow(fixture);
    expect(session.start).toBe('warm-browser');
    expect(events.find((e) => e.sessionId === session.id && e.kind === 'started')?.message).toMatch(/^warm start: /);
    const states: ViewerState[] = [];
    const stop = followShareEvents(`${fixture.engine.url}/share/${linkId}/events`, (state) => states.push(state));
    let stopAgain = () => undefined as void;
    const viewer = await connectRfb(rfbUrl(fixture, linkId), TEST_MS);
    try {
      expect(await fills(viewer, FIRST)).toBeNull();
      // And stays so: no bubble about fullscreen comes over the page in the seconds after.
      expect(await staysFilled(viewer, FIRST, 3000)).toBeNull();
      expect(await waitFor(() => shown(states.at(-1)?.tabs), (t) => t === 'First*', 20_000)).toBe('First*');
      expect(states.at(-1)?.appWindow).toBe(true);
      // The display follows the controlling viewer's area (decisions.md 46): the app window follows it.
      viewer.setDesktopSize(1024, 640);
      expect(await viewer.waitForSize(1024, 640, 20_000)).toEqual({ width: 1024, height: 640 });
      expect(await fills(viewer, FIRST)).toBeNull();
      const windowsBefore = await windows(session);

      // A person's click on the page's link opens the second page in a new tab: in the same window, filling the display.
      await viewer.click(Math.round(viewer.width / 2), Math.round(viewer.height / 2));
      expect(await waitFor(() => shown(states.at(-1)?.tabs), (t) => t === 'First,Second*', 20_000)).toBe('First,Second*');
      expect(await fills(viewer, SECOND)).toBeNull();
      expect(await windows(session)).toBe(windowsBefore);

      // The page's own fullscreen, entered and left (a video's button): the window is still the app window.
      await viewer.click(100, 300);
      expect(await waitFor(() => session.control!.evaluate('document.fullscreenElement?.tagName ?? ""').catch(() => ''), (tag) => tag === 'BODY', 10_000)).toBe('BODY');
      await viewer.click(100, 300);
      expect(await waitFor(() => session.control!.evaluate('document.fullscreenElement?.tagName ?? ""').catch(() => 'BODY'), (tag) => tag === '', 10_000)).toBe('');
      expect(await fills(viewer, SECOND)).toBeNull();
      // F11 as a person presses it in the viewer: the browser takes the key (the page never sees it) and the window stays.
      await session.control!.evaluate('window.keys = []; addEventListener("keydown", (e) => keys.push(e.key), true); 1');
      await viewer.key(0xffc8);
      await viewer.key(0x62);
      expect(await waitFor(() => session.control!.evaluate('keys.join()').catch(() => ''), (keys) => keys === 'b', 10_000)).toBe('b');
      expect(await staysFilled(viewer, SECOND, 2000)).toBeNull();

      // Ctrl+N opens a browser window of its own (kiosk mode's too): the engine makes it fill the display as well.
      expect(await newWindowFills(fixture, viewer, linkId, states)).toBeNull();

      // Left some other way (here through DevTools, as a program driving the session could) with
      // nobody following the tabs, the browser's own strip shows; the engine's next look at the
      // tabs (a viewer following the link again) puts the app window back.
      stop();
      // The window on top: the one of the tab on screen.
      const onScreen = states.at(-1)!.tabs!.find((tab) => tab.active)!.id;
      const { windowId } = await session.control!.client.send('Browser.getWindowForTarget', { targetId: onScreen });
      // Until the engine has seen the stream go, a look may still put it back: the strip must stay
      // shown for longer than the looks' period (WATCHED_LOOK_MS) with nobody following.
      const stripStays = async () => {
        await session.control!.client.send('Browser.setWindowBounds', { windowId, bounds: { windowState: 'normal' } });
        if ((await waitFor(() => notFilled(viewer, SECOND), (wrong) => wrong !== null, 10_000)) === null) return false;
        return (await waitFor(() => notFilled(viewer, SECOND), (wrong) => wrong === null, WATCHED_LOOK_MS * 2)) !== null;
      };
      expect(await waitFor(stripStays, Boolean, 30_000)).toBe(true);
      stopAgain = followShareEvents(`${fixture.engine.url}/share/${linkId}/events`, (state) => states.push(state));
      expect(await fills(viewer, SECOND)).toBeNull();
    } finally {
      viewer.close();
      stop();
      stopAgain();
    }
  }, TEST_MS);
});

describe('a Chromium app window no warm browser serves', () => {
  let fixture: EngineFixture;

  beforeAll(async () => {
    fixture = await startEngine({ name: 'app-window-cold', site, config: { warm: { memoryMb: 0, browsers: 0, displays: 0, languages: ['en'], quietMinutes: 10 } } });
  }, 120_000);

  afterAll(async () => {
    await fixture?.close();
  });

  it('starts cold in kiosk mode, fills the display with the page, and so does a window Ctrl+N opens', async () => {
    const { linkId, session } = await createAppWindow(fixture);
    expect(session.start).toBe('cold');
    const states: ViewerState[] = [];
    const stop = followShareEvents(`${fixture.engine.url}/share/${linkId}/events`, (state) => states.push(state));
    const viewer = await connectRfb(rfbUrl(fixture, linkId), TEST_MS);
    try {
      expect(await fills(viewer, FIRST)).toBeNull();
      expect(await waitFor(() => shown(states.at(-1)?.tabs), (t) => t === 'First*', 20_000)).toBe('First*');
      expect(await newWindowFills(fixture, viewer, linkId, states)).toBeNull();
    } finally {
      viewer.close();
      stop();
    }
  }, TEST_MS);
});
