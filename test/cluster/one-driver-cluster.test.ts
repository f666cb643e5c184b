// One driver at a time on a cluster (issue 36, decisions.md 100): two engine nodes on one
// throwaway Postgres, a Chromium session with `control: "one"` on one of them. Two viewers connect
// through the node that does not run it: their `people` sockets and their RFB connections (with
// `?viewer=`) cross the signed node link, and only the driver's keys reach the page. The owner's
// control calls land on that other node too and go to the node that decides over the node link
// (`/internal/v1/sessions/<id>/control`); the share state read there says who drives.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { startClusterNode, type ClusterNode } from '../helpers/cluster-node.js';
import type { BrowserControl } from '../../src/engine/runtime/browser/control.js';
import { connectPeople, type PeopleClient } from '../helpers/people-client.js';
import { testDatabase } from '../helpers/postgres.js';
import { connectRfb, type RfbClient } from '../helpers/rfb-client.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';

const SECRET = 'one-driver-cluster-secret-0123456789abcdef';
const PAGE = '<!doctype html><title>Keys</title><body style="margin:0"><input id="field" autofocus style="position:absolute;left:10px;top:10px;width:280px;height:40px"></body>';
const XK = { a: 0x61, b: 0x62, c: 0x63, g: 0x67 };

const engines = new Map<string, Engine>();
const clusterNodes: ClusterNode[] = [];
let site: Server;
let key: string;
let vmId: string;
let linkId: string;
let runsIt: Engine;
let relays: Engine;
let control: BrowserControl;

interface Viewer {
  people: PeopleClient;
  rfb: RfbClient;
  id: string;
}
const viewers: Viewer[] = [];

const api = (engine: Engine) => v8Caller(() => engine.url, () => key);
const fieldValue = async () => String(await control.evaluate("document.getElementById('field').value"));
const shareState = async () => (await (await fetch(`${relays.url}/share/${linkId}`)).json()) as Record<string, any>;

/** A viewer through the node that does not run the session. */
async function join(): Promise<Viewer> {
  const ws = relays.url.replace(/^http/, 'ws');
  const people = await connectPeople(`${ws}/share/${linkId}/people`);
  const rfb = await connectRfb(`${ws}/share/${linkId}/rfb?viewer=${people.viewerKey}`);
  const picture = await people.until((p) => p.people.some((person) => person.id === p.you));
  const viewer = { people, rfb, id: picture.you };
  viewers.push(viewer);
  return viewer;
}

/**
 * `others` press a key first, each then reading a pixel on the same connection: by its answer the
 * node that runs the session has passed or dropped the key, in order. Then `driver` presses
 * `marker`: the field holds exactly it, so the others' keys never reached the page.
 */
async function onlyDriverTypes(driver: Viewer, others: Viewer[], keysym: number, marker: string): Promise<void> {
  await control.evaluate("document.getElementById('field').value = ''");
  for (const other of others) {
    await other.rfb.key(XK.g);
    await other.rfb.pixel(0, 0);
  }
  await driver.rfb.key(keysym);
  expect(await waitFor(fieldValue, (value) => value.includes(marker), 10_000)).toBe(marker);
}

