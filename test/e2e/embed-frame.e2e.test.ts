// Framing the viewer on named sites only (issue 44, decisions.md 134), in a real browser (Debian
// Chromium through playwright-core) against a real engine (sessions on the fake runtime: what is
// tested is the person's browser honouring the viewer site's frame-ancestors). Two loopback
// origins serve the same page that frames a share link: 127.0.0.1, which the account allows, shows
// the viewer; localhost, which it does not, gets the browser's own refusal, never a viewer.
// Needs the viewer site built (`npm run build`, or `npx vite build --mode viewer-site`).
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';

let fixture: EngineFixture<FakeRuntime>;
let browser: Browser;
/** The allowed site (`http://127.0.0.1:<port>`) and the same server under another origin (`http://localhost:<port>`). */
let allowed: string;
let stranger: string;

beforeAll(async () => {
  fixture = await startEngine({
    name: 'embed-frame',
    runtime: 'fake',
    site: (request, response) => {
      const url = new URL(request.url ?? '/', 'http://site');
      if (url.pathname === '/frame') return void response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>Host page</title><iframe style="width:800px;height:600px" src="${url.searchParams.get('src') ?? ''}"></iframe>`);
      response.writeHead(404).end();
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

/** The page's one iframe. */
const frameOf = (page: Page): Frame | undefined => page.frames().find((frame) => frame !== page.mainFrame());

async function framed(origin: string, share: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${origin}/frame?src=${encodeURIComponent(share)}`);
  return page;
}

describe('a share link framed by another site', () => {
  let share: string;

  beforeAll(async () => {
    expect(await fixture.call('/user/embed', { origins: [allowed] })).toEqual({ status: 'ok', origins: [allowed] });
    const created = await fixture.call('/vm/create', { browser: 'chromium' });
    expect(created.status).toBe('ok');
    share = created.shareUrl;
  });

  it('shows the viewer on the origin the account allows', async () => {
    const page = await framed(allowed, share);
    try {
      await expect.poll(() => frameOf(page)?.url(), { timeout: 10_000 }).toBe(share);
      await expect.poll(() => frameOf(page)!.evaluate(() => document.querySelector('.rbk-viewer') !== null).catch(() => false), { timeout: 15_000 }).toBe(true);
    } finally {
      await page.close();
    }
  });

  it('is refused by the browser on another origin: its error page, no viewer', async () => {
    const page = await framed(stranger, share);
    try {
      await expect.poll(() => frameOf(page)?.url() ?? '', { timeout: 10_000 }).toMatch(/^chrome-error:/);
      expect(await frameOf(page)!.evaluate(() => document.querySelector('.rbk-viewer') !== null).catch(() => false)).toBe(false);
    } finally {
      await page.close();
    }
  });
});
