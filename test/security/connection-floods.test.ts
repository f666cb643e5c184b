// Security suite, issue 20's "one session makes the engine unreachable": the engine run from its
// CLI as root (with an open-files limit of 4,096 instead of this machine's 20,000, so the flood that
// took 22,000 connections there fits in a bounded test), and thousands of silent connections to one
// session's egress socket, opened on the host where a process of the session reaches it. Meanwhile
// /healthz, another account's API calls and another session's viewer must answer within a second,
// and the flood must be cut: beyond the session's cap at once, the silent rest after their deadline.
// Issue 32's the same from outside: 20,000 event streams from one address on a view-only link.
import { existsSync, readdirSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Api,
  createAccount,
  makeWorkspace,
  PLANS,
  removeSessions,
  removeWorkspace,
  send,
  startEngine,
  startPageServer,
  testConfig,
  waitForStatus,
  type EngineProcess,
  type PageServer,
  type Workspace,
} from '../api/harness.js';
import { connectRfb } from '../helpers/rfb-client.js';

const FILE_LIMIT = 4096;
const FLOOD = 6000;
/** The default cap of connections per session (egress-gate.ts). */
const PER_SESSION = 256;
const FIRST_BYTES_MS = 2000;

let workspace: Workspace;
let engine: EngineProcess;
let pages: PageServer;
let owner: Api;
let other: Api;
const vmIds: string[] = [];
/** The flooding session's egress socket, on the host. */
let egressSocket: string;
let otherLinkId: string;
let ownerLinkId: string;

/** Sessions' egress sockets on the host, as the engine made them. */
function egressSockets(): string[] {
  const root = join(workspace.dataDir, 'sessions');
  return readdirSync(root)
    .map((dir) => join(root, dir, 'egress', 'egress.sock'))
    .filter((path) => existsSync(path));
}

async function running(api: Api, url: string): Promise<{ vmId: string; linkId: string }> {
  const created = await api.create({ browser: 'chromium', url });
  expect(created.json?.status, created.text).toBe('ok');
  vmIds.push(created.json.vmId);
  expect(await waitForStatus(api, created.json.vmId, ['running'], 45_000)).toBe('running');
  return { vmId: created.json.vmId, linkId: new URL(created.json.shareUrl).search.slice(1) };
}

/** How long `step` took, in ms. */
async function timed(step: () => Promise<unknown>): Promise<number> {
  const started = Date.now();
  await step();
  return Date.now() - started;
}

beforeAll(async () => {
  pages = await startPageServer();
  workspace = await makeWorkspace(testConfig({ egress: { allow: ['127.0.0.0/8', '::1/128'], connections: { firstBytesMs: FIRST_BYTES_MS } } }));
  engine = await startEngine({ workspace, fileLimit: FILE_LIMIT });
  owner = new Api(engine.url, (await createAccount(workspace, [PLANS.basic])).key);
  other = new Api(engine.url, (await createAccount(workspace, [PLANS.basic])).key);
  ownerLinkId = (await running(owner, pages.page)).linkId;
  egressSocket = egressSockets()[0] ?? '';
  otherLinkId = (await running(other, pages.page)).linkId;
}, 120_000);

afterAll(async () => {
  if (engine?.alive()) {
    await removeSessions(owner, vmIds);
    await removeSessions(other, vmIds);
  }
  await engine?.stop();
  await pages?.close();
  await removeWorkspace(workspace);
}, 60_000);

