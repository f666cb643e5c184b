// Programs driving a session through a node that does not run it (issue 24): two engine nodes
// (`remote-browser-kit serve` processes) on one throwaway Postgres. The other node answers the
// automation address with its own host; Playwright connects there, the connection crosses the
// signed node link, and the node that runs the session applies the policy: the program completes
// the small flow a viewer (also on the other node) sees happen, its refused methods are refused,
// and removing the session through the other node closes the program's connection. A Firefox ESR
// session the same way over WebDriver BiDi (issue 45): a refusal as a BiDi error, Puppeteer with
// `protocol: 'webDriverBiDi'` filling the form, and a raw BiDi connection closed (4000) on removal.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { chromium, type Browser } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, PLANS, TEST_CLUSTER_SECRET, createAccount, makeWorkspace, removeWorkspace, startEngine, testConfig, waitForStatus, type EngineProcess, type Workspace } from '../api/harness.js';
import { BLUE, ORDER_PAGE, WATCHED_POINT, YELLOW, shareLinkOf } from '../helpers/automation.js';
import { testDatabase } from '../helpers/postgres.js';
import { connectRfb } from '../helpers/rfb-client.js';

const NODE_IDS = ['node-a', 'node-b'] as const;
const [X, Y] = WATCHED_POINT;

let sql: pg.Client;
let site: Server;
let origin: string;
const workspaces: Workspace[] = [];
const nodes = new Map<string, EngineProcess>();
let program: Browser | undefined;

