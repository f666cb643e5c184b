// The remote browser's tabs through any node of a cluster (issue 36, decisions.md 117): two engine
// nodes on one throwaway Postgres, a Chromium session on one of them. Its share link is read
// through the node that does not run it: the state and the event stream there list the tabs (the
// owner's, fetched over the signed node link), and when a person's click on the page opens a second
// tab, that node's stream shows both as it happens (the owner tells the change; the renewal that
// would catch a missed message comes only after the waits below). A switch through that node
// changes the tab the browser shows, a view-only link through it is refused, bad input is refused
// with what is wrong, and closing leaves one; a `go` through it takes the tab to another address.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { startClusterNode, type ClusterNode } from '../helpers/cluster-node.js';
import type { RuntimeSession } from '../../src/engine/runtime/runtime.js';
import type { ShareTab, ViewerState } from '../../src/protocol/index.js';
import { testDatabase } from '../helpers/postgres.js';
import { waitFor, x } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';
import { followShareEvents } from '../helpers/share-events.js';

const SECRET = 'tabs-cluster-secret-0123456789abcdef-0123';
const PAGES: Record<string, string> = {
  '/': '<!doctype html><title>First</title><a href="/second" target="_blank" style="position:fixed;inset:0;display:block;background:#cde">open the second page</a>',
  '/second': '<!doctype html><title>Second</title><body style="background:#edc">the second page</body>',
};

const engines = new Map<string, Engine>();
const clusterNodes: ClusterNode[] = [];
const streams: Array<{ stop(): void }> = [];
let site: Server;
let key: string;
let vmId: string;
let linkId: string;
let relays: Engine;
let session: RuntimeSession;

const api = (engine: Engine) => v8Caller(() => engine.url, () => key);
const titles = (tabs: ShareTab[] = []) => tabs.map((tab) => `${tab.title}${tab.active ? '*' : ''}`).join(',');
const stateThere = async (link: string) => (await (await fetch(`${relays.url}/share/${link}`)).json()) as ViewerState & { status: string };

/** Follows a link's event stream on the node that does not run the session: the states it sent. */
function follow(link: string): { states: ViewerState[]; latest(): ShareTab[] } {
  const states: ViewerState[] = [];
  streams.push({ stop: followShareEvents(`${relays.url}/share/${link}/events`, (state) => states.push(state)) });
  return { states, latest: () => states.at(-1)?.tabs ?? [] };
}

/** A tab action through the node that does not run the session. */
async function act(link: string, body: unknown): Promise<{ status: number; body: Record<string, any> }> {
  const response = await fetch(`${relays.url}/share/${link}/tabs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** The title of the browser's window: the page it shows. */
async function windowTitle(): Promise<string> {
  const ids = (await x(session, 'xdotool', ['search', '--onlyvisible', '--name', '.']).catch(() => '')).trim().split('\n').filter(Boolean);
  const names = await Promise.all(ids.map((id) => x(session, 'xdotool', ['getwindowname', id]).catch(() => '')));
  return names.map((name) => name.trim()).join(' | ');
}

beforeAll(async () => {
  site = createServer((request, response) => {
    const html = PAGES[request.url ?? ''];
    if (!html) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const database = await testDatabase();
  // One after another: the first node makes the schema, the other finds it.
  for (const id of ['node-a', 'node-b']) {
    const node = await startClusterNode({ database, id, secret: SECRET });
    clusterNodes.push(node);
    engines.set(id, node.engine);
  }
  key = (await engines.get('node-a')!.accounts.create({ contact: 'cluster-tabs@example.com', plans: ['pro'] })).apiKey.key;
  const created = await api(engines.get('node-a')!)('/vm/create', { browser: 'chromium', url: `http://127.0.0.1:${(site.address() as AddressInfo).port}/` });
  expect(created.status, JSON.stringify(created)).toBe('ok');
  vmId = created.vmId;
  linkId = new URL(created.shareUrl).search.slice(1);
  expect(await waitFor(async () => (await api(engines.get('node-a')!)(`/vm/data?id=${vmId}`)).data?.[0]?.status, (status) => status === 'running', 60_000)).toBe('running');
  const row = (await engines.get('node-a')!.store.session(vmId))!;
  const runsIt = engines.get(row.node_id!)!;
  relays = [...engines.values()].find((engine) => engine !== runsIt)!;
  session = runsIt.runtime.get(row.runtime_id!)!;
}, 120_000);

