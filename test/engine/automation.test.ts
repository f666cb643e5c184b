// Programs driving a real engine's confined Chromium session over DevTools (issue 24): the
// address the API answers, Playwright's connectOverCDP completing a small flow that a viewer sees
// happen, every refused method answered with a DevTools error the program reads, the engine's own
// DevTools connection hidden and out of reach, addresses a person may not open refused to a program
// too (whatever interception it sets up; browser pages before they commit, so no script of the
// program runs in them), files dropped on a page only from the session's folders, and the address
// refused when forged for another session, once expired, and once the session ended (whose open
// connection then closes).
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { createServiceClient } from '../../src/server/service-client.js';
import type { BrowserControl } from '../../src/engine/runtime/browser/control.js';
import { BLUE, ORDER_PAGE, WATCHED_POINT, YELLOW, shareLinkOf, upgradeStatus } from '../helpers/automation.js';
import { connectRfb } from '../helpers/rfb-client.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';

const TOKEN_SECONDS = 3;

let fixture: EngineFixture;
let engine: Engine;
let origin: string;
let key: string;
let vmId: string;
let linkId: string;
let control: BrowserControl;
const browsers: Browser[] = [];

const api = v8Caller(() => engine.url, () => key);
const sessionStatus = async () => (await api(`/vm/data?id=${vmId}`)).data?.[0]?.status as string | undefined;
const endpoint = async (id = vmId) => (await api(`/vm/automation?id=${id}`)) as { status: string; browserWSEndpoint: string; expires: string; message?: string };

async function connect(): Promise<Browser> {
  const answer = await endpoint();
  expect(answer.status).toBe('ok');
  const browser = await chromium.connectOverCDP(answer.browserWSEndpoint, { timeout: 20_000 });
  browsers.push(browser);
  return browser;
}

beforeAll(async () => {
  fixture = await startEngine({ name: 'program', site: ORDER_PAGE, config: { automation: { tokenSeconds: TOKEN_SECONDS } } });
  ({ engine, account: { key }, site: { origin } } = fixture);
  const created = await api('/vm/create', { browser: 'chromium', url: `${origin}/` });
  expect(created.status).toBe('ok');
  vmId = created.vmId;
  linkId = shareLinkOf(created.shareUrl);
  expect(await waitFor(sessionStatus, (status) => status === 'running', 30_000)).toBe('running');
  control = engine.runtime.get((await engine.store.session(vmId))!.runtime_id!)!.control!;
}, 90_000);

afterAll(async () => {
  for (const browser of browsers) await browser.close().catch(() => undefined);
  await fixture?.close();
});

describe('GET /v8/vm/automation', () => {
  it('answers a DevTools address for the running session, with a short-lived token and never the key', async () => {
    const answer = await endpoint();
    expect(answer.status).toBe('ok');
    expect(answer.browserWSEndpoint).toMatch(new RegExp(`^${engine.url.replace(/^http/, 'ws')}/automation/${vmId}\\.\\d+\\.[A-Za-z0-9_-]{43}$`));
    expect(answer.browserWSEndpoint).not.toContain(key);
    const expires = Date.parse(answer.expires);
    expect(expires - Date.now()).toBeGreaterThan(0);
    expect(expires - Date.now()).toBeLessThanOrEqual(TOKEN_SECONDS * 1000);
    // The customer's server asks through the service client.
    const viaClient = await createServiceClient({ baseUrl: engine.url, apiKey: key }).automation(vmId);
    expect(viaClient.browserWSEndpoint).toContain(`/automation/${vmId}.`);
    const v7 = await (await fetch(`${engine.url}/v7/vm/automation?id=${vmId}`, { headers: { authorization: `Bearer ${key}` } })).json();
    expect(v7.status).toBe('ok');
  });

  it('refuses a missing or unknown id, another account\'s session, and a plan without programmatic access', async () => {
    expect(await endpoint('')).toMatchObject({ status: 'denied', message: expect.stringContaining('id: send the session') });
    expect(await endpoint('f'.repeat(32))).toEqual({ status: 'denied', message: 'id: unknown session' });
    const other = (await engine.accounts.create({ contact: 'other@example.com', plans: ['pro'] })).apiKey.key;
    const asOther = await (await fetch(`${engine.url}/v8/vm/automation?id=${vmId}`, { headers: { authorization: `Bearer ${other}` } })).json();
    expect(asOther).toEqual({ status: 'denied', message: 'id: unknown session' });
    const watcher = (await engine.accounts.create({ contact: 'viewer@example.com', plans: ['viewer'] })).apiKey.key;
    const noApi = await (await fetch(`${engine.url}/v8/vm/automation?id=${vmId}`, { headers: { authorization: `Bearer ${watcher}` } })).json();
    expect(noApi.status).toBe('upgrade');
  });
});