beforeAll(async () => {
  site = createServer((request, response) => response.writeHead(request.url === '/favicon.ico' ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const database = await testDatabase();
  // One after another: the first node makes the schema, the other finds it.
  for (const id of ['node-a', 'node-b']) {
    const node = await startClusterNode({ database, id, secret: SECRET });
    clusterNodes.push(node);
    engines.set(id, node.engine);
  }
  key = (await engines.get('node-a')!.accounts.create({ contact: 'cluster-control@example.com', plans: ['pro'] })).apiKey.key;
  const created = await api(engines.get('node-a')!)('/vm/create', { browser: 'chromium', url: `http://127.0.0.1:${(site.address() as AddressInfo).port}/`, control: 'one' });
  expect(created.status, JSON.stringify(created)).toBe('ok');
  vmId = created.vmId;
  linkId = new URL(created.shareUrl).search.slice(1);
  expect(await waitFor(async () => (await api(engines.get('node-a')!)(`/vm/data?id=${vmId}`)).data?.[0]?.status, (status) => status === 'running', 60_000)).toBe('running');
  const row = (await engines.get('node-a')!.store.session(vmId))!;
  runsIt = engines.get(row.node_id!)!;
  relays = [...engines.values()].find((engine) => engine !== runsIt)!;
  control = runsIt.runtime.get(row.runtime_id!)!.control!;
  expect(await waitFor(() => control.evaluate('document.title').catch(() => ''), (title) => title === 'Keys', 15_000)).toBe('Keys');
}, 120_000);

afterAll(async () => {
  for (const viewer of viewers) {
    viewer.rfb.close();
    viewer.people.close();
  }
  for (const node of clusterNodes) await node.close();
  await new Promise((resolve) => site?.close(resolve));
});

describe('one driver on a two-node cluster', () => {
  it('decides on the node that runs the session for viewers connected through the other', async () => {
    const [first, second] = [await join(), await join()];
    for (const viewer of [first, second]) await viewer.people.until((p) => p.mode === 'one' && p.people.length === 2 && p.driver === null);
    expect(await shareState()).toMatchObject({ status: 'ok', controlMode: 'one', driver: null, channels: { people: true } });

    // Nobody drives: the first to ask drives, and its keys are its own across the node link.
    first.people.send({ type: 'ask' });
    for (const viewer of [first, second]) await viewer.people.until((p) => p.driver?.id === first.id);
    expect((await waitFor(shareState, (state) => state.driver?.id === first.id)).driver).toMatchObject({ id: first.id, kind: 'person' });
    await onlyDriverTypes(first, [second], XK.a, 'a');

    // The second asks; the driver gives.
    second.people.send({ type: 'ask' });
    await first.people.until((p) => p.people.find((person) => person.id === second.id)?.asks === true);
    first.people.send({ type: 'give', to: second.id });
    for (const viewer of [first, second]) await viewer.people.until((p) => p.driver?.id === second.id);
    await onlyDriverTypes(second, [first], XK.b, 'b');
  }, 90_000);

  it("forwards the owner's control calls from the node that does not run the session to the one that does", async () => {
    const [first, second] = viewers as [Viewer, Viewer];
    const owner = api(relays);
    // Taken back with no viewer of the owner's here: the owner holds control and nobody types.
    expect(await owner('/vm/control', { id: vmId, action: 'take' })).toMatchObject({ status: 'ok', mode: 'one', driver: { id: 'owner', owner: true }, people: [{ id: first.id }, { id: second.id }] });
    for (const viewer of [first, second]) await viewer.people.until((p) => p.driver?.id === 'owner');
    expect((await waitFor(shareState, (state) => state.driver?.id === 'owner')).driver).toMatchObject({ owner: true });
    await control.evaluate("document.getElementById('field').value = ''");
    for (const viewer of [first, second]) {
      await viewer.rfb.key(XK.c);
      await viewer.rfb.pixel(0, 0);
    }
    // Given to the first: its key is the only one on the page (the `c`s above were dropped).
    expect(await owner('/vm/control', { id: vmId, action: 'give', to: first.id })).toMatchObject({ status: 'ok', driver: { id: first.id } });
    await first.people.until((p) => p.driver?.id === first.id);
    await first.rfb.key(XK.a);
    expect(await waitFor(fieldValue, (value) => value.includes('a'), 10_000)).toBe('a');
    expect(await owner('/vm/control', { id: vmId, action: 'give', to: 'nobody-here' })).toMatchObject({ status: 'denied', message: expect.stringMatching(/^to:/) });

    // Everyone controls, then one driver again: the mode is the row's, read on either node.
    expect(await owner('/vm/control', { id: vmId, action: 'mode', mode: 'shared' })).toMatchObject({ status: 'ok', mode: 'shared', driver: null });
    await second.people.until((p) => p.mode === 'shared');
    await waitFor(shareState, (state) => state.controlMode === undefined);
    await control.evaluate("document.getElementById('field').value = ''");
    await first.rfb.key(XK.b);
    expect(await waitFor(fieldValue, (value) => value === 'b', 10_000)).toBe('b');
    await second.rfb.key(XK.b);
    expect(await waitFor(fieldValue, (value) => value === 'bb', 10_000)).toBe('bb');
    expect(await api(runsIt)('/vm/control', { id: vmId, action: 'mode', mode: 'one' })).toMatchObject({ status: 'ok', mode: 'one', driver: null });
    await first.people.until((p) => p.mode === 'one');
  }, 60_000);
});
