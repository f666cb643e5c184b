// Security suite in a real browser (Debian Chromium through playwright-core) against a real engine:
// an API key used from a web page is refused however the page sends it (decisions.md 20), and the
// viewer site sends a content security policy on every page that the browser then enforces, so
// that markup which got into a share page could run no script. The engine's sessions run on the
// fake runtime: the browser tested here is the person's, not a session's.
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { insertLinkedSession } from '../helpers/linked-session.js';

let fixture: EngineFixture<FakeRuntime>;
let engine: Engine<FakeRuntime>;
let key: string;
let accountId: string;
let subscriptionId: string;
let browser: Browser;
/** Another site on loopback (the fixture's): a page there is a stranger to the engine. */
let elsewhereOrigin: string;

/** A session row in `status` and its share link (no browser is needed for the page itself). */
function link(status: string): Promise<string> {
  return insertLinkedSession(engine, { accountId, subscriptionId }, { status, counted: false, ever_ran: false });
}

/** The account's sessions, read on the server: a refused create must have started none. */
const sessions = async () => (await engine.store.sessionsOf(accountId, 0, 100)).length;

beforeAll(async () => {
  fixture = await startEngine({
    name: 'security',
    runtime: 'fake',
    site: (request, response) => {
      const url = new URL(request.url ?? '/', 'http://elsewhere');
      if (url.pathname === '/frame') return void response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>Framing</title><iframe src="${url.searchParams.get('src') ?? ''}"></iframe>`);
      response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Another site</title>');
    },
  });
  ({ engine, account: { key, id: accountId, subscriptionId } } = fixture);
  elsewhereOrigin = fixture.site.origin;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
});

afterAll(async () => {
  await browser?.close();
  await fixture?.close();
});

/** Runs `fetch` in the page: the status and body it could read, or the error it got. */
function fetchIn(page: Page, url: string, init: { method?: string; headers?: Record<string, string>; body?: string; mode?: RequestMode }) {
  return page.evaluate(
    async ([target, options]) => {
      try {
        const response = await fetch(target, options);
        return { status: response.status, body: await response.text() };
      } catch (error) {
        return { status: 0, body: String(error) };
      }
    },
    [url, init] as const,
  );
}

describe('an API key used from a web page (decisions.md 20)', () => {
  it("is refused on the service's own origin: reads and creates answer 403 client_side_key, nothing starts", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${engine.url}/`);
      const authorization = { authorization: `Bearer ${key}` };
      const calls = [
        await fetchIn(page, '/v8/user/quota', { headers: authorization }),
        await fetchIn(page, '/v8/vm/data', { headers: authorization }),
        await fetchIn(page, '/v7/user/api', { headers: authorization }),
        await fetchIn(page, '/v8/vm/create', { method: 'POST', headers: { ...authorization, 'content-type': 'application/json' }, body: JSON.stringify({ browser: 'chromium', url: elsewhereOrigin }) }),
      ];
      for (const call of calls) {
        expect(call.status, call.body).toBe(403);
        expect(JSON.parse(call.body)).toMatchObject({ status: 'insecure', reason: 'client_side_key' });
      }
      expect(await sessions()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it('is refused from another site: the page reads nothing, getKey answers 403, nothing starts', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${elsewhereOrigin}/`);
      const statuses: Record<string, number> = {};
      page.on('response', (response) => {
        statuses[new URL(response.url()).pathname] = response.status();
      });
      // With the key in a header the browser asks first (a preflight) and the service grants nothing.
      const read = await fetchIn(page, `${engine.url}/v8/user/quota`, { headers: { authorization: `Bearer ${key}` } });
      expect(read.status).toBe(0);
      const create = await fetchIn(page, `${engine.url}/v8/vm/create`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"browser":"chromium"}' });
      expect(create.status).toBe(0);
      // v6 takes the key in the query string: a request the browser sends without asking.
      await fetchIn(page, `${engine.url}/api/v6/getKey?key=${key}`, { mode: 'no-cors' });
      await expect.poll(() => statuses['/api/v6/getKey']).toBe(403);
      const opened = await page.goto(`${engine.url}/api/v6/getKey?key=${key}`);
      expect(opened?.status()).toBe(403);
      expect(await page.textContent('body')).toContain('auth-failed');
      expect(await sessions()).toBe(0);
    } finally {
      await page.close();
    }
  });
});

describe('the viewer site', () => {
  const policyOf = (header: string | null) =>
    Object.fromEntries((header ?? '').split(';').map((part) => part.trim().split(/\s+/)).filter((words) => words[0]).map(([name, ...values]) => [name, values]));

  it('sends a content security policy with every page: live, deleted and unknown links, and the launch page', async () => {
    const pages = {
      live: await link('suspended'),
      deleted: await link('deleted'),
      unknown: `${engine.url}/en/s?${'A'.repeat(22)}`,
      v7: `${engine.url}/s?${'A'.repeat(22)}`,
      launch: `${engine.url}/`,
    };
    const seen: Record<string, unknown> = {};
    for (const [name, url] of Object.entries(pages)) {
      const response = await fetch(url);
      const policy = policyOf(response.headers.get('content-security-policy'));
      seen[name] = {
        status: response.status,
        html: response.headers.get('content-type')?.startsWith('text/html') && (await response.text()).includes('<script'),
        'script-src': policy['script-src'],
        'object-src': policy['object-src'],
        'base-uri': policy['base-uri'],
        'frame-ancestors': policy['frame-ancestors'],
        'connect-src': policy['connect-src'],
        'default-src': policy['default-src'],
      };
    }
    const expected = { html: true, 'script-src': ["'self'"], 'object-src': ["'none'"], 'base-uri': ["'none'"], 'frame-ancestors': ["'self'"], 'connect-src': ["'self'"], 'default-src': ["'self'"] };
    expect(seen).toEqual({
      live: { status: 200, ...expected },
      deleted: { status: 410, ...expected },
      unknown: { status: 404, ...expected },
      v7: { status: 404, ...expected },
      launch: { status: 200, ...expected },
    });
  });

  it('runs no script that got into a share page: inline scripts, event handlers, javascript: addresses and scripts of other sites are blocked', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(await link('suspended'));
      await expect.poll(() => page.getByRole('heading', { name: 'This session has ended' }).isVisible(), { timeout: 10_000 }).toBe(true);
      const outcome = await page.evaluate(async (foreign) => {
        const ran: string[] = [];
        const violations: string[] = [];
        (window as unknown as { ran: (what: string) => void }).ran = (what) => ran.push(what);
        document.addEventListener('securitypolicyviolation', (event) => violations.push(event.violatedDirective));
        // What markup from a hostile service would try, were it ever inserted as HTML.
        const inline = document.createElement('script');
        inline.textContent = "ran('inline script')";
        document.body.append(inline);
        const holder = document.createElement('div');
        holder.innerHTML = `<img src="data:," onerror="ran('event handler')"><a id="js" href="javascript:ran('javascript: link')">x</a>`;
        document.body.append(holder);
        (document.getElementById('js') as HTMLAnchorElement).click();
        const external = document.createElement('script');
        external.src = `${foreign}/evil.js`;
        document.body.append(external);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        return { ran, violations: [...new Set(violations)].sort() };
      }, elsewhereOrigin);
      expect(outcome.ran).toEqual([]);
      expect(outcome.violations).toEqual(expect.arrayContaining(['script-src-attr', 'script-src-elem']));
    } finally {
      await page.close();
    }
  });

  it('is not shown inside another site\'s page', async () => {
    const page = await browser.newPage();
    try {
      const share = await link('suspended');
      await page.goto(`${elsewhereOrigin}/frame?src=${encodeURIComponent(share)}`);
      // Chromium replaces a refused frame with its error page.
      const frameUrl = () => page.frames().find((f) => f !== page.mainFrame())?.url() ?? '';
      await expect.poll(frameUrl, { timeout: 5000 }).toMatch(/^chrome-error:/);
      const frame = page.frames().find((f) => f !== page.mainFrame())!;
      expect(await frame.evaluate(() => document.querySelector('.rbk-viewer') !== null).catch(() => false)).toBe(false);
    } finally {
      await page.close();
    }
  });
});