describe('a program on the session', () => {
  it('fills a form, clicks, reads the result and takes a screenshot, while a viewer sees it happen', async () => {
    const [x, y] = WATCHED_POINT;
    const watching = await connectRfb(`${engine.url.replace(/^http/, 'ws')}/share/${linkId}/rfb`);
    try {
      expect(await watching.waitForPixel(x, y, YELLOW)).toEqual(YELLOW);
      const browser = await connect();
      const page = browser.contexts()[0]!.pages().find((p) => p.url().startsWith(origin))!;
      expect(page).toBeDefined();
      await page.fill('#name', 'Ada');
      await page.click('#send');
      await expect.poll(() => page.textContent('#result')).toBe('Thanks, Ada');
      // The person watching sees the page the program changed, on the session's display.
      expect(await watching.waitForPixel(x, y, BLUE)).toEqual(BLUE);
      const png = await page.screenshot();
      expect(png.subarray(1, 4).toString()).toBe('PNG');
      expect(await sessionStatus()).toBe('running');
    } finally {
      watching.close();
    }
  }, 60_000);

  it('is refused, with a DevTools error naming the method, whatever reaches outside the session', async () => {
    const browser = browsers[0] ?? (await connect());
    const cdp = await browser.newBrowserCDPSession();
    const page = browser.contexts()[0]!.pages()[0]!;
    const pageCdp = await page.context().newCDPSession(page);
    const refused = async (session: typeof cdp, method: string, params: Record<string, unknown> = {}) => {
      await expect((session.send as (m: string, p: unknown) => Promise<unknown>)(method, params)).rejects.toThrow(`${method} is not allowed in remote-browser-kit sessions`);
    };
    await refused(cdp, 'Browser.close');
    await refused(cdp, 'Browser.crash');
    await refused(cdp, 'Browser.crashGpuProcess');
    await refused(cdp, 'SystemInfo.getInfo');
    await refused(cdp, 'SystemInfo.getProcessInfo');
    await refused(cdp, 'Tethering.bind', { port: 9222 });
    await refused(cdp, 'Target.createBrowserContext', { proxyServer: 'http://10.0.0.1:3128' });
    await refused(cdp, 'Target.createBrowserContext', { proxyBypassList: '<-loopback>' });
    await refused(cdp, 'Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: '/etc' });
    await refused(pageCdp, 'Page.setDownloadBehavior', { behavior: 'allow', downloadPath: '/session/downloads/../../tmp' });
    await refused(cdp, 'Target.exposeDevToolsProtocol', { targetId: 'x' });
    await refused(cdp, 'Target.sendMessageToTarget', { message: '{}', sessionId: 'x' });
    await refused(cdp, 'Target.attachToTarget', { targetId: 'x', flatten: false });
    await refused(pageCdp, 'DOM.setFileInputFiles', { files: ['/etc/passwd'], backendNodeId: 1 });
    await refused(cdp, 'Extensions.loadUnpacked', { path: '/tmp' });
    await refused(cdp, 'Browser.executeBrowserCommand', { commandId: 'openTabSearch' });
    await refused(cdp, 'Browser.getBrowserCommandLine');
    await refused(cdp, 'Target.openDevTools', { targetId: 'x' });
    await refused(cdp, 'Target.setRemoteLocations', { locations: [{ host: '10.0.0.1', port: 9222 }] });
    await refused(cdp, 'Memory.getDOMCounters');
    await refused(cdp, 'PWA.install', { manifestId: 'https://example.com/' });
    await refused(cdp, 'Cast.enable');
    await refused(pageCdp, 'Page.crash');
    await refused(cdp, 'Tracing.start', { transferMode: 'ReturnAsStream' });
    await refused(pageCdp, 'Tracing.start');
    await refused(cdp, 'Tracing.requestMemoryDump');
    await refused(pageCdp, 'DOM.setFileInputFiles', { files: ['/session/uploads/../../etc/passwd'], backendNodeId: 1 });
    // Allowed in the session's folders; and a refusal changes nothing: the connection goes on.
    await expect(cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: '/session/downloads' })).resolves.toBeDefined();
    expect((await cdp.send('Browser.getVersion')).product).toMatch(/Chrome/);
    // The error comes back on the page's own session, so the page's client reads it too.
    expect(await page.evaluate('1 + 1')).toBe(2);
  }, 60_000);

  it('cannot open what a person cannot: local files, browser pages, private addresses', async () => {
    const browser = browsers[0] ?? (await connect());
    const page = await browser.contexts()[0]!.newPage();
    await expect(page.goto('file:///etc/passwd')).rejects.toThrow(/not allowed in remote-browser-kit sessions/);
    await expect(page.goto('chrome://settings')).rejects.toThrow(/not allowed in remote-browser-kit sessions/);
    // The egress route refuses a private address as it does for a person: the program reads only the refusal.
    const answer = await page.goto('http://10.255.255.1/', { timeout: 20_000 });
    expect(answer?.status()).toBe(403);
    expect(await page.textContent('body')).toContain('10.255.255.1 is a private address and is not allowed');
    // A page that sends itself to a file is stopped by the engine's guard, as for a person.
    await page.goto(`${origin}/`);
    await page.evaluate("setTimeout(() => { location.href = 'file:///etc/passwd' }, 0)");
    await page.waitForTimeout(1000);
    expect(await page.content()).not.toContain('root:');
    await page.close();
  }, 60_000);

  it('runs no script in chrome:// pages reached from the new-tab page or through history: they are blocked before they commit, the session runs on', async () => {
    const browser = browsers[0] ?? (await connect());
    const page = await browser.contexts()[0]!.newPage();
    const cdp = await page.context().newCDPSession(page);
    // A script for every new document reports where it ran and whether the page had the browser's
    // private APIs (passwords, settings, extensions): what the attack of issue 32 read.
    const ran: Array<{ href: string; privileged: boolean }> = [];
    cdp.on('Runtime.bindingCalled', ({ name, payload }) => {
      if (name === 'rbkScriptRan') ran.push(JSON.parse(payload));
    });
    // Scripts for new documents run only for a session with the Page domain on.
    await cdp.send('Page.enable');
    await cdp.send('Runtime.enable');
    await cdp.send('Runtime.addBinding', { name: 'rbkScriptRan' });
    await cdp.send('Page.addScriptToEvaluateOnNewDocument', {
      source: 'rbkScriptRan(JSON.stringify({ href: location.href, privileged: Boolean(window.chrome && (chrome.settingsPrivate || chrome.passwordsPrivate || chrome.autofillPrivate || chrome.developerPrivate || chrome.management)) }))',
    });
    // The person's view: the engine's "not allowed" page in place of the browser page, as before.
    const sentAway = async () => {
      await expect.poll(() => page.url(), { timeout: 15_000 }).toMatch(/^data:/);
      await expect.poll(() => page.title().catch(() => ''), { timeout: 15_000 }).toBe('Not allowed');
    };
    for (const address of ['chrome://settings/passwords', 'chrome://extensions/']) {
      // The new-tab page is allowed; from it, a page may send itself to another browser page.
      await cdp.send('Page.navigate', { url: 'chrome://newtab/' });
      await expect.poll(() => ran.some((where) => where.href.startsWith('chrome://new-tab-page')), { timeout: 15_000 }).toBe(true);
      await cdp.send('Runtime.evaluate', { expression: `location.href = ${JSON.stringify(address)}` });
      await sentAway();
    }
    // Back through the tab's history to the refused entry.
    await page.goto(`${origin}/`);
    const { entries } = await cdp.send('Page.getNavigationHistory');
    const refusedEntry = entries.find((entry) => entry.url.startsWith('chrome://settings'));
    expect(refusedEntry, 'the tab\'s history holds the refused address').toBeDefined();
    await cdp.send('Page.navigateToHistoryEntry', { entryId: refusedEntry!.id });
    await sentAway();
    expect(ran.filter((where) => where.privileged || /^chrome:\/\/(settings|extensions)/.test(where.href))).toEqual([]);
    // The script did run where a program may run it: nothing above passes because nothing ran.
    expect(ran.some((where) => where.href.startsWith(origin))).toBe(true);
    expect(await sessionStatus()).toBe('running');
    expect(control.lostReason).toBeNull();
    await page.close();
  }, 90_000);

  it('drops on a page only files the session\'s folders hold: /etc/hostname is refused, an upload is read', async () => {
    const uploaded = await (await fetch(`${engine.url}/v8/vm/files/upload?${new URLSearchParams({ id: vmId, name: 'dropped.txt' })}`, {
      method: 'POST', headers: { authorization: `Bearer ${key}` }, body: 'dropped from the uploads folder',
    })).json();
    expect(uploaded.status).toBe('ok');
    const browser = browsers[0] ?? (await connect());
    const page = await browser.contexts()[0]!.newPage();
    await page.goto(`${origin}/`);
    // The page reads the first file dropped on it.
    await page.evaluate(`window.dropped = new Promise((resolve) => {
      document.addEventListener('dragover', (event) => event.preventDefault());
      document.addEventListener('drop', (event) => {
        event.preventDefault();
        const file = event.dataTransfer.files[0];
        if (file) file.text().then((text) => resolve(file.name + ': ' + text)); else resolve('no file');
      });
    }), undefined`);
    const cdp = await page.context().newCDPSession(page);
    const drag = (type: 'dragEnter' | 'dragOver' | 'drop', files: string[]) =>
      cdp.send('Input.dispatchDragEvent', { type, x: 300, y: 300, data: { items: [], files, dragOperationsMask: 1 } });
    for (const files of [['/etc/hostname'], ['/session/.Xauthority'], ['/session/uploads/../profile/Local State']]) {
      await expect(drag('dragEnter', files)).rejects.toThrow('Input.dispatchDragEvent is not allowed in remote-browser-kit sessions: a drag carries files from the session\'s folders');
      await expect(drag('drop', files)).rejects.toThrow('Input.dispatchDragEvent is not allowed in remote-browser-kit sessions');
    }
    const files = ['/session/uploads/dropped.txt'];
    await drag('dragEnter', files);
    await drag('dragOver', files);
    await drag('drop', files);
    expect(await page.evaluate('window.dropped')).toBe('dropped.txt: dropped from the uploads folder');
    await page.close();
  }, 60_000);

  it('cannot turn the engine\'s refusals off: its own interception and its browser-level Fetch end only its own', async () => {
    const browser = browsers[0] ?? (await connect());
    const cdp = await browser.newBrowserCDPSession();
    await cdp.send('Fetch.disable');
    const page = await browser.contexts()[0]!.newPage();
    await page.goto(`${origin}/`);
    // The program intercepts every request of its page and lets each one go on.
    const seen: string[] = [];
    await page.route('**/*', (route) => {
      seen.push(route.request().url());
      return route.continue();
    });
    await page.evaluate("setTimeout(() => { location.href = 'file:///etc/passwd' }, 0)");
    await page.waitForTimeout(1500);
    expect(await page.content()).not.toContain('root:');
    // Its interception still works for what a session may open.
    await page.goto(`${origin}/routed`);
    expect(seen).toContain(`${origin}/routed`);
    await page.close();
  }, 60_000);

  it('never sees the engine\'s own DevTools connection, and cannot reach it', async () => {
    const guard = (await control.client.send('Target.getTargetInfo' as never)) as unknown as { targetInfo: { targetId: string } };
    const guardId = guard.targetInfo.targetId;
    const browser = browsers[0] ?? (await connect());
    const cdp = await browser.newBrowserCDPSession();
    const shown: Array<{ targetId: string; type: string }> = [];
    cdp.on('Target.targetCreated', ({ targetInfo }) => shown.push(targetInfo));
    cdp.on('Target.attachedToTarget', ({ targetInfo }) => shown.push(targetInfo));
    // Discovery and auto-attach of every kind of target, browser-level connections included (as Puppeteer asks).
    await cdp.send('Target.setDiscoverTargets', { discover: true, filter: [{}] });
    await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: true, filter: [{ type: 'browser' }] });
    const { targetInfos } = await cdp.send('Target.getTargets', { filter: [{}] });
    await expect.poll(() => shown.filter((info) => info.type === 'page').length).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The session's pages and the program's own connection show; the guard's never does.
    expect(shown.some((info) => info.type === 'browser')).toBe(true);
    expect([...shown, ...targetInfos].map((info) => info.targetId)).not.toContain(guardId);
    for (const [method, params] of [
      ['Target.attachToTarget', { targetId: guardId, flatten: true }],
      ['Target.getTargetInfo', { targetId: guardId }],
      ['Target.closeTarget', { targetId: guardId }],
      ['Target.activateTarget', { targetId: guardId }],
    ] as const) {
      await expect((cdp.send as (m: string, p: unknown) => Promise<unknown>)(method, params)).rejects.toThrow(`${method} is not allowed in remote-browser-kit sessions: that target is the engine's own DevTools connection`);
    }
    // The guard's connection is untouched and still armed.
    expect(control.lostReason).toBeNull();
  }, 60_000);
});

describe('the automation address', () => {
  it('is refused for another session, and once it expires', async () => {
    const { browserWSEndpoint } = await endpoint();
    const forged = browserWSEndpoint.replace(vmId, 'a'.repeat(32));
    expect(await upgradeStatus(forged)).toBe(401);
    expect(await upgradeStatus(browserWSEndpoint.replace(/(\/automation\/\w+)\.\d+\./, `$1.${Date.now() + 3_600_000}.`))).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, TOKEN_SECONDS * 1000 + 200));
    expect(await upgradeStatus(browserWSEndpoint)).toBe(401);
  }, 30_000);

  it('is refused once the session ended, and the open connection is closed then', async () => {
    const browser = await connect();
    const { browserWSEndpoint } = await endpoint();
    const disconnected = new Promise<void>((resolve) => browser.on('disconnected', () => resolve()));
    expect((await api('/vm/remove', { id: vmId })).status).toBe('ok');
    await disconnected;
    expect(await upgradeStatus(browserWSEndpoint)).toBe(410);
    expect(await endpoint()).toMatchObject({ status: 'denied', message: expect.stringMatching(/^id: the session is \w+; a program can drive only a running session$/) });
  }, 60_000);
});
