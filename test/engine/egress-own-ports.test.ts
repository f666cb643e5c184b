// The engine's own listeners are never a session's destination (issue 43, finding 6; decisions.md
// 120): a real engine with the allow list the docs give for a local demo (`127.0.0.0/8`) and a
// confined Chromium session. A program's navigation, a redirect from an allowed site, and a tab the
// share link opens all reach the engine's public port (`/healthz`) and its operator listener
// (`/metrics`) only as the egress route's refusal, while the allowed loopback site still loads.
// Unconfined (an operator's opt-in), the browser's DevTools and the session's route listen on the
// host's loopback too: they are the engine's ports while the session lives.
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../src/engine/runtime/runtime.js';
import { shareLinkOf } from '../helpers/automation.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { waitFor } from '../helpers/session.js';

/** What the egress route answers for one of the engine's own ports (refusals.ts, English). */
const REFUSAL = /remote-browser-kit egress: 127\.0\.0\.1:\d+ is a port of the remote browser service itself and is not allowed/;
const SITE_PAGE = '<!doctype html><title>Allowed site</title><p id="here">the operator\'s loopback site</p>';

let fixture: EngineFixture;
let browser: Browser | undefined;
let vmId: string;
let linkId: string;
/** The engine's public port's and operator listener's addresses, as a page in the session would name them. */
let healthz: string;
let metrics: string;
const refusals: string[] = [];

beforeAll(async () => {
  fixture = await startEngine({
    name: 'own-ports',
    config: { egress: { allow: ['127.0.0.0/8'] } },
    // The allowed site, which also sends its visitors on to the engine's own listeners.
    site: (request, response) => {
      if (request.url === '/to-healthz') return void response.writeHead(302, { location: healthz }).end();
      if (request.url === '/to-metrics') return void response.writeHead(302, { location: metrics }).end();
      if (request.url === '/favicon.ico') return void response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(SITE_PAGE);
    },
  });
  const { engine } = fixture;
  expect(engine.operatorUrl).not.toBeNull();
  healthz = `${engine.url}/healthz`;
  metrics = `${engine.operatorUrl}/metrics`;
  // Both answer from outside a session: what the session must not get.
  expect((await fetch(healthz)).status).toBe(200);
  expect(await (await fetch(metrics)).text()).toContain('# HELP');
  engine.runtime.on('event', (event: RuntimeEvent) => {
    if (event.kind === 'refused' && !event.ends && event.detail && 'category' in event.detail) refusals.push(`${event.detail.category} ${event.detail.target}`);
  });
  const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/` });
  expect(created.status).toBe('ok');
  vmId = created.vmId;
  linkId = shareLinkOf(created.shareUrl);
  const status = await waitFor(async () => (await fixture.call(`/vm/data?id=${vmId}`)).data?.[0]?.status, (s) => s === 'running' || s === 'error', 45_000);
  expect(status).toBe('running');
}, 120_000);

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await fixture?.close();
});

async function program(): Promise<Browser> {
  const answer = await fixture.call(`/vm/automation?id=${vmId}`);
  expect(answer.status).toBe('ok');
  browser ??= await chromium.connectOverCDP(answer.browserWSEndpoint as string, { timeout: 20_000 });
  return browser;
}

/** The page's text once it holds `expected`, polled (a page may still be committing), or what it last held. */
function bodyText(page: Page, expected: RegExp): Promise<string> {
  return waitFor(() => page.textContent('body', { timeout: 2_000 }).then((text) => text ?? '', () => ''), (text) => expected.test(text), 15_000);
}

describe("the engine's own listeners, from inside a session allowed 127.0.0.0/8", () => {
  it('refuses /healthz and /metrics to a navigation and on a redirect, while the allowed loopback site loads', async () => {
    const page = await (await program()).contexts()[0]!.newPage();
    try {
      for (const address of [healthz, metrics]) {
        const answer = await page.goto(address, { timeout: 20_000 });
        expect([address, answer?.status()]).toEqual([address, 403]);
        expect(await bodyText(page, REFUSAL)).toMatch(REFUSAL);
      }
      // An allowed site that sends the browser on: the redirect's target is checked like any request.
      for (const path of ['/to-healthz', '/to-metrics']) {
        const answer = await page.goto(`${fixture.site.origin}${path}`, { timeout: 20_000 });
        expect([path, answer?.status()]).toEqual([path, 403]);
        expect(await bodyText(page, REFUSAL)).toMatch(REFUSAL);
      }
      // The operator's own loopback site, on another port, still loads.
      const allowed = await page.goto(`${fixture.site.origin}/`, { timeout: 20_000 });
      expect(allowed?.status()).toBe(200);
      expect(await page.title()).toBe('Allowed site');
    } finally {
      await page.close().catch(() => undefined);
    }
    // The operator learns what was refused, and why.
    const port = (address: string) => new URL(address).port;
    await waitFor(() => refusals.length, (n) => n >= 4, 5_000);
    expect(refusals).toEqual(expect.arrayContaining([`engine-listener 127.0.0.1:${port(healthz)}`, `engine-listener 127.0.0.1:${port(metrics)}`]));
  }, 90_000);

  it("shows the refusal in a tab the share link opens on the operator listener's /metrics", async () => {
    const opened = await fetch(`${fixture.engine.url}/share/${linkId}/tabs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'open', url: metrics }) });
    expect(opened.status).toBe(200);
    const context = (await program()).contexts()[0]!;
    const tab = await waitFor(() => context.pages().find((page) => page.url() === metrics), Boolean, 15_000);
    expect(tab, 'the tab the share link opened').toBeDefined();
    const text = await bodyText(tab!, REFUSAL);
    expect(text).toMatch(REFUSAL);
    expect(text).not.toContain('# HELP');
  }, 60_000);
});

