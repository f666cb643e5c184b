// A session is ready when its browser is on screen and its first page is on its way, whatever
// the site then does: real Chromium and Firefox ESR sessions whose first address does not resolve,
// is refused, never answers, answers after 30 s, or streams forever (its load event never fires).
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionRuntime } from '../../src/engine/runtime/runtime.js';
import { waitFor } from '../helpers/session.js';

const REPETITIONS = 20;
/** How long the late site takes to answer: longer than the runtime's own start deadline (20 s). */
const LATE_MS = 30_000;

let root: string;
let runtime: SessionRuntime;
const servers: Array<Server | net.Server> = [];
const open: ServerResponse[] = [];
const sockets = new Set<net.Socket>();
const firstPages: Record<string, string> = {};

async function listen(server: Server | net.Server): Promise<number> {
  servers.push(server);
  // Closing waits for open connections: these servers hold theirs open on purpose.
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  const silent = net.createServer(() => {
    /* accepts, never answers */
  });
  const late = createServer((_, response) => {
    open.push(response);
    setTimeout(() => response.end('<!doctype html><title>Late</title>'), LATE_MS).unref();
  });
  const streaming = createServer((_, response) => {
    open.push(response);
    response.writeHead(200, { 'content-type': 'text/html' });
    response.write('<!doctype html><title>Streaming</title><p>still coming');
    const drip = setInterval(() => response.write('.'), 200);
    response.on('close', () => clearInterval(drip));
  });
  const closed = net.createServer();
  const refusedPort = await listen(closed);
  servers.pop();
  await new Promise((resolve) => closed.close(resolve));
  firstPages.unresolvable = 'http://nonexistent.invalid/';
  firstPages.refused = `http://127.0.0.1:${refusedPort}/`;
  firstPages['never answers'] = `http://127.0.0.1:${await listen(silent)}/`;
  firstPages['answers after 30 s'] = `http://127.0.0.1:${await listen(late)}/`;
  firstPages['load never fires'] = `http://127.0.0.1:${await listen(streaming)}/`;
  root = await mkdtemp(join(tmpdir(), 'rbk-first-page-'));
  ({ runtime } = await SessionRuntime.open({ root, egress: { allow: ['127.0.0.1/32'] } }));
});

afterAll(async () => {
  await runtime?.close();
  for (const response of open) response.destroy();
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  await rm(root, { recursive: true, force: true });
});

/** Starts one session per kind of first page, one after another; every one must be ready in time. */
async function round(browser: string): Promise<Record<string, string>> {
  const outcomes: Record<string, string> = {};
  for (const [kind, url] of Object.entries(firstPages)) {
    try {
      const session = await runtime.startSession({ browser, url, language: 'en', layout: 'us' });
      // Ready at all means it did not wait for the page: the late site answers after the runtime's
      // start deadline, so a start that waited for it would have failed (how long a start takes is
      // bench/'s figure, not this test's).
      outcomes[kind] = session.readyMs < LATE_MS ? 'running' : `ready after ${Math.round(session.readyMs)} ms`;
      if (session.control) {
        const pages = await session.control.pages();
        if (!pages.includes(url)) outcomes[kind] = `shows ${pages.join(', ')}`;
      }
      await runtime.stopSession(session.id);
    } catch (error) {
      outcomes[kind] = `error: ${(error as Error).message.split('\n')[0]}`;
    }
  }
  return outcomes;
}

const allRunning = () => Object.fromEntries(Object.keys(firstPages).map((kind) => [kind, 'running']));

describe('a first page that is slow, hangs or fails', () => {
  it(`leaves Chromium sessions running, ${REPETITIONS} times each`, async () => {
    for (let i = 0; i < REPETITIONS; i++) expect(await round('chromium'), `repetition ${i + 1}`).toEqual(allRunning());
  }, 300_000);

  it('leaves Firefox ESR sessions running too', async () => {
    for (let i = 0; i < 3; i++) expect(await round('firefox-esr'), `repetition ${i + 1}`).toEqual(allRunning());
  }, 180_000);

  it('shows the browser\'s own error page for an address that cannot load', async () => {
    const session = await runtime.startSession({ browser: 'chromium', url: firstPages.refused!, language: 'en', layout: 'us' });
    try {
      const failed = /ERR_|refused|isn.t working|can.t be reached/i;
      const text = await waitFor(() => session.control!.evaluate('document.body ? document.body.innerText : ""').catch(() => ''), (value) => failed.test(String(value)));
      expect(String(text)).toMatch(failed);
    } finally {
      await runtime.stopSession(session.id);
    }
  });
});
