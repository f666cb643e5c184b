// Programs driving a real engine's confined Firefox ESR session over WebDriver BiDi (issue 45):
// the address the API answers (webDriverBiDiEndpoint), a raw BiDi client (the `ws` package) that
// opens a session, lists the tabs, opens the test site and reads its title; every refused command
// answered with a BiDi error naming it while the connection goes on; a session of each program's
// own on the browser's one (decisions.md 169) and the per-address cap held; the program seen among the
// session's people, driving under `control: "one"`, handing over to a person (its input then
// refused) and taking back; a person typing about:debugging and the other developer pages into the
// address bar and refused, while a program still drives (decisions.md 155); Puppeteer connecting
// with `protocol: 'webDriverBiDi'`: goto, type, click, evaluate, a new page, its screenshot and a
// download the files API lists; and a Firefox ESR
// session created without `automation: true`, whose address is denied naming the field and whose
// pages read navigator.webdriver as false (no remote agent; decisions.md 143).
import type { IncomingMessage, ServerResponse } from 'node:http';
import puppeteer from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { createServiceClient } from '../../src/server/service-client.js';
import { ORDER_PAGE, shareLinkOf } from '../helpers/automation.js';
import { bidiProgram, type BiDiProgram } from '../helpers/bidi-program.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { connectPeople, type PeopleClient } from '../helpers/people-client.js';
import { visitByTyping, waitFor, x } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';

/** Programs per session (config): the cap a third connection meets. */
const CAP = 2;

let fixture: EngineFixture;
let engine: Engine;
let origin: string;
let key: string;
let vmId: string;
let linkId: string;
const closers: Array<() => unknown> = [];
/** What pages at `/webdriver` read as navigator.webdriver, in the order they reported it. */
const webdriverReports: string[] = [];

/** A file the site hands out as an attachment, and a page that links to it. */
const REPORT = 'month,total\nMarch,42\n';
const DOWNLOAD_PAGE = '<!doctype html><title>Download</title><a id="get" href="/report.csv">Report</a>';

/** A page that tells the site what it reads as navigator.webdriver. */
const WEBDRIVER_PAGE = `<!doctype html><title>webdriver</title><script>fetch('/report?webdriver=' + String(navigator.webdriver))</script>`;

function site(request: IncomingMessage, response: ServerResponse): void {
  const url = new URL(request.url ?? '/', 'http://site');
  if (url.pathname === '/report') webdriverReports.push(url.searchParams.get('webdriver') ?? '');
  if (url.pathname === '/favicon.ico') return void response.writeHead(404).end();
  if (url.pathname === '/report.csv') return void response.writeHead(200, { 'Content-Type': 'text/csv', 'Content-Disposition': 'attachment; filename="report.csv"' }).end(REPORT);
  if (url.pathname === '/download') return void response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(DOWNLOAD_PAGE);
  response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(url.pathname === '/webdriver' ? WEBDRIVER_PAGE : url.pathname === '/report' ? '' : ORDER_PAGE);
}

const api = v8Caller(() => engine.url, () => key);
const sessionStatus = async () => (await api(`/vm/data?id=${vmId}`)).data?.[0]?.status as string | undefined;

async function endpoint(): Promise<string> {
  const answer = await api(`/vm/automation?id=${vmId}`);
  expect(answer.status).toBe('ok');
  return answer.webDriverBiDiEndpoint as string;
}

/** A raw BiDi client on a fresh address of the session. */
async function program(): Promise<BiDiProgram> {
  return bidiProgram(await endpoint(), closers);
}

async function topContext(bidi: BiDiProgram): Promise<string> {
  const tree = await bidi.call('browsingContext.getTree', { maxDepth: 0 });
  expect(tree.type).toBe('success');
  return tree.result.contexts[0].context as string;
}

beforeAll(async () => {
  fixture = await startEngine({ name: 'bidi', site, config: { automation: { programsPerSession: CAP } } });
  ({ engine, account: { key }, site: { origin } } = fixture);
  const created = await api('/vm/create', { browser: 'firefox-esr', url: `${origin}/`, control: 'one', automation: true });
  expect(created.status).toBe('ok');
  vmId = created.vmId;
  linkId = shareLinkOf(created.shareUrl);
  expect(await waitFor(sessionStatus, (status) => status === 'running', 60_000)).toBe('running');
}, 120_000);

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

