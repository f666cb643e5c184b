// Programs on a real engine's confined Chromium session (issue 24), with a person watching through
// a share link: Puppeteer's connect completes the small flow the viewer sees happen, Playwright
// and Puppeteer drive one session at once while the viewer watches both, and an attached program
// keeps the session past its idle timeout (the engine's clock is moved) until it leaves.
import { chromium } from 'playwright-core';
import puppeteer, { type Browser as PuppeteerBrowser } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { BLUE, ORDER_PAGE, WATCHED_POINT, YELLOW, shareLinkOf } from '../helpers/automation.js';
import { connectRfb, type RfbClient } from '../helpers/rfb-client.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';

const [X, Y] = WATCHED_POINT;
/** The pro plan's idle timeout (config.ts). */
const IDLE_MINUTES = 30;

let fixture: EngineFixture;
let engine: Engine;
let origin: string;
let key: string;
let vmId: string;
let linkId: string;
/** Added to the engine's clock: how the idle timeout is crossed without waiting for it. */
let offset = 0;
const closers: Array<() => Promise<unknown> | unknown> = [];

const api = v8Caller(() => engine.url, () => key);
const sessionStatus = async () => (await api(`/vm/data?id=${vmId}`)).data?.[0]?.status as string | undefined;

async function endpoint(): Promise<string> {
  const answer = await api(`/vm/automation?id=${vmId}`);
  expect(answer.status).toBe('ok');
  return answer.browserWSEndpoint as string;
}

async function viewer(): Promise<RfbClient> {
  const client = await connectRfb(`${engine.url.replace(/^http/, 'ws')}/share/${linkId}/rfb`);
  closers.push(() => client.close());
  return client;
}

async function withPuppeteer(): Promise<PuppeteerBrowser> {
  const browser = await puppeteer.connect({ browserWSEndpoint: await endpoint(), defaultViewport: null, protocolTimeout: 20_000 });
  closers.push(() => browser.disconnect());
  return browser;
}

beforeAll(async () => {
  fixture = await startEngine({ name: 'programs', site: ORDER_PAGE, now: () => Date.now() + offset });
  ({ engine, account: { key }, site: { origin } } = fixture);
  const created = await api('/vm/create', { browser: 'chromium', url: `${origin}/` });
  expect(created.status).toBe('ok');
  vmId = created.vmId;
  linkId = shareLinkOf(created.shareUrl);
  expect(await waitFor(sessionStatus, (status) => status === 'running', 30_000)).toBe('running');
}, 90_000);

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

afterAll(async () => {
  await fixture?.close();
});

describe('Puppeteer on a session', () => {
  it('connects with browserWSEndpoint and fills a form, clicks, reads the result and takes a screenshot, while a viewer sees it happen', async () => {
    const watching = await viewer();
    expect(await watching.waitForPixel(X, Y, YELLOW)).toEqual(YELLOW);
    const browser = await withPuppeteer();
    const page = (await browser.pages()).find((p) => p.url().startsWith(origin))!;
    expect(page).toBeDefined();
    await page.type('#name', 'Grace');
    await page.click('#send');
    await page.waitForFunction("document.getElementById('result').textContent === 'Thanks, Grace'", { timeout: 10_000 });
    expect(await page.$eval('#result', (element) => element.textContent)).toBe('Thanks, Grace');
    // The person watching sees the page the program changed, on the session's display.
    expect(await watching.waitForPixel(X, Y, BLUE)).toEqual(BLUE);
    const png = await page.screenshot();
    expect(Buffer.from(png).subarray(1, 4).toString()).toBe('PNG');
    // A new page of the program opens in the session too.
    const second = await browser.newPage();
    await second.goto(`${origin}/second`);
    expect(await second.title()).toBe('Order');
    await second.close();
    await page.click('#again');
    expect(await watching.waitForPixel(X, Y, YELLOW)).toEqual(YELLOW);
    expect(await sessionStatus()).toBe('running');
  }, 60_000);
});

describe('several clients at once', () => {
  it('Playwright and Puppeteer drive the same session while a viewer watches both', async () => {
    const watching = await viewer();
    const playwright = await chromium.connectOverCDP(await endpoint(), { timeout: 20_000 });
    closers.push(() => playwright.close());
    const puppeteerBrowser = await withPuppeteer();
    const byPlaywright = playwright.contexts()[0]!.pages().find((p) => p.url().startsWith(origin))!;
    const byPuppeteer = (await puppeteerBrowser.pages()).find((p) => p.url().startsWith(origin))!;
    expect(await watching.waitForPixel(X, Y, YELLOW)).toEqual(YELLOW);
    // One program orders; the other reads the thanks; the viewer sees the page turn blue.
    await byPlaywright.fill('#name', 'Ada');
    await byPlaywright.click('#send');
    await byPuppeteer.waitForFunction("document.getElementById('result').textContent === 'Thanks, Ada'", { timeout: 10_000 });
    expect(await watching.waitForPixel(X, Y, BLUE)).toEqual(BLUE);
    // The other undoes it; the first sees it, and so does the viewer.
    await byPuppeteer.click('#again');
    await expect.poll(() => byPlaywright.textContent('#result')).toBe('');
    expect(await watching.waitForPixel(X, Y, YELLOW)).toEqual(YELLOW);
    expect(playwright.isConnected() && puppeteerBrowser.connected).toBe(true);
  }, 60_000);
});

describe('the idle timeout', () => {
  it('an attached program keeps the session past it; once the program leaves, the session ends', async () => {
    const browser = await withPuppeteer();
    const page = (await browser.pages()).find((p) => p.url().startsWith(origin))!;
    // Nobody watches; only the program is attached. The sweep runs every second.
    offset += (IDLE_MINUTES + 1) * 60_000;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await sessionStatus()).toBe('running');
    expect(await page.evaluate('1 + 1')).toBe(2);
    await browser.disconnect();
    // The program's last sight is written when it leaves; past the timeout from then, the session ends.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    offset += (IDLE_MINUTES + 1) * 60_000;
    expect(await waitFor(sessionStatus, (status) => status !== 'running', 10_000)).toBe('suspended');
  }, 60_000);
});
