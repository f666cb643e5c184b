// A replay link end to end (issue 35, decisions.md 110): a real Chromium session created with
// `record: true` goes from a white page to a solid green one and ends; a link minted through the
// proxy route (as a host app's "copy replay link" does) opens the engine's own replay page in
// Debian Chromium, with no sign-in and no route: the video plays, both navigations are listed, a
// jump to the second shows the green page, and the page speaks the browser's language. An expired
// link and a tampered one show their error page, with the HTTP status saying it too.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toNodeHandler } from '../../src/server/adapters/node.js';
import { createProxyRoute, engineService } from '../../src/server/index.js';
import { resources } from '../../src/react/i18n.js';
import type { EngineFixture } from '../helpers/engine.js';
import { greenShare, recordTwoPages, startRecordingEngine } from '../helpers/replay.js';
import { waitFor } from '../helpers/session.js';

let fixture: EngineFixture;
let app: Server;
let appOrigin: string;
let browser: Browser;
let link: { url: string; expires: string };
let clockAhead = 0;
const routeBase = '/api/remote-browser';
let api: (path: string, init?: RequestInit) => Promise<Response>;

beforeAll(async () => {
  fixture = await startRecordingEngine('replay-link-e2e', () => Date.now() + clockAhead);
  // The customer's app: only its proxy route; the replay page is the engine's.
  const route = createProxyRoute({ service: engineService(fixture.engine, { apiKey: fixture.account.key }), authorize: () => ({ id: 'person-1' }), secret: 'replay-link-e2e-handle-secret-0123456789' });
  const routeHandler = toNodeHandler(route);
  app = createServer((request, response) => void routeHandler(request, response));
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  api = (path, init = {}) => fetch(`${appOrigin}${routeBase}${path}`, { ...init, headers: { 'content-type': 'application/json' } });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'] });

  const recording = `/sessions/${encodeURIComponent(await recordTwoPages(api, fixture.site.origin))}/recording`;
  // "Copy replay link" in the host app: the route mints it by handle.
  const minted = (await (await api(`${recording}/link`, { method: 'POST', body: '{}' })).json()) as { status: string; url: string; expires: string };
  expect(minted.status).toBe('ok');
  link = minted;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (app ? app.close(() => resolve()) : resolve()));
  await fixture?.close();
});

describe('a replay link in Chromium', () => {
  it('opens the engine\'s replay page, which plays the recording and lists its events, in the browser\'s language', async () => {
    expect(link.url.startsWith(`${fixture.engine.url}/replay/`)).toBe(true);
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, locale: 'de-DE' });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    const de = resources.de.replay;
    const response = await page.goto(link.url);
    expect(response!.status()).toBe(200);
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('de');
    expect(await page.title()).toBe(de.title);
    const list = page.getByRole('list', { name: de.events });
    const secondEvent = list.getByRole('button', { name: new RegExp(de.event.navigation.replace('{{title}}', 'Second')) });
    await secondEvent.waitFor({ timeout: 30_000 });
    expect(await list.getByRole('button', { name: new RegExp(de.event.navigation.replace('{{title}}', 'First')) }).count()).toBe(1);
    await page.waitForFunction(() => document.querySelector('video')!.readyState >= 2, undefined, { timeout: 30_000 });
    expect(await page.evaluate(() => document.querySelector('video')!.duration)).toBeGreaterThan(5);

    // It plays: its time moves on.
    await page.evaluate(() => void document.querySelector('video')!.play());
    await page.waitForFunction(() => document.querySelector('video')!.currentTime > 0.5, undefined, { timeout: 20_000 });
    await page.evaluate(() => document.querySelector('video')!.pause());
    // A jump to the second navigation shows the green page (the media is reached by the token, with ranges).
    const seeked = page.evaluate(() => new Promise<void>((resolve) => document.querySelector('video')!.addEventListener('seeked', () => resolve(), { once: true })));
    await secondEvent.click();
    await seeked;
    await page.waitForFunction(() => document.querySelector('video')!.readyState >= 2);
    // The jump lands at the navigation; the new page's picture follows it within a second or two
    // (the timeline notes the navigation when the browser starts it, the picture when it is painted).
    const landed = await page.evaluate(() => document.querySelector('video')!.currentTime);
    expect(await secondEvent.getAttribute('aria-current')).toBe('true');
    await page.evaluate(() => void document.querySelector('video')!.play());
    expect(await waitFor(() => greenShare(page), (share) => share > 0.9, 15_000)).toBeGreaterThan(0.9);
    expect(await page.evaluate(() => document.querySelector('video')!.currentTime)).toBeLessThan(landed + 2.5);
    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);

  it('shows a tampered link and an expired one as such, in the page and its status', async () => {
    const en = resources.en.replay;
    const page = await browser.newPage();
    const tampered = `${link.url.slice(0, -1)}${link.url.endsWith('A') ? 'B' : 'A'}`;
    expect((await page.goto(tampered))!.status()).toBe(404);
    await page.getByRole('alert').filter({ hasText: en.error.invalid }).waitFor({ timeout: 20_000 });
    expect(await page.locator('video').count()).toBe(0);

    clockAhead = Date.parse(link.expires) - Date.now() + 1000;
    try {
      expect((await page.goto(link.url))!.status()).toBe(410);
      await page.getByRole('alert').filter({ hasText: en.error.expired }).waitFor({ timeout: 20_000 });
      expect(await page.locator('video').count()).toBe(0);
    } finally {
      clockAhead = 0;
    }
    await page.close();
  }, 60_000);
});
