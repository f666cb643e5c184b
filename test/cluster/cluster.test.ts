// A cluster on real parts: three engine nodes (`remote-browser-kit serve` processes, each with its
// own data directory) on one throwaway Postgres, behind a real nginx with no session affinity.
// Callers and viewers reach any node; the tests check placement, the quota and idempotency under
// concurrency across nodes, viewers and removal through nodes that do not run the session, the
// shared rate limit, a node killed with SIGKILL, its return, and drain.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findMarkedProcesses } from '../../src/engine/runtime/sandbox/processes.js';
import {
  Api,
  PLANS,
  TEST_CLUSTER_SECRET,
  createAccount,
  makeWorkspace,
  poll,
  removeWorkspace,
  runCli,
  startEngine,
  testConfig,
  waitForStatus,
  type EngineProcess,
  type Workspace,
} from '../api/harness.js';
import { startNginx, type TestNginx } from '../helpers/nginx.js';
import { testDatabase } from '../helpers/postgres.js';
import { connectRfb } from '../helpers/rfb-client.js';
import { decodeOpus, listenTo, loudestFrequency } from '../helpers/sound.js';

const NODE_IDS = ['node-a', 'node-b', 'node-c'] as const;
const YELLOW: [number, number, number] = [255, 215, 0];
const BLUE: [number, number, number] = [30, 60, 200];

let database: string;
let sql: pg.Client;
let nginx: TestNginx;
let pages: Server;
let colorPage: string;
const workspaces = new Map<string, Workspace>();
const nodes = new Map<string, EngineProcess>();
const apis = () => [...nodes.values()].filter((n) => n.alive()).map((n) => n.url);