describe('an unconfined session (insecure.unconfined) allowed 127.0.0.0/8', () => {
  it("cannot reach its browser's DevTools port nor its own egress route; both are the engine's ports while the session lives", async () => {
    const unconfined = await startEngine({ name: 'own-ports-unconfined', site: SITE_PAGE, config: { egress: { allow: ['127.0.0.0/8'] }, insecure: { unconfined: true } } });
    let programBrowser: Browser | undefined;
    try {
      const created = await unconfined.call('/vm/create', { browser: 'chromium', url: `${unconfined.site.origin}/` });
      expect(created.status).toBe('ok');
      const status = await waitFor(async () => (await unconfined.call(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running' || s === 'error', 45_000);
      expect(status).toBe('running');
      const session = unconfined.engine.runtime.get((await unconfined.engine.store.session(created.vmId))!.runtime_id!)!;
      const devtools = new URL(session.browser.devtoolsUrl!).port;
      const answer = await unconfined.call(`/vm/automation?id=${created.vmId}`);
      programBrowser = await chromium.connectOverCDP(answer.browserWSEndpoint as string, { timeout: 20_000 });
      const page = await programBrowser.contexts()[0]!.newPage();
      for (const address of [`http://127.0.0.1:${devtools}/json/version`, `http://127.0.0.1:${session.egress.port}/`]) {
        const refused = await page.goto(address, { timeout: 20_000 });
        expect([address, refused?.status()]).toEqual([address, 403]);
        expect(await bodyText(page, REFUSAL)).toMatch(REFUSAL);
      }
      expect((await page.goto(`${unconfined.site.origin}/`, { timeout: 20_000 }))?.status()).toBe(200);
      expect(unconfined.engine.ownPorts.list()).toEqual(expect.arrayContaining([Number(devtools), session.egress.port]));
      await programBrowser.close();
      programBrowser = undefined;
      // Once the session ends, its ports are no longer the engine's.
      expect((await unconfined.call('/vm/remove', { id: created.vmId })).status).toBe('ok');
      const left = await waitFor(() => unconfined.engine.ownPorts.list(), (ports) => !ports.includes(Number(devtools)) && !ports.includes(session.egress.port), 30_000);
      expect(left).not.toContain(Number(devtools));
    } finally {
      await programBrowser?.close().catch(() => undefined);
      await unconfined.close();
    }
  }, 120_000);
});