afterAll(async () => {
  for (const stream of streams) stream.stop();
  for (const node of clusterNodes) await node.close();
  await new Promise((resolve) => site?.close(resolve));
});

describe("the remote browser's tabs on a two-node cluster", () => {
  it('are read, followed and changed through the node that does not run the session', async () => {
    const viewLinkId = ((await (await fetch(`${relays.url}/share/${linkId}/view-only`, { method: 'POST' })).json()) as { linkId: string }).linkId;
    const driver = follow(linkId);
    const watcher = follow(viewLinkId);
    await waitFor(() => titles(driver.latest()), (t) => t === 'First*', 15_000);
    expect(titles((await stateThere(linkId)).tabs)).toBe('First*');

    // A person clicks the link on the page: the browser opens its second tab, on the other node.
    await x(session, 'xdotool', ['mousemove', '400', '400', 'click', '1']);
    for (const stream of [driver, watcher]) {
      await waitFor(() => titles(stream.latest()), (t) => t === 'First,Second*', 15_000);
      expect(titles(stream.latest())).toBe('First,Second*');
    }
    expect(titles((await waitFor(() => stateThere(viewLinkId), (state) => titles(state.tabs) === 'First,Second*', 5_000)).tabs)).toBe('First,Second*');
    const [first, second] = driver.latest() as [ShareTab, ShareTab];

    // A view-only link through this node is refused, saying why; the browser still shows the second page.
    const refused = await act(viewLinkId, { action: 'switch', tab: first.id });
    expect(refused).toMatchObject({ status: 403, body: { status: 'denied', message: expect.stringMatching(/view-only link .* cannot switch/) } });
    expect(await waitFor(windowTitle, (t) => t.includes('Second'), 5_000)).toContain('Second');
    // Bad input is refused with what is wrong: here (the action), and at the owner (no such tab).
    expect(await act(linkId, { action: 'jump', tab: first.id })).toMatchObject({ status: 400, body: { status: 'denied', message: expect.stringContaining('"action" is one of') } });
    expect(await act(linkId, { action: 'switch', tab: 'no-such-tab' })).toMatchObject({ status: 404, body: { status: 'denied', message: expect.stringContaining('no such tab') } });

    // The share link switches through this node: the browser shows the first page, both streams say so.
    const switched = await act(linkId, { action: 'switch', tab: first.id });
    expect(switched.status).toBe(200);
    expect(titles(switched.body.tabs as ShareTab[])).toBe('First*,Second');
    expect(await waitFor(windowTitle, (t) => t.includes('First'), 5_000)).toContain('First');
    for (const stream of [driver, watcher]) {
      await waitFor(() => titles(stream.latest()), (t) => t === 'First*,Second', 5_000);
      expect(titles(stream.latest())).toBe('First*,Second');
    }

    // Closing the second leaves one; the last is never closed.
    const closed = await act(linkId, { action: 'close', tab: second.id });
    expect(closed.status).toBe(200);
    expect(titles(closed.body.tabs as ShareTab[])).toBe('First*');
    await waitFor(() => titles(watcher.latest()), (t) => t === 'First*', 5_000);
    expect(titles(watcher.latest())).toBe('First*');
    expect(titles((await stateThere(linkId)).tabs)).toBe('First*');
    expect(await act(linkId, { action: 'close', tab: first.id })).toMatchObject({ status: 409, body: { status: 'denied' } });

    // The tab goes to another address (an app window's address, decisions.md 174) through the
    // owner too; an address that is not http or https is refused there, the browser unmoved.
    const secondPage = `http://127.0.0.1:${(site.address() as AddressInfo).port}/second`;
    expect(await act(linkId, { action: 'go', tab: first.id, url: 'javascript:document.title="Second"' })).toMatchObject({ status: 400, body: { status: 'denied', message: expect.stringContaining('http or https') } });
    expect(await act(viewLinkId, { action: 'go', tab: first.id, url: secondPage })).toMatchObject({ status: 403 });
    expect(await windowTitle()).toContain('First');
    const went = await act(linkId, { action: 'go', tab: first.id, url: secondPage });
    expect(went.status).toBe(200);
    expect((went.body.tabs as ShareTab[]).map((tab) => tab.url)).toEqual([secondPage]);
    expect(await waitFor(windowTitle, (t) => t.includes('Second'), 10_000)).toContain('Second');
  }, 90_000);
});