afterAll(async () => {
  await fixture?.close();
});

describe('a Firefox ESR session driven over WebDriver BiDi', () => {
  it('answers a WebDriver BiDi address, with a short-lived token and never the key', async () => {
    const answer = await api(`/vm/automation?id=${vmId}`);
    expect(answer).toEqual({ status: 'ok', webDriverBiDiEndpoint: expect.stringMatching(new RegExp(`^${engine.url.replace(/^http/, 'ws')}/automation/${vmId}\\.\\d+\\.[A-Za-z0-9_-]{43}$`)), expires: expect.any(String) });
    expect(answer.webDriverBiDiEndpoint).not.toContain(key);
    const viaClient = await createServiceClient({ baseUrl: engine.url, apiKey: key }).automation(vmId);
    expect(viaClient.webDriverBiDiEndpoint).toContain(`/automation/${vmId}.`);
    expect(viaClient.browserWSEndpoint).toBeUndefined();
  });

  it('opens a session, lists the tabs, opens the site and reads its title, seen among the people as the driver', async () => {
    const people = await connectPeople(`${engine.url.replace(/^http/, 'ws')}/share/${linkId}/people`);
    closers.push(() => people.close());
    const bidi = await program();
    const opened = await bidi.call('session.new', { capabilities: {} });
    expect(opened).toMatchObject({ type: 'success', result: { capabilities: { browserName: 'firefox' } } });
    const context = await topContext(bidi);
    expect(await bidi.call('browsingContext.navigate', { context, url: `${origin}/`, wait: 'complete' })).toMatchObject({ type: 'success' });
    const title = await bidi.call('script.evaluate', { expression: 'document.title', target: { context }, awaitPromise: false });
    expect(title).toMatchObject({ type: 'success', result: { type: 'success', result: { type: 'string', value: 'Order' } } });
    // The program is among the session's people, and drives (the session has one driver).
    const picture = await people.until((p) => p.driver?.kind === 'program');
    expect(picture.people.some((person) => person.kind === 'program')).toBe(true);
    bidi.socket.close();
    await people.until((p) => !p.people.some((person) => person.kind === 'program'));
  });

  it('refuses, with a BiDi error naming the command, what reaches outside the session, and the connection goes on', async () => {
    const bidi = await program();
    expect((await bidi.call('session.new', { capabilities: {} })).type).toBe('success');
    const context = await topContext(bidi);
    const refused: Array<[string, Record<string, unknown>, string]> = [
      ['browser.close', {}, 'POST /v8/vm/remove'],
      ['webExtension.install', { extensionData: { type: 'path', path: '/tmp/x.xpi' } }, 'extensions'],
      ['browser.createUserContext', { proxy: { proxyType: 'manual', httpProxy: '10.0.0.1:3128' } }, 'proxy of its own'],
      ['session.new', { capabilities: { alwaysMatch: { proxy: { proxyType: 'direct' } } } }, 'proxy of its own'],
      ['input.setFiles', { element: { sharedId: 'x' }, files: ['/etc/hostname'] }, '/etc/hostname'],
      ['browser.setDownloadBehavior', { downloadBehavior: { type: 'allowed', destinationFolder: '/tmp' }, userContexts: null }, 'downloads stay'],
      ['network.continueRequest', { request: 'x', url: 'file:///etc/passwd' }, 'http or https'],
      ['goog:cdp.sendCommand', { method: 'Browser.close', params: {} }, 'not on the list'],
      ...['file:///etc/passwd', 'about:config', 'about:preferences', 'about:addons', 'about:debugging', 'about:profiles', 'about:support']
        .map((url): [string, Record<string, unknown>, string] => ['browsingContext.navigate', { context, url }, `${url} is not an address a session opens`]),
    ];
    for (const [method, params, why] of refused) {
      const answer = await bidi.call(method, params);
      expect(answer, method).toMatchObject({ type: 'error', error: expect.stringMatching(/^(unsupported operation|invalid argument)$/) });
      expect(answer.message, method).toMatch(new RegExp(`^${method.replace(/\./g, '\\.')} is refused in remote-browser-kit sessions: `));
      expect(answer.message, method).toContain(why);
    }
    // Bad input: an error answer, and the connection goes on.
    expect(await bidi.send('{not json')).toMatchObject({ type: 'error', id: null, error: 'invalid argument' });
    expect(await bidi.send(JSON.stringify({ id: 'x', method: 'session.status' }))).toMatchObject({ type: 'error', id: null, error: 'invalid argument' });
    // The page is where it was, and the connection still answers.
    const url = await bidi.call('script.evaluate', { expression: 'location.href', target: { context }, awaitPromise: false });
    expect(url.result.result.value).toBe(`${origin}/`);
  });

  it('gives each program a session of its own on the browser\'s one, and holds the per-address cap', async () => {
    const first = await program();
    const opened = await first.call('session.new', { capabilities: {} });
    expect(opened).toMatchObject({ type: 'success', result: { capabilities: { browserName: 'firefox' } } });
    // Firefox holds one BiDi session; the node's hub gives the second program one of its own on it (decisions.md 169).
    const second = await program();
    const also = await second.call('session.new', { capabilities: {} });
    expect(also).toMatchObject({ type: 'success', result: { capabilities: opened.result.capabilities } });
    expect(also.result.sessionId).not.toBe(opened.result.sessionId);
    // The cap: a third connection is closed at once.
    const third = await program();
    expect(await third.closed).toBe(4002);
    // The first leaves; the second drives on, and a newcomer opens its session again.
    first.socket.close();
    await first.closed;
    const context = await topContext(second);
    expect(await second.call('browsingContext.navigate', { context, url: `${origin}/`, wait: 'complete' })).toMatchObject({ type: 'success' });
    const fourth = await program();
    expect(await waitFor(() => fourth.call('session.new', { capabilities: {} }), (answer) => answer.type === 'success', 15_000)).toMatchObject({ type: 'success' });
  });

  it('hands control to a person and takes it back; its input is refused meanwhile', async () => {
    const people = await connectPeople(`${engine.url.replace(/^http/, 'ws')}/share/${linkId}/people`);
    closers.push(() => people.close());
    const me = (await people.until((p) => p.people.some((person) => person.id === p.you))).you;
    const bidi = await program();
    expect((await bidi.call('session.new', { capabilities: {} })).type).toBe('success');
    const context = await topContext(bidi);
    await people.until((p) => p.driver?.kind === 'program');
    expect((await bidi.call('remoteBrowserKit:control.get')).result).toMatchObject({ mode: 'one', drives: true });
    expect((await bidi.call('remoteBrowserKit:control.handOver', { to: me })).result).toMatchObject({ drives: false, driver: { id: me } });
    await people.until((p) => p.driver?.id === me);
    const keys = { context, actions: [{ type: 'key', id: 'keyboard', actions: [{ type: 'keyDown', value: 'a' }, { type: 'keyUp', value: 'a' }] }] };
    expect(await bidi.call('input.performActions', keys)).toMatchObject({
      type: 'error', error: 'unsupported operation', message: expect.stringMatching(/^input\.performActions is refused in remote-browser-kit sessions: a person drives/),
    });
    expect((await bidi.call('remoteBrowserKit:control.take')).result).toMatchObject({ drives: true });
    await waitFor(() => bidi.events, (events) => events.some((event) => event.method === 'remoteBrowserKit:control.changed' && event.params.drives === true));
    expect(await bidi.call('input.performActions', keys)).toMatchObject({ type: 'success' });
  });

  it('refuses the developer pages a person types into the address bar, while a program still drives', async () => {
    const session = engine.runtime.get((await engine.store.session(vmId))!.runtime_id!)!;
    const title = () => x(session, 'xdotool', ['search', '--onlyvisible', '--classname', 'Navigator', 'getwindowname']).catch(() => '');
    const blocked = (value: string) => /^Blocked Page/.test(value);
    for (const address of ['about:debugging', 'about:devtools-toolbox', 'about:profiling', 'chrome://devtools/content/aboutdebugging/index.html', 'about:config']) {
      // From the site's page, so that each refusal is a page of its own.
      expect(await visitByTyping(session, `${origin}/`, async () => (await title()).includes('Order')), 'back on the site').toBe(true);
      // Typed as a person would; settled once the site's page is gone (refused, or opened).
      expect(await visitByTyping(session, address, async () => !(await title()).includes('Order')), `${address} typed`).toBe(true);
      expect(await waitFor(title, blocked, 15_000), address).toMatch(/^Blocked Page/);
    }
    // The agent runs all the same: a program opens a session and drives.
    const bidi = await program();
    expect((await bidi.call('session.new', { capabilities: {} })).type).toBe('success');
    const context = await topContext(bidi);
    expect(await bidi.call('browsingContext.navigate', { context, url: `${origin}/`, wait: 'complete' })).toMatchObject({ type: 'success' });
    expect(await waitFor(title, (value) => value.includes('Order'))).toContain('Order');
  }, 240_000);

  it('is driven by Puppeteer with protocol webDriverBiDi', async () => {
    const browser = await puppeteer.connect({ browserWSEndpoint: await endpoint(), protocol: 'webDriverBiDi', defaultViewport: null, protocolTimeout: 20_000 });
    closers.push(() => browser.disconnect());
    const [page] = await browser.pages();
    await page!.goto(`${origin}/`);
    await page!.type('#name', 'Ada');
    await page!.click('#send');
    expect(await page!.$eval('#result', (element) => element.textContent)).toBe('Thanks, Ada');
    expect(await page!.title()).toBe('Order');
    // Created with automation: true, its remote agent runs, and pages can tell (decisions.md 143).
    expect(await page!.evaluate(() => navigator.webdriver)).toBe(true);
  });

  it('opens a new page, takes its screenshot and downloads a file into the session\'s downloads, where the files API finds it', async () => {
    const browser = await puppeteer.connect({ browserWSEndpoint: await endpoint(), protocol: 'webDriverBiDi', defaultViewport: null, protocolTimeout: 20_000 });
    closers.push(() => browser.disconnect());
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    expect(await page.title()).toBe('Order');
    // The screenshot is the page as the session's display shows it: a PNG of the page's size.
    const png = Buffer.from(await page.screenshot());
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    const size = await page.evaluate(() => [Math.round(innerWidth * devicePixelRatio), Math.round(innerHeight * devicePixelRatio)]);
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual(size);
    // A link to an attachment: the browser saves it into the session's downloads (its policies).
    await page.goto(`${origin}/download`);
    await page.click('#get');
    const listed = await waitFor(async () => (await api(`/vm/files?id=${vmId}`)).files?.find((file: { name: string }) => file.name === 'report.csv'), (file) => file?.state === 'complete', 30_000);
    expect(listed).toMatchObject({ kind: 'download', size: Buffer.byteLength(REPORT), state: 'complete' });
    const fetched = await fetch(`${engine.url}/v8/vm/files/download?${new URLSearchParams({ id: vmId, name: 'report.csv' })}`, { headers: { authorization: `Bearer ${key}` } });
    expect(await fetched.text()).toBe(REPORT);
    await page.close();
  }, 90_000);

  it('denies the address of a Firefox ESR session created without automation: true, naming the field, and its pages read navigator.webdriver as false', async () => {
    const created = await api('/vm/create', { browser: 'firefox-esr', url: `${origin}/webdriver` });
    expect(created.status).toBe('ok');
    const plainId = created.vmId as string;
    expect(await waitFor(async () => (await api(`/vm/data?id=${plainId}`)).data?.[0]?.status, (status) => status === 'running', 60_000)).toBe('running');
    const address = await api(`/vm/automation?id=${plainId}`);
    expect(address).toMatchObject({ status: 'denied', message: expect.stringContaining('create the session with automation: true') });
    expect(address.webDriverBiDiEndpoint).toBeUndefined();
    // The page itself tells the site what it reads: no remote agent, no webdriver flag.
    expect(await waitFor(async () => webdriverReports.length, (count) => count > 0, 30_000)).toBeGreaterThan(0);
    expect(webdriverReports).toEqual(['false']);
    expect((await api('/vm/remove', { id: plainId })).status).toBe('ok');
  }, 90_000);
});
