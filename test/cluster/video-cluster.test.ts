// The video channel across a cluster (issue 25, decisions.md 65): real engine nodes (`serve`
// processes) on one throwaway Postgres. A viewer whose share link reaches a node that does not run
// the session gets the owner's H.264 (the format, then access units, a key frame first) through
// the signed node-to-node path; a session on a node with video off closes the channel with the
// documented "no video" close (1011), also when the node the viewer reached offers video.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VIDEO_CLOSE } from '../../src/engine/channels/video/video-watcher.js';
import { VIDEO_KEY_FRAME } from '../../src/protocol/video.js';
import {
  Api,
  PLANS,
  TEST_CLUSTER_SECRET,
  createAccount,
  makeWorkspace,
  removeWorkspace,
  runCli,
  startEngine,
  testConfig,
  waitForStatus,
  type EngineProcess,
  type Workspace,
} from '../api/harness.js';
import { testDatabase } from '../helpers/postgres.js';

/** node-a and node-b run one session each (capacity 1); node-c drains, so it only forwards. */
const VIDEO_ON = { 'node-a': true, 'node-b': false, 'node-c': true } as const;
type NodeId = keyof typeof VIDEO_ON;

/** A page in full motion: a canvas of fresh noise every animation frame. */
const MOTION_PAGE =
  '<!doctype html><title>motion</title><body style="margin:0;overflow:hidden"><canvas id="c" width="640" height="360" style="width:100vw;height:100vh"></canvas><script>' +
  'const c = document.getElementById("c").getContext("2d"), img = c.createImageData(640, 360);' +
  '(function draw() { const d = new Uint32Array(img.data.buffer); for (let i = 0; i < d.length; i++) d[i] = (Math.random() * 0xffffff) | 0xff000000; c.putImageData(img, 0, 0); requestAnimationFrame(draw); })();' +
  '</script></body>';

let database: string;
let sql: pg.Client;
let pages: Server;
let motionPage: string;
const workspaces = new Map<NodeId, Workspace>();
const nodes = new Map<NodeId, EngineProcess>();

/** What a watcher of the video channel received in `ms` (or until the channel closed), and how it closed. */
/** Watches a video channel for `ms`, or until `enough` messages came (a loaded machine sends fewer a second). */
function watchVideo(url: string, ms: number, enough = Number.POSITIVE_INFINITY): Promise<{ messages: Buffer[]; close: { code: number; reason: string } | null }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    const messages: Buffer[] = [];
    const stop = () => {
      clearTimeout(timer);
      socket.removeAllListeners('close');
      socket.close();
      resolve({ messages, close: null });
    };
    const timer = setTimeout(stop, ms);
    socket.on('message', (data: Buffer) => {
      messages.push(data);
      if (messages.length >= enough) stop();
    });
    socket.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ messages, close: { code, reason: reason.toString() } });
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

beforeAll(async () => {
  database = await testDatabase();
  sql = new pg.Client({ connectionString: database });
  await sql.connect();
  pages = createServer((request, response) => {
    if (request.url !== '/') return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(MOTION_PAGE);
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  motionPage = `http://127.0.0.1:${(pages.address() as AddressInfo).port}/`;
  for (const id of Object.keys(VIDEO_ON) as NodeId[]) {
    const config = {
      ...testConfig({ rateLimit: { requests: 200, perSeconds: 60 } }),
      database,
      cluster: { secret: TEST_CLUSTER_SECRET },
      node: { id, capacity: 1 },
      video: VIDEO_ON[id] ? {} : false,
    };
    workspaces.set(id, await makeWorkspace(config));
  }
  // One after another: the first node makes the schema, the others find it.
  for (const id of workspaces.keys()) nodes.set(id, await startEngine({ workspace: workspaces.get(id)! }));
  expect(await runCli(workspaces.get('node-a')!, ['nodes', 'drain', 'node-c'])).toMatchObject({ id: 'node-c' });
}, 120_000);

afterAll(async () => {
  await Promise.all([...nodes.values()].map((node) => node.stop()));
  for (const workspace of workspaces.values()) await removeWorkspace(workspace).catch(() => undefined);
  await sql?.end();
  await new Promise((resolve) => pages?.close(resolve));
}, 60_000);

describe('video through a node that does not run the session', () => {
  it('the owner streams H.264 to a watcher on another node; an owner without video closes with 1011', async () => {
    const account = await createAccount(workspaces.get('node-a')!, [PLANS.unlimited]);
    const api = new Api(nodes.get('node-c')!.url, account.key);
    /** Share link id per owner node. */
    const linkOn = new Map<string, string>();
    for (let i = 0; i < 2; i++) {
      const reply = await api.create({ browser: 'chromium', url: motionPage });
      expect(reply.json.status).toBe('ok');
      expect(await waitForStatus(api, reply.json.vmId, ['running'], 40_000)).toBe('running');
      const owner = (await sql.query('SELECT node_id FROM sessions WHERE id = $1', [reply.json.vmId])).rows[0]?.node_id as string;
      linkOn.set(owner, new URL(reply.json.shareUrl).search.slice(1));
    }
    // One session on each node that takes sessions; node-c, which offers video, runs none.
    expect([...linkOn.keys()].sort()).toEqual(['node-a', 'node-b']);
    const through = nodes.get('node-c')!.url.replace('http', 'ws');

    // The owner has video: the format, then access units, a key frame first, most of them large (motion).
    const watched = await watchVideo(`${through}/share/${linkOn.get('node-a')!}/video`, 30_000, 22);
    expect(watched.close).toBeNull();
    const [format, ...units] = watched.messages;
    // The format crossed the node link as bytes (the player reads either).
    expect(JSON.parse(format!.toString())).toMatchObject({ codec: expect.stringMatching(/^avc1\./), description: expect.any(String) });
    expect(units.length).toBeGreaterThan(20);
    expect(units[0]![0]! & VIDEO_KEY_FRAME).toBe(VIDEO_KEY_FRAME);
    // Each unit is whole (one message per access unit): AVC length-prefixed NAL units filling it exactly.
    for (const unit of units.slice(0, 10)) {
      let at = 1;
      while (at < unit.length) at += 4 + unit.readUInt32BE(at);
      expect(at).toBe(unit.length);
    }
    // Noise in motion: not the few bytes of a still screen.
    const large = units.filter((unit) => (unit[0]! & VIDEO_KEY_FRAME) === 0 && unit.length > 5000);
    expect(large.length).toBeGreaterThan(units.length / 2);

    // The owner has no video (off in its configuration): closed at once, with the documented code.
    const refused = await watchVideo(`${through}/share/${linkOn.get('node-b')!}/video`, 4000);
    expect(refused.close).toEqual({ code: VIDEO_CLOSE.unavailable, reason: 'this session has no video' });
    expect(refused.messages).toEqual([]);
    // ...and on the owner itself the share API offers none.
    expect((await (await fetch(`${nodes.get('node-b')!.url}/share/${linkOn.get('node-b')!}`)).json()).video).toBeUndefined();
  }, 120_000);
});