beforeAll(async () => {
  const database = await testDatabase();
  sql = new pg.Client({ connectionString: database });
  await sql.connect();
  site = createServer((request, response) => response.writeHead(request.url === '/favicon.ico' ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' }).end(ORDER_PAGE));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  for (const id of NODE_IDS) {
    // No shareBase: each node answers addresses on its own host, as a node behind no balancer does.
    const workspace = await makeWorkspace({ ...testConfig({ shareBase: undefined }), database, cluster: { secret: TEST_CLUSTER_SECRET }, node: { id, capacity: 2 } });
    workspaces.push(workspace);
    // One after another: the first node makes the schema, the other finds it.
    nodes.set(id, await startEngine({ workspace }));
  }
}, 120_000);

afterAll(async () => {
  await program?.close().catch(() => undefined);
  await Promise.all([...nodes.values()].map((node) => node.stop()));
  for (const workspace of workspaces) await removeWorkspace(workspace).catch(() => undefined);
  await sql?.end();
  await new Promise((resolve) => site?.close(resolve));
}, 60_000);

describe('a program on a cluster', () => {
  it('connects through a node that does not run the session, drives it while a viewer there watches, and is closed when the session is removed there', async () => {
    const account = await createAccount(workspaces[0]!, [PLANS.unlimited]);
    const created = await new Api(nodes.get('node-a')!.url, account.key).create({ browser: 'chromium', url: `${origin}/` });
    expect(created.json.status).toBe('ok');
    const vmId = created.json.vmId as string;
    const owner = (await sql.query('SELECT node_id FROM sessions WHERE id = $1', [vmId])).rows[0]!.node_id as string;
    const other = nodes.get(NODE_IDS.find((id) => id !== owner)!)!;
    const api = new Api(other.url, account.key);
    expect(await waitForStatus(api, vmId, ['running'], 40_000)).toBe('running');

    // The other node answers an address on its own host.
    const answer = await api.get(`/v8/vm/automation?id=${vmId}`);
    expect(answer.json.status).toBe('ok');
    expect(answer.json.browserWSEndpoint).toMatch(new RegExp(`^${other.url.replace(/^http/, 'ws')}/automation/${vmId}\\.`));
    const watching = await connectRfb(`${other.url.replace(/^http/, 'ws')}/share/${shareLinkOf(created.json.shareUrl)}/rfb`);
    try {
      expect(await watching.waitForPixel(X, Y, YELLOW)).toEqual(YELLOW);
      program = await chromium.connectOverCDP(answer.json.browserWSEndpoint, { timeout: 20_000 });
      const page = program.contexts()[0]!.pages().find((p) => p.url().startsWith(origin))!;
      expect(page).toBeDefined();
      await page.fill('#name', 'Lin');
      await page.click('#send');
      await expect.poll(() => page.textContent('#result')).toBe('Thanks, Lin');
      expect(await watching.waitForPixel(X, Y, BLUE)).toEqual(BLUE);
      // The node that runs the session applies the policy, whichever node the program reached.
      const cdp = await program.newBrowserCDPSession();
      await expect(cdp.send('Browser.close')).rejects.toThrow('Browser.close is not allowed in remote-browser-kit sessions');
      await expect(page.goto('file:///etc/passwd')).rejects.toThrow(/not allowed in remote-browser-kit sessions/);
      expect(await page.evaluate('1 + 1')).toBe(2);

      // Removed through the node the program is connected to: its connection closes.
      const disconnected = new Promise<void>((resolve) => program!.on('disconnected', () => resolve()));
      expect((await api.remove(vmId)).json).toEqual({ status: 'ok' });
      await disconnected;
      expect(await waitForStatus(api, vmId, ['deleted'], 20_000)).toBe('deleted');
    } finally {
      watching.close();
    }
  }, 120_000);

  it('drives a Firefox ESR session over WebDriver BiDi through a node that does not run it, the policy applied where it runs', async () => {
    const account = await createAccount(workspaces[0]!, [PLANS.unlimited]);
    const created = await new Api(nodes.get('node-a')!.url, account.key).create({ browser: 'firefox-esr', url: `${origin}/`, automation: true });
    expect(created.json.status).toBe('ok');
    const vmId = created.json.vmId as string;
    const owner = (await sql.query('SELECT node_id FROM sessions WHERE id = $1', [vmId])).rows[0]!.node_id as string;
    const other = nodes.get(NODE_IDS.find((id) => id !== owner)!)!;
    const api = new Api(other.url, account.key);
    expect(await waitForStatus(api, vmId, ['running'], 60_000)).toBe('running');
    const answer = await api.get(`/v8/vm/automation?id=${vmId}`);
    expect(answer.json.webDriverBiDiEndpoint).toMatch(new RegExp(`^${other.url.replace(/^http/, 'ws')}/automation/${vmId}\\.`));

    // A refusal from the node that runs the session, as a BiDi error; the connection goes on.
    const raw = new WebSocket(answer.json.webDriverBiDiEndpoint as string, { perMessageDeflate: false });
    const rawClosed = new Promise<number>((resolve) => raw.once('close', (code) => resolve(code)));
    await new Promise((resolve, reject) => raw.once('open', resolve).once('error', reject));
    const said: Array<Record<string, any>> = [];
    raw.on('message', (data: Buffer) => said.push(JSON.parse(data.toString('utf8'))));
    raw.send(JSON.stringify({ id: 1, method: 'browser.close', params: {} }));
    raw.send(JSON.stringify({ id: 2, method: 'session.status', params: {} }));
    await expect.poll(() => said.length, { timeout: 15_000 }).toBe(2);
    expect(said[0]).toMatchObject({ type: 'error', id: 1, error: 'unsupported operation', message: expect.stringContaining('browser.close is refused in remote-browser-kit sessions') });
    expect(said[1]).toMatchObject({ type: 'success', id: 2 });

    const browser = await puppeteer.connect({ browserWSEndpoint: answer.json.webDriverBiDiEndpoint, protocol: 'webDriverBiDi', defaultViewport: null, protocolTimeout: 20_000 });
    try {
      const [page] = await browser.pages();
      await page!.goto(`${origin}/`);
      await page!.type('#name', 'Lin');
      await page!.click('#send');
      expect(await page!.$eval('#result', (element) => element.textContent)).toBe('Thanks, Lin');
      // Removed through the node the programs are connected to: their connections close.
      expect((await api.remove(vmId)).json).toEqual({ status: 'ok' });
      expect(await rawClosed).toBe(4000); // VIEWER_CLOSE.ended
    } finally {
      await browser.disconnect().catch(() => undefined);
    }
  }, 150_000);
});