describe('a flood of connections from one session to its egress route', () => {
  it('leaves /healthz, another account and another session’s viewer answering, and is cut', async () => {
    expect(egressSocket).toMatch(/egress\.sock$/);
    const flood: Array<{ socket: net.Socket; closedAt: number | null }> = [];
    // In waves, as fast as the engine accepts them: a unix socket's backlog refuses the excess.
    for (let opened = 0; opened < FLOOD; opened += 300) {
      await Promise.all(
        Array.from({ length: 300 }, () => new Promise<void>((resolve) => {
          const entry = { socket: net.connect(egressSocket), closedAt: null as number | null };
          flood.push(entry);
          entry.socket.on('error', () => undefined);
          entry.socket.once('close', () => {
            entry.closedAt = Date.now();
            resolve();
          });
          entry.socket.once('connect', () => resolve());
        })),
      );
    }
    try {
      // The engine answers everyone else at once while the flood's connections are still held.
      expect(await timed(async () => expect((await send(engine.url, 'GET', '/healthz', { timeoutMs: 5000 })).json?.status).toBe('ok'))).toBeLessThan(1000);
      expect(await timed(async () => expect((await other.data()).json?.status).toBe('ok'))).toBeLessThan(1000);
      let created: string | undefined;
      expect(
        await timed(async () => {
          const answer = await other.create({ browser: 'chromium', url: pages.page }, { timeoutMs: 5000 });
          expect(answer.json?.status, answer.text).toBe('ok');
          created = answer.json.vmId;
        }),
      ).toBeLessThan(1000);
      vmIds.push(created!);
      let viewer: Awaited<ReturnType<typeof connectRfb>> | undefined;
      expect(await timed(async () => (viewer = await connectRfb(`${engine.url.replace(/^http/, 'ws')}/share/${otherLinkId}/rfb`, 5000)))).toBeLessThan(1000);
      expect(viewer!.width).toBeGreaterThan(0);
      viewer!.close();

      // The session held no more than its cap: everything beyond it was closed at once.
      expect(flood.filter((entry) => entry.closedAt === null).length).toBeLessThanOrEqual(PER_SESSION);
      expect(flood.filter((entry) => entry.closedAt !== null).length).toBeGreaterThanOrEqual(FLOOD - PER_SESSION);

      // The silent ones are closed once their deadline passed.
      const deadline = Date.now() + FIRST_BYTES_MS + 3000;
      while (flood.some((entry) => entry.closedAt === null) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(flood.filter((entry) => entry.closedAt === null).length).toBe(0);
    } finally {
      for (const entry of flood) entry.socket.destroy();
    }

    // The flood dropped, the session's route serves it again.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(egressSocket, () => socket.write(`GET ${pages.page} HTTP/1.1\r\nHost: ${new URL(pages.page).host}\r\nConnection: close\r\n\r\n`));
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      socket.setTimeout(5000, () => socket.destroy(new Error('no answer through the egress route within 5 s')));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
  }, 120_000);
});

/** Opens the share API's event stream at `path`: resolves with its HTTP status once the answer starts; a 200 stays open. */
function openEvents(path: string): Promise<{ status: number; close: () => void }> {
  const { hostname, port } = new URL(engine.url);
  return new Promise((resolve) => {
    const request = httpGet({ host: hostname, port, path, agent: false }, (response) => {
      if (response.statusCode !== 200) response.resume();
      // An open stream stays open, however long the flood's later waves take on a busy machine:
      // the time limit is for an answer that never starts.
      else request.setTimeout(0);
      resolve({ status: response.statusCode ?? 0, close: () => request.destroy() });
    });
    request.on('error', () => resolve({ status: 0, close: () => undefined }));
    request.setTimeout(10_000, () => request.destroy());
  });
}

describe('a flood of event streams from one address on a view-only link', () => {
  it('holds only the link\'s seats, and leaves /healthz, another account and another session\'s viewer answering', async () => {
    const made = await send(engine.url, 'POST', `/share/${ownerLinkId}/view-only`);
    expect(made.json?.status, made.text).toBe('ok');
    const path = `/share/${made.json.linkId as string}/events`;
    const held: Array<() => void> = [];
    const refused = new Map<number, number>();
    try {
      for (let opened = 0; opened < 20_000; opened += 400) {
        const wave = await Promise.all(Array.from({ length: 400 }, () => openEvents(path)));
        for (const stream of wave) {
          if (stream.status === 200) held.push(stream.close);
          else refused.set(stream.status, (refused.get(stream.status) ?? 0) + 1);
        }
      }
      // The view-only link's event seats (twice its viewer seats: 16) and no more; the rest were told to wait.
      expect(held.length).toBeLessThanOrEqual(16);
      expect(held.length).toBeGreaterThan(0);
      expect(refused.get(429) ?? 0).toBeGreaterThanOrEqual(20_000 - 16 - 100);

      expect(await timed(async () => expect((await send(engine.url, 'GET', '/healthz', { timeoutMs: 5000 })).json?.status).toBe('ok'))).toBeLessThan(1000);
      expect(await timed(async () => expect((await other.data()).json?.status).toBe('ok'))).toBeLessThan(1000);
      let viewer: Awaited<ReturnType<typeof connectRfb>> | undefined;
      expect(await timed(async () => (viewer = await connectRfb(`${engine.url.replace(/^http/, 'ws')}/share/${otherLinkId}/rfb`, 5000)))).toBeLessThan(1000);
      expect(viewer!.width).toBeGreaterThan(0);
      viewer!.close();
      // The share link keeps its own seats: its viewer's event stream opens.
      const holder = await openEvents(`/share/${ownerLinkId}/events`);
      expect(holder.status).toBe(200);
      holder.close();
    } finally {
      for (const close of held) close();
    }
  }, 180_000);
});