/** A page that is yellow, and blue once clicked: what a viewer sees and does; it plays a 440 Hz tone: what a listener hears. */
function startColorPage(): Promise<Server> {
  const server = createServer((_, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
      `<!doctype html><title>color</title><body style="margin:0;height:100vh;background:rgb(${YELLOW})" onclick="document.body.style.background='rgb(${BLUE})'">` +
        '<script>var c = new AudioContext({ sampleRate: 48000 }), g = c.createGain(), o = c.createOscillator(); g.gain.value = 0.5; o.frequency.value = 440; o.connect(g).connect(c.destination); o.start();</script></body>',
    );
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function startNode(id: string): Promise<EngineProcess> {
  const node = await startEngine({ workspace: workspaces.get(id)! });
  nodes.set(id, node);
  return node;
}

/** `count` sessions, one after another through nginx, of a new account with room for them all. */
async function newSessions(count: number): Promise<{ api: Api; ids: string[] }> {
  const account = await createAccount(workspaces.get('node-a')!, [PLANS.unlimited]);
  const api = new Api(nginx.url, account.key);
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const reply = await api.create({ browser: 'chromium', url: colorPage });
    expect(reply.json.status).toBe('ok');
    ids.push(reply.json.vmId);
  }
  return { api, ids };
}

const nodeOf = async (vmId: string): Promise<string> => (await sql.query('SELECT node_id FROM sessions WHERE id = $1', [vmId])).rows[0]?.node_id;
const nodeList = async () => (await runCli(workspaces.get('node-a')!, ['nodes', 'list'])) as Array<{ id: string; state: string; alive: boolean; load: number; capacity: number | null }>;
/** Share link ids of the sessions created here (from their create answers). */
const links = new Map<string, string>();

beforeAll(async () => {
  database = await testDatabase();
  sql = new pg.Client({ connectionString: database });
  await sql.connect();
  pages = await startColorPage();
  colorPage = `http://127.0.0.1:${(pages.address() as AddressInfo).port}/`;
  for (const id of NODE_IDS) {
    const config = {
      ...testConfig({ rateLimit: { requests: 200, perSeconds: 60 } }),
      database,
      cluster: { secret: TEST_CLUSTER_SECRET },
      node: { id, capacity: 2 },
    };
    workspaces.set(id, await makeWorkspace(config));
  }
  // One after another: the first node makes the schema, the others find it.
  for (const id of NODE_IDS) await startNode(id);
  nginx = await startNginx({ upstreams: [...nodes.values()].map((n) => n.url) });
}, 120_000);

afterAll(async () => {
  await nginx?.stop();
  await Promise.all([...nodes.values()].map((node) => node.stop()));
  for (const workspace of workspaces.values()) await removeWorkspace(workspace).catch(() => undefined);
  await sql?.end();
  await new Promise((resolve) => pages?.close(resolve));
}, 60_000);

describe('three nodes on one Postgres behind nginx', () => {
  let account: { key: string; id: string };
  let balanced: Api;
  const running: string[] = [];
  const remember = (answer: { vmId: string; shareUrl: string }) => {
    running.push(answer.vmId);
    links.set(answer.vmId, new URL(answer.shareUrl).search.slice(1));
  };

  it('every node registers itself: nodes list shows three live nodes and their capacity', async () => {
    const list = await nodeList();
    expect(list.map((n) => [n.id, n.state, n.alive, n.capacity])).toEqual(NODE_IDS.map((id) => [id, 'active', true, 2]));
  });

  it('50 concurrent creates from one account (running limit 3) through nginx leave exactly 3, one on each node', async () => {
    const created = await createAccount(workspaces.get('node-a')!, [PLANS.burst]);
    account = { key: created.key, id: created.id };
    balanced = new Api(nginx.url, account.key);
    const replies = await Promise.all(Array.from({ length: 50 }, () => balanced.create({ browser: 'chromium', url: colorPage })));
    const ok = replies.filter((r) => r.json?.status === 'ok');
    expect(ok).toHaveLength(3);
    expect(replies.filter((r) => r.json?.status === 'upgrade')).toHaveLength(47);
    for (const reply of ok) remember(reply.json);
    // Least loaded first: the three sessions went to three nodes.
    expect(new Set(await Promise.all(running.map(nodeOf)))).toEqual(new Set(NODE_IDS));
    for (const id of running) expect(await waitForStatus(balanced, id, ['running'], 40_000)).toBe('running');
    expect((await nodeList()).map((n) => n.load)).toEqual([1, 1, 1]);
  }, 90_000);

  it('a share link streams pixels and takes input whichever node serves it, nginx included', async () => {
    const vmId = running[0]!;
    const owner = await nodeOf(vmId);
    const others = NODE_IDS.filter((id) => id !== owner);
    const linkId = links.get(vmId)!;
    for (const base of [nodes.get(others[0]!)!.url, nodes.get(others[1]!)!.url, nginx.url, nodes.get(owner)!.url]) {
      const viewer = await connectRfb(`${base.replace('http', 'ws')}/share/${linkId}/rfb`);
      expect(await viewer.waitForPixel(640, 600, YELLOW)).toEqual(YELLOW);
      viewer.close();
    }
    // A view-only link through a node that does not run the session watches, and its click stays
    // out: the owner learns the link's rights from the signed node-to-node path.
    const made = await fetch(`${nodes.get(others[1]!)!.url}/share/${linkId}/view-only`, { method: 'POST' });
    const viewLinkId = ((await made.json()) as { linkId: string }).linkId;
    const watcher = await connectRfb(`${nodes.get(others[1]!)!.url.replace('http', 'ws')}/share/${viewLinkId}/rfb`);
    expect(await watcher.waitForPixel(640, 600, YELLOW)).toEqual(YELLOW);
    await watcher.click(640, 500);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await watcher.pixel(640, 600)).toEqual(YELLOW);
    // Input through a node that does not run the session reaches the remote page.
    const viewer = await connectRfb(`${nodes.get(others[0]!)!.url.replace('http', 'ws')}/share/${linkId}/rfb`);
    await viewer.click(640, 500);
    expect(await viewer.waitForPixel(640, 600, BLUE)).toEqual(BLUE);
    expect(await watcher.waitForPixel(640, 600, BLUE)).toEqual(BLUE);
    viewer.close();
    watcher.close();
    // The owner ends a connection that sends what is not RFB: the viewer on another node hears its
    // reason (4004), not that of a display gone.
    const garbled = await connectRfb(`${nodes.get(others[0]!)!.url.replace('http', 'ws')}/share/${linkId}/rfb`);
    garbled.send(Buffer.from([255, 1, 2, 3]));
    expect(await garbled.closed).toBe(4004);
  }, 60_000);

  it('a share link is heard whichever node serves it: the sound channel crosses the node link, one message per packet', async () => {
    const vmId = running[0]!;
    const owner = await nodeOf(vmId);
    const other = NODE_IDS.find((id) => id !== owner)!;
    for (const base of [nodes.get(other)!.url, nginx.url]) {
      const [format, ...packets] = await listenTo(`${base.replace('http', 'ws')}/share/${links.get(vmId)!}/sound`, 2500);
      // The format first (as bytes when another node carried it), then packets that decode to the page's tone.
      expect(JSON.parse(format!.toString())).toMatchObject({ codec: 'opus', sampleRate: 48000 });
      expect(packets.length).toBeGreaterThan(25);
      expect(Math.abs(loudestFrequency(await decodeOpus(packets)) - 440)).toBeLessThan(15);
    }
  }, 60_000);

  it("a session's files move through any node: upload through one that does not run it, listed on the files channel of another, fetched through nginx", async () => {
    const vmId = running[0]!;
    const owner = await nodeOf(vmId);
    const [first, second] = NODE_IDS.filter((id) => id !== owner).map((id) => nodes.get(id)!.url);
    const given = Buffer.from(Array.from({ length: 3 * 1024 * 1024 }, (_, i) => (i * 7) % 251));
    const uploaded = await fetch(`${first}/v8/vm/files/upload?id=${vmId}&name=${encodeURIComponent('given file.bin')}`, { method: 'POST', headers: { authorization: `Bearer ${account.key}` }, body: new Uint8Array(given) as unknown as BodyInit });
    expect(await uploaded.json()).toEqual({ status: 'ok', name: 'given file.bin', size: given.length });
    const listed = await new Promise<string>((resolve, reject) => {
      const socket = new WebSocket(`${second!.replace('http', 'ws')}/share/${links.get(vmId)!}/files`);
      socket.on('message', (data) => {
        socket.close();
        resolve(data.toString());
      });
      socket.on('error', reject);
    });
    expect(JSON.parse(listed).files).toEqual([expect.objectContaining({ name: 'given file.bin', kind: 'upload', size: given.length })]);
    for (const base of [second!, nginx.url]) {
      const fetched = await fetch(`${base}/share/${links.get(vmId)!}/files/download?name=${encodeURIComponent('given file.bin')}`);
      expect(fetched.headers.get('content-disposition')).toContain("filename*=UTF-8''given%20file.bin");
      expect(Buffer.from(await fetched.arrayBuffer()).equals(given)).toBe(true);
    }
    const api = await fetch(`${first}/v8/vm/files?id=${vmId}`, { headers: { authorization: `Bearer ${account.key}` } });
    expect(((await api.json()) as { files: unknown[] }).files).toHaveLength(1);
  }, 60_000);

  it('remove through a node that does not run the session stops the browser on the node that does; viewers on a third node hear it', async () => {
    const vmId = running.shift()!;
    const owner = await nodeOf(vmId);
    const [other, third] = NODE_IDS.filter((id) => id !== owner) as [string, string];
    // A viewer's waiting screen follows the link's state through server-sent events, on a node that is neither.
    const events = await fetch(`${nodes.get(third)!.url}/share/${links.get(vmId)!}/events`);
    const stream = events.body!.pipeThrough(new TextDecoderStream()).getReader();
    let heard = '';
    const heardEnd = (async () => {
      while (!/"state":"(ended|gone)"/.test(heard)) {
        const { value, done } = await stream.read();
        if (done) break;
        heard += value;
      }
      return heard;
    })();
    const ownerRoot = join(workspaces.get(owner)!.dataDir, 'sessions');
    expect((await findMarkedProcesses({ root: ownerRoot })).filter((p) => !p.zombie).length).toBeGreaterThan(0);
    const removed = await new Api(nodes.get(other)!.url, account.key).remove(vmId);
    expect(removed.json).toEqual({ status: 'ok' });
    expect(await waitForStatus(balanced, vmId, ['deleted'], 15_000)).toBe('deleted');
    expect(await heardEnd).toMatch(/"state":"running"[\s\S]*"state":"(ended|gone)"/);
    await stream.cancel();
    // That node ran only this session: nothing of it is left.
    const left = await poll(async () => (await findMarkedProcesses({ root: ownerRoot })).filter((p) => !p.zombie).length, (n) => n === 0, 10_000);
    expect(left).toBe(0);
  }, 40_000);

  it('50 concurrent idempotent creates spread over the nodes leave one session', async () => {
    const replies = await Promise.all(Array.from({ length: 50 }, () => balanced.create({ browser: 'chromium', url: colorPage, idempotencyKey: 'cluster-once-0001' })));
    expect(replies.every((r) => r.json?.status === 'ok')).toBe(true);
    expect(new Set(replies.map((r) => r.json.vmId)).size).toBe(1);
    const vmId = replies[0]!.json.vmId as string;
    const { rows } = await sql.query("SELECT count(*)::int AS n FROM sessions WHERE account_id = $1 AND status IN ('starting', 'running')", [account.id]);
    expect(rows[0].n).toBe(3);
    remember(replies[0]!.json);
    expect(await waitForStatus(balanced, vmId, ['running'], 40_000)).toBe('running');
  }, 60_000);

  it("one key's rate limit holds across the nodes", async () => {
    const created = await createAccount(workspaces.get('node-b')!, [PLANS.basic]);
    const bases = apis();
    const replies = [];
    for (let index = 0; index < 210; index++) replies.push(await new Api(bases[index % bases.length]!, created.key).quota());
    expect(replies.filter((r) => r.http === 200)).toHaveLength(200);
    expect(replies.filter((r) => r.http === 429)).toHaveLength(10);
  }, 60_000);

  it('kill -9 of a node: within 10 s its sessions are suspended, their slots free, its viewers see the end; nothing more goes there', async () => {
    const vmId = running[0]!;
    const victim = await nodeOf(vmId);
    const survivor = NODE_IDS.find((id) => id !== victim)!;
    const viewer = await connectRfb(`${nodes.get(survivor)!.url.replace('http', 'ws')}/share/${links.get(vmId)!}/rfb`);
    expect(await viewer.waitForPixel(640, 600, YELLOW)).toEqual(YELLOW);
    const before = (await balanced.quota()).json.running_sessions_used as number;
    const killedAt = Date.now();
    await nodes.get(victim)!.kill9();
    const status = await waitForStatus(balanced, vmId, ['suspended'], 12_000);
    const noticedMs = Date.now() - killedAt;
    expect(status).toBe('suspended');
    expect(noticedMs).toBeLessThan(10_000);
    // The viewer's connection ends (the display is gone, or the session ended).
    expect([4000, 4003, 1006, 1011]).toContain(await viewer.closed);
    expect((await balanced.quota()).json.running_sessions_used).toBe(before - 1);
    expect((await nodeList()).find((n) => n.id === victim)).toMatchObject({ state: 'lost', alive: false });
    // New sessions go to the nodes that live (nginx skips the dead one).
    const fresh = await balanced.create({ browser: 'chromium', url: colorPage });
    expect(fresh.json.status).toBe('ok');
    expect(await nodeOf(fresh.json.vmId)).not.toBe(victim);
    running.splice(0, 1);
    remember(fresh.json);
  }, 60_000);

  it('the killed node comes back: it cleans what it left behind and takes new sessions again', async () => {
    const victim = NODE_IDS.find((id) => !nodes.get(id)!.alive())!;
    const root = join(workspaces.get(victim)!.dataDir, 'sessions');
    const back = await startNode(victim);
    // Its sessions' processes ended with it (they die with their engine); their directories are cleaned now.
    expect((back.facts.reaped as { directories: number }).directories).toBeGreaterThan(0);
    expect((await findMarkedProcesses({ root })).filter((p) => !p.zombie)).toEqual([]);
    expect((await nodeList()).find((n) => n.id === victim)).toMatchObject({ state: 'active', alive: true, load: 0 });
    // Its recovery ended only its own sessions: those of the other nodes run on.
    for (const id of running) expect(await waitForStatus(balanced, id, ['running'], 1_000)).toBe('running');
    // Everything else is full (capacity 2 each, the running limit aside): a new account's session lands there.
    const { api, ids } = await newSessions(3);
    expect((await Promise.all(ids.map(nodeOf))).filter((id) => id === victim).length).toBeGreaterThan(0);
    for (const id of ids) await api.remove(id);
    for (const id of ids) expect(await waitForStatus(api, id, ['deleted'], 20_000)).toBe('deleted');
  }, 90_000);

  it('drain: a draining node takes no new session and its own sessions run on', async () => {
    const vmId = running[0]!;
    const draining = await nodeOf(vmId);
    expect(await runCli(workspaces.get('node-a')!, ['nodes', 'drain', draining])).toMatchObject({ id: draining });
    // The two nodes left have room for at least two (capacity 2 each, three sessions in the cluster, one of them draining's).
    const { api, ids } = await newSessions(2);
    expect(await Promise.all(ids.map(nodeOf))).not.toContain(draining);
    expect(await waitForStatus(balanced, vmId, ['running'], 5_000)).toBe('running');
    const listed = (await nodeList()).find((n) => n.id === draining)!;
    expect(listed).toMatchObject({ state: 'draining', alive: true });
    expect(listed.load).toBeGreaterThanOrEqual(1);
    for (const id of ids) await api.remove(id);
    for (const id of [...running]) await balanced.remove(id);
    for (const id of ids) await waitForStatus(api, id, ['deleted'], 20_000);
    for (const id of running) await waitForStatus(balanced, id, ['deleted'], 20_000);
  }, 90_000);
});
