// The demo page end to end in Debian Chromium: launch, see it running in the embedded viewer,
// open the viewer, end it; and the API key nowhere the browser can see: no response, no request
// it sent, no address it opened or connected to, no served file, no storage of the page.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo, type Demo } from '../../src/demo/server.js';

let demo: Demo;
let dir: string;
let browser: Browser;
const printed: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rbk-demo-'));
  // What the terminal shows, in order: the demo's own lines and the engine's log lines.
  const logDestination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      printed.push(...chunk.toString('utf8').split('\n').filter(Boolean).map((line) => `log: ${line}`));
      done();
    },
  });
  demo = await startDemo({ dataDir: dir, port: 0, log: (line) => printed.push(line), logDestination });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
});

afterAll(async () => {
  await browser?.close();
  await demo?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the demo', () => {
  it("prints where to open it first, and the development key, once; the engine's log follows", async () => {
    expect(printed[0]).toBe(`remote-browser-kit demo: open ${demo.url}/`);
    // The engine's start-up lines were held until the address was printed; into no terminal, JSON.
    const firstLog = printed.findIndex((line) => line.startsWith('log: '));
    expect(printed.slice(0, firstLog).some((line) => line.startsWith('  development API key'))).toBe(true);
    expect(printed.slice(firstLog).every((line) => line.startsWith('log: '))).toBe(true);
    expect(printed.map((line) => line.startsWith('log: ') && (JSON.parse(line.slice(5)) as { msg: string }).msg)).toContain('engine listening');
    expect(demo.newApiKey).toMatch(/^rbk_/);
    expect(printed.join('\n')).toContain(demo.newApiKey);
    // A second start on the same data directory reuses the account and prints no key.
    const again: string[] = [];
    await demo.close();
    demo = await startDemo({ dataDir: dir, port: 0, log: (line) => again.push(line) });
    expect(demo.newApiKey).toBeNull();
    expect(again.join('\n')).not.toContain('rbk_');
  });

  it('launches, shows the session running in the embedded viewer, opens the viewer, ends; the key stays on the server', async () => {
    const key = JSON.parse(await readFile(join(dir, 'demo-credentials.json'), 'utf8')).apiKey as string;
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const seen: string[] = [];
    context.on('response', async (response) => {
      const headers = JSON.stringify(await response.allHeaders());
      const body = await response.body().catch(() => Buffer.alloc(0));
      seen.push(`${response.url()} ${headers} ${body.toString('latin1')}`);
    });
    // What the browser sent and where it went: every request (address, headers, body), every
    // WebSocket's address and every address a page or frame showed.
    const sent: string[] = [];
    const addresses: string[] = [];
    context.on('request', async (request) => {
      sent.push(`${request.method()} ${request.url()} ${JSON.stringify(await request.allHeaders().catch(() => ({})))} ${request.postData() ?? ''}`);
    });
    context.on('page', (opened) => {
      opened.on('framenavigated', (frame) => addresses.push(frame.url()));
      opened.on('websocket', (socket) => addresses.push(socket.url()));
    });
    const page = await context.newPage();
    await page.goto(`${demo.url}/`);
    const launch = page.getByRole('button', { name: 'Start session' });
    await expect.poll(() => launch.isEnabled(), { timeout: 10_000 }).toBe(true);
    await launch.click();
    await expect.poll(() => page.getByText('Chromium is running').isVisible(), { timeout: 30_000 }).toBe(true);
    // The embedded viewer connects and draws the remote browser.
    await expect.poll(() => page.locator('.rbk-viewer__live').getAttribute('data-connection'), { timeout: 15_000 }).toBe('connected');
    await expect.poll(() => page.getByRole('meter', { name: /Running sessions/ }).getAttribute('aria-valuenow'), { timeout: 10_000 }).toBe('1');

    const [viewer] = await Promise.all([context.waitForEvent('page'), page.getByRole('button', { name: 'Open viewer' }).click()]);
    await expect.poll(() => viewer.locator('.rbk-viewer__live').getAttribute('data-connection'), { timeout: 15_000 }).toBe('connected');

    await page.getByRole('button', { name: 'End session' }).click();
    await expect.poll(() => page.getByText('The session has ended').first().isVisible(), { timeout: 15_000 }).toBe(true);
    await expect.poll(() => viewer.getByRole('heading', { name: /This session has ended|This link is no longer valid/ }).isVisible(), { timeout: 15_000 }).toBe(true);

    // Storage of the pages the person used.
    for (const p of [page, viewer]) {
      const stored = await p.evaluate(async () => JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie, databases: (await indexedDB.databases?.())?.map((d) => d.name) ?? [] }));
      expect(stored).not.toContain(key);
    }
    expect(JSON.stringify(await context.cookies())).not.toContain(key);
    expect(JSON.stringify(await context.storageState())).not.toContain(key);
    // Every response the browser received: status, headers and body.
    expect(seen.length).toBeGreaterThan(10);
    for (const entry of seen) expect(entry).not.toContain(key);
    // Every request it sent, and every address it opened: the share link and the viewer's
    // WebSocket among them, and none carries the key.
    expect(sent.some((entry) => entry.startsWith('POST ') && entry.includes('/api/remote-browser/sessions'))).toBe(true);
    addresses.push(page.url(), viewer.url());
    expect(addresses.some((address) => /\/s\?[A-Za-z0-9_-]+$/.test(address))).toBe(true);
    expect(addresses.some((address) => address.startsWith('ws') && new URL(address).pathname.endsWith('/rfb'))).toBe(true);
    for (const entry of [...sent, ...addresses]) expect(entry).not.toContain(key);
    await context.close();
  });

  it('serves no file that holds the key', async () => {
    const key = JSON.parse(await readFile(join(dir, 'demo-credentials.json'), 'utf8')).apiKey as string;
    for (const folder of ['dist/demo-page', 'dist/demo-page/assets', 'dist/viewer-site', 'dist/viewer-site/assets']) {
      for (const name of await readdir(folder).catch(() => [] as string[])) {
        if (!name.includes('.')) continue;
        const served = await fetch(`${folder.includes('viewer-site') ? demo.engine.url : demo.url}${folder.replace(/^dist\/(demo-page|viewer-site)/, '')}/${name === 'index.html' && folder.endsWith('viewer-site') ? '' : name}`);
        expect((await served.text()).includes(key)).toBe(false);
      }
    }
  });
});
