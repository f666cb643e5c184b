// The fault suite's database outages (issue 43): three engine nodes on a Postgres of their own, two
// running sessions (each on a different node) with a viewer attached through the third node. The
// database is restarted (stopped for 5, 20 and 60 s) and killed with SIGKILL; every session, its
// share link and its viewer run on afterwards. Then one node alone is cut from the database while
// the others still reach it: only that node's session ends, with a reason, and its browser ends
// too once it is back (never a running browser that the store calls ended).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClusterNode, type ClusterNode } from '../helpers/cluster-node.js';
import { startDatabaseLink, type DatabaseLink } from '../helpers/database-link.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { connectRfb, type RfbClient } from '../helpers/rfb-client.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';

const SECRET = 'database-outage-secret-0123456789abcdef';
const NODE_IDS = ['node-a', 'node-b', 'node-c'] as const;
/** The nodes' liveness settings (cluster-node.ts): a heartbeat each 500 ms, lost after 3 s of silence. */
const HEARTBEAT_MS = 500;
const LOST_AFTER_MS = 3000;
const ORANGE: [number, number, number] = [255, 140, 0];
const PAGE = `<!doctype html><title>Outage</title><body style="margin:0;height:100vh;background:rgb(${ORANGE})"></body>`;

let postgres: TestPostgres;
let database: string;
let site: Server;
let origin: string;
let key: string;
const nodes = new Map<string, ClusterNode>();
const links = new Map<string, DatabaseLink>();
/** The two sessions: where each runs, its share link, and its viewer (attached through node-c). */
const sessions: Array<{ vmId: string; node: string; linkId: string; viewer: RfbClient; viewerClosed: boolean }> = [];

const engine = (id: string) => nodes.get(id)!.engine;
const api = (id: string) => v8Caller(() => engine(id).url, () => key);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The session's status as the API tells it (through node-c, which runs neither). */
async function statusOf(vmId: string): Promise<string | undefined> {
  const answer = await api('node-c')(`/vm/data?id=${vmId}`);
  return answer.status === 'ok' ? (answer.data?.[0]?.status as string | undefined) : `(${answer.status}: ${answer.message})`;
}

/** The share link's state as a viewer's page reads it. */
async function shareStateOf(linkId: string): Promise<string | undefined> {
  const response = await fetch(`${engine('node-c').url}/share/${linkId}`);
  return ((await response.json()) as { state?: string }).state;
}

/**
 * Waits until every node has written a heartbeat after `since` plus a whole grace period: by then
 * any node that was going to judge another lost has done so.
 */
async function settled(since: number): Promise<void> {
  const after = since + LOST_AFTER_MS + 2 * HEARTBEAT_MS;
  await waitFor(
    async () => (await engine('node-c').store.nodes().catch(() => [])).filter((node) => node.heartbeat_at > after).length,
    (fresh) => fresh === NODE_IDS.length,
    90_000,
  );
}

/** Every session runs, its share link shows it live, and its viewer is still attached and sees the page. */
async function expectSessionsRunOn(after: string): Promise<void> {
  for (const session of sessions) {
    expect(await statusOf(session.vmId), `${session.vmId} (on ${session.node}) after ${after}`).toBe('running');
    expect(await shareStateOf(session.linkId), `its share link after ${after}`).toBe('running');
    expect(session.viewerClosed, `its viewer stays attached after ${after}`).toBe(false);
    await session.viewer.waitForPixel(640, 500, ORANGE, 15_000);
  }
}

