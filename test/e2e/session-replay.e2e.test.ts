// <SessionReplay> end to end (issue 35): a real Chromium session created with `record: true`
// through the proxy route goes from a white page to a solid green one; once it has ended, the
// demo's replay page (the component, built, behind the same route) plays its recording in Debian
// Chromium, lists both navigations, and a jump to the second shows that page: the video frame
// after the seek is green where the frame at the first navigation is not.
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/engine/config.js';
import { DEMO_PAGE_DIR } from '../../src/demo/server.js';
import { toNodeHandler } from '../../src/server/adapters/node.js';
import { createProxyRoute, engineService } from '../../src/server/index.js';
import { resources } from '../../src/react/i18n.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { waitFor } from '../helpers/session.js';

const en = resources.en.replay;
const GREEN = '#00c853';
/** The first page: white with dark text, going on to the second after a while. */
const PAGES: Record<string, string> = {
  '/first': `<!doctype html><title>First</title><body style="margin:0;background:#fff;font:48px sans-serif"><h1>first page</h1><script>setTimeout(function () { location.href = '/second'; }, 4000);</script></body>`,
  '/second': `<!doctype html><title>Second</title><body style="margin:0;background:${GREEN}"></body>`,
};
const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

let fixture: EngineFixture;
let app: Server;
let appOrigin: string;
let browser: Browser;
let handle: string;

beforeAll(async () => {
  const pro = DEFAULT_PLANS.find((plan) => plan.id === 'pro')!;
  fixture = await startEngine({
    name: 'replay',
    plans: ['recorded'],
    config: { plans: [...DEFAULT_PLANS, { ...pro, id: 'recorded', name: 'Recorded', recording: true }] },
    site: (request, response) => {
      const html = PAGES[request.url ?? ''];
      if (!html) return void response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    },
  });
  // The customer's app: its proxy route and the demo's built pages, on one origin.
  const route = createProxyRoute({ service: engineService(fixture.engine, { apiKey: fixture.account.key }), authorize: () => ({ id: 'person-1' }), secret: 'replay-e2e-handle-secret-0123456789abcdef' });
  const routeHandler = toNodeHandler(route);
  app = createServer(async (request, response) => {
    if ((request.url ?? '').startsWith(route.basePath)) return void routeHandler(request, response);
    const path = normalize(join(DEMO_PAGE_DIR, new URL(request.url ?? '/', 'http://app').pathname));
    const body = path.startsWith(DEMO_PAGE_DIR) ? await readFile(path).catch(() => null) : null;
    if (!body) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream' }).end(body);
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'] });

  // The recorded session, through the route as the launcher starts one.
  const api = (path: string, init: RequestInit = {}) => fetch(`${appOrigin}${route.basePath}${path}`, { ...init, headers: { 'content-type': 'application/json' } });
  const created = (await (await api('/sessions', { method: 'POST', body: JSON.stringify({ browser: 'chromium', url: `${fixture.site.origin}/first`, record: true }) })).json()) as { handle: string };
  handle = created.handle;
  const recordingOf = async () => (await (await api(`/sessions/${encodeURIComponent(handle)}/recording`)).json()) as { recording?: { state: string; timeline: Array<{ type: string; url?: string; time: string }> } };
  const reached = await waitFor(recordingOf, (answer) => answer.recording?.timeline.some((entry) => entry.url === `${fixture.site.origin}/second`) ?? false, 90_000);
  // Two seconds on the green page, then the session ends and the recording is whole.
  const second = Date.parse(reached.recording!.timeline.find((entry) => entry.url === `${fixture.site.origin}/second`)!.time);
  await waitFor(async () => Date.now(), (now) => now > second + 2500, 10_000);
  await api(`/sessions/${encodeURIComponent(handle)}`, { method: 'DELETE' });
  await waitFor(recordingOf, (answer) => answer.recording?.state === 'ended', 60_000);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (app ? app.close(() => resolve()) : resolve()));
  await fixture?.close();
});

/** The video's frame now, drawn on a canvas: the share of its pixels near the second page's green. */
function greenShare(page: Page): Promise<number> {
  return page.evaluate(() => {
    const video = document.querySelector('video')!;
    const canvas = document.createElement('canvas');
    canvas.width = video.videoWidth;
    canvas.height = video.videoHeight;
    const context = canvas.getContext('2d')!;
    context.drawImage(video, 0, 0);
    // The page's area: below the browser's own bars, away from the edges.
    const { data } = context.getImageData(Math.round(canvas.width * 0.1), Math.round(canvas.height * 0.3), Math.round(canvas.width * 0.8), Math.round(canvas.height * 0.6));
    let green = 0;
    for (let i = 0; i < data.length; i += 4) if (Math.abs(data[i]! - 0x00) < 40 && Math.abs(data[i + 1]! - 0xc8) < 40 && Math.abs(data[i + 2]! - 0x53) < 40) green++;
    return green / (data.length / 4);
  });
}

/** Activates an event of the list and waits for the video to show the frame there. */
async function jumpTo(page: Page, name: RegExp): Promise<void> {
  const seeked = page.evaluate(() => new Promise<void>((resolve) => document.querySelector('video')!.addEventListener('seeked', () => resolve(), { once: true })));
  await page.getByRole('list', { name: en.events }).getByRole('button', { name }).click();
  await seeked;
  await page.waitForFunction(() => document.querySelector('video')!.readyState >= 2);
}

describe('<SessionReplay> in Chromium', () => {
  it("plays the session's recording and shows the second page after a jump to its navigation", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${appOrigin}/replay.html?handle=${encodeURIComponent(handle)}`);
    const list = page.getByRole('list', { name: en.events });
    await list.getByRole('button', { name: /Went to Second/ }).waitFor({ timeout: 30_000 });
    expect(await list.getByRole('button', { name: /Went to First/ }).count()).toBe(1);
    await page.waitForFunction(() => document.querySelector('video')!.readyState >= 2, undefined, { timeout: 30_000 });
    expect(await page.evaluate(() => document.querySelector('video')!.duration)).toBeGreaterThan(5);

    // It plays: its time moves on.
    await page.evaluate(() => void document.querySelector('video')!.play());
    await page.waitForFunction(() => document.querySelector('video')!.currentTime > 0.5, undefined, { timeout: 20_000 });
    await page.evaluate(() => document.querySelector('video')!.pause());

    // The first navigation: the white page, not green.
    await jumpTo(page, /Went to First/);
    expect(await greenShare(page)).toBeLessThan(0.05);
    // The second: the event is the current one, announced, and the green page follows within a
    // second or two of it (the timeline notes a navigation when the browser starts it, the picture
    // shows it once painted, later on a busy machine).
    await jumpTo(page, /Went to Second/);
    const landed = await page.evaluate(() => document.querySelector('video')!.currentTime);
    expect(await list.getByRole('button', { name: /Went to Second/ }).getAttribute('aria-current')).toBe('true');
    await page.waitForFunction(() => /Now: Went to Second/.test(document.querySelector('[aria-live="polite"]')?.textContent ?? ''));
    await page.evaluate(() => void document.querySelector('video')!.play());
    expect(await waitFor(() => greenShare(page), (share) => share > 0.9, 15_000)).toBeGreaterThan(0.9);
    expect(await page.evaluate(() => document.querySelector('video')!.currentTime)).toBeLessThan(landed + 2.5);
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
