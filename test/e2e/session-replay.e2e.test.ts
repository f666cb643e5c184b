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
import { DEMO_PAGE_DIR } from '../../src/demo/server.js';
import { toNodeHandler } from '../../src/server/adapters/node.js';
import { createProxyRoute, engineService } from '../../src/server/index.js';
import { resources } from '../../src/react/i18n.js';
import type { EngineFixture } from '../helpers/engine.js';
import { greenShare, recordTwoPages, startRecordingEngine } from '../helpers/replay.js';
import { waitFor } from '../helpers/session.js';

const en = resources.en.replay;
const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

let fixture: EngineFixture;
let app: Server;
let appOrigin: string;
let browser: Browser;
let handle: string;

beforeAll(async () => {
  fixture = await startRecordingEngine('replay');
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
  handle = await recordTwoPages(api, fixture.site.origin);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (app ? app.close(() => resolve()) : resolve()));
  await fixture?.close();
});

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