beforeAll(async () => {
  site = createServer((_, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  // A Postgres of this file's own: the run's shared one must stay up for the other files.
  postgres = await startPostgres();
  database = await postgres.createDatabase();
  for (const id of NODE_IDS) {
    const link = await startDatabaseLink(Number(new URL(database).port));
    links.set(id, link);
    nodes.set(id, await startClusterNode({ database: link.url(database), id, secret: SECRET }));
  }
  key = (await engine('node-a').accounts.create({ contact: 'database-outage@example.com', plans: ['pro'] })).apiKey.key;
  // One session on node-a, one on node-b: the others drain while each is placed.
  for (const [runs, drained] of [['node-a', ['node-b', 'node-c']], ['node-b', ['node-a', 'node-c']]] as const) {
    for (const id of NODE_IDS) await engine('node-a').store.setNodeState(id, (drained as readonly string[]).includes(id) ? 'draining' : 'active');
    const created = await api('node-c')('/vm/create', { browser: 'chromium', url: `${origin}/outage` });
    expect(created.status, JSON.stringify(created)).toBe('ok');
    const row = await waitFor(() => engine('node-a').store.session(created.vmId), (found) => found?.status === 'running', 60_000);
    expect(row?.node_id).toBe(runs);
    sessions.push({ vmId: created.vmId, node: runs, linkId: new URL(created.shareUrl).search.slice(1), viewer: undefined as never, viewerClosed: false });
  }
  for (const id of NODE_IDS) await engine('node-a').store.setNodeState(id, 'active');
  for (const session of sessions) {
    // The viewer stays through every case (its reads may come late in the file: a long deadline).
    session.viewer = await connectRfb(`${engine('node-c').url.replace(/^http/, 'ws')}/share/${session.linkId}/rfb`, 30 * 60_000);
    void session.viewer.closed.then(() => (session.viewerClosed = true));
    await session.viewer.waitForPixel(640, 500, ORANGE, 30_000);
  }
}, 180_000);

afterAll(async () => {
  for (const session of sessions) session.viewer?.close();
  for (const node of nodes.values()) await node.close();
  for (const link of links.values()) await link.close();
  await postgres?.stop();
  site?.close();
}, 120_000);

describe('a cluster through a database outage', () => {
  for (const [seconds, signal] of [[5, 'SIGINT'], [20, 'SIGINT'], [60, 'SIGINT'], [5, 'SIGKILL']] as const) {
    it(`keeps every session, share link and viewer when Postgres is ${signal === 'SIGKILL' ? 'killed with SIGKILL' : 'stopped'} for ${seconds} s`, async () => {
      await postgres.halt(signal);
      // While it is down, the API answers in its envelope and every node stays up.
      const during = await api('node-c')(`/vm/data?id=${sessions[0]!.vmId}`);
      expect(during.status, JSON.stringify(during)).toBe('error');
      // The outage's length is the fault itself, not a wait for something.
      await sleep(seconds * 1000);
      await postgres.resume();
      await settled(Date.now());
      await expectSessionsRunOn(`a ${seconds} s outage (${signal})`);
      const states = (await engine('node-c').store.nodes()).map((node) => `${node.id} ${node.state}`);
      expect(states.sort()).toEqual(NODE_IDS.map((id) => `${id} active`));
    }, 240_000);
  }

  it('ends only the sessions of the one node cut from the database, and that node ends their browsers', async () => {
    const [onA, onB] = sessions;
    links.get('node-a')!.cut();
    // The others judge node-a lost once it has been silent for LOST_AFTER_MS.
    await waitFor(() => statusOf(onA!.vmId), (status) => status === 'suspended', 60_000);
    expect(await shareStateOf(onA!.linkId)).toBe('ended');
    const row = await engine('node-b').store.session(onA!.vmId);
    expect(row?.end_reason, 'the ended session says why').toMatch(/stopped answering/);
    expect(await statusOf(onB!.vmId)).toBe('running');
    links.get('node-a')!.mend();
    // Back, node-a finds itself declared lost: the browser of its ended session ends, and it joins again.
    await waitFor(() => engine('node-a').sessions.endsOf(onA!.vmId), (ends) => ends === undefined, 60_000);
    await waitFor(async () => (await engine('node-b').store.nodes()).find((node) => node.id === 'node-a')?.state, (state) => state === 'active', 60_000);
    expect(await statusOf(onB!.vmId)).toBe('running');
    expect(onB!.viewerClosed).toBe(false);
  }, 240_000);
});
