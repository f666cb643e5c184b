// An engine that cannot start leaves nothing running (issue 48): when its public port cannot
// listen, or when one of its features fails to start, everything it opened is closed again (the
// features that started, last first; its listeners; its runtime and database), so the operator can
// fix the cause and start it again at once. A real engine on SQLite, with the fake runtime (which
// tells whether it was closed) and features of the test's own in its list. An engine told to stop
// (SIGTERM) stops while viewers are attached: it ends their sockets rather than wait for them.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, connect, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/engine.js';
import type { EngineModule } from '../../src/engine/module.js';
import { FakeRuntime } from '../helpers/fake-runtime.js';
import { startEngine } from '../helpers/engine.js';
import { v8Caller } from '../helpers/site.js';
import { waitFor } from '../helpers/session.js';
import { WebSocket } from 'ws';

let dataDir: string;
const busy: Server[] = [];

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rbk-engine-start-'));
});

afterEach(async () => {
  for (const server of busy.splice(0)) await new Promise<void>((done) => server.close(() => done()));
  await rm(dataDir, { recursive: true, force: true });
});

/** A port something else listens on. */
async function takenPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  busy.push(server);
  return (server.address() as AddressInfo).port;
}

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** Whether a TCP connection to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(true));
  });
}

/** Whether the fake runtime was closed: it then refuses to start a session. */
async function closed(runtime: FakeRuntime): Promise<boolean> {
  return runtime.startSession({ browser: 'chromium' } as never).then(() => false, (error: Error) => error.message === 'the runtime is closed');
}

/** A feature that says when it starts and stops, in one shared diary. */
function noted(name: string, diary: string[], start?: () => void): EngineModule {
  return {
    name,
    start: () => {
      diary.push(`start ${name}`);
      start?.();
    },
    stop: () => void diary.push(`stop ${name}`),
  };
}

it('closes everything it opened when its port is taken, and starts no feature', async () => {
  const runtime = new FakeRuntime();
  const diary: string[] = [];
  const port = await takenPort();
  await expect(createEngine({ dataDir, port, runtime, modules: [noted('first', diary)] })).rejects.toThrow(/EADDRINUSE/);
  expect(diary).toEqual([]);
  expect(await closed(runtime)).toBe(true);
  // The cause fixed, the same data directory starts at once.
  const engine = await createEngine({ dataDir, port: 0, runtime: new FakeRuntime(), modules: [noted('first', diary)] });
  expect((await fetch(`${engine.url}/healthz`)).status).toBe(200);
  await engine.close();
  expect(diary).toEqual(['start first', 'stop first']);
});

it('stops the features that started, last first, and closes its listeners when one fails to start', async () => {
  const runtime = new FakeRuntime();
  const diary: string[] = [];
  const port = await freePort();
  const operatorPort = await freePort();
  const failing = noted('failing', diary, () => {
    throw new Error('its settings are wrong');
  });
  const start = createEngine({ dataDir, port, runtime, config: { operator: { port: operatorPort } }, modules: [noted('first', diary), noted('second', diary), failing, noted('never', diary)] });
  await expect(start).rejects.toThrow("the engine's failing did not start: its settings are wrong");
  expect(diary).toEqual(['start first', 'start second', 'start failing', 'stop second', 'stop first']);
  expect(await refused(port)).toBe(true);
  expect(await refused(operatorPort)).toBe(true);
  expect(await closed(runtime)).toBe(true);
});

it('stops its features last first when it closes', async () => {
  const diary: string[] = [];
  const engine = await createEngine({ dataDir, port: 0, runtime: new FakeRuntime(), modules: [noted('first', diary), noted('second', diary)] });
  await engine.close();
  expect(diary).toEqual(['start first', 'start second', 'stop second', 'stop first']);
  // Two features of one name are a mistake said at once.
  await expect(createEngine({ dataDir, port: 0, runtime: new FakeRuntime(), modules: [noted('twin', diary), noted('twin', diary)] })).rejects.toThrow('two engine modules are named "twin"');
});

it('stops while viewers are attached, ending their sockets instead of waiting for them to leave', async () => {
  const fixture = await startEngine({ name: 'engine-stop', runtime: 'fake' });
  const api = v8Caller(() => fixture.engine.url, () => fixture.account.key);
  const created = await api('/vm/create', { browser: 'chromium', url: 'https://example.com/' });
  await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (status) => status === 'running', 30_000);
  const linkId = new URL(created.shareUrl).search.slice(1);
  const viewers = ['files', 'files'].map((channel) => new WebSocket(`${fixture.engine.url.replace(/^http/, 'ws')}/share/${linkId}/${channel}`));
  await Promise.all(viewers.map((viewer) => new Promise((opened, failed) => viewer.once('open', opened).once('unexpected-response', failed))));
  const ended = viewers.map((viewer) => new Promise((done) => viewer.once('close', done)));
  // Before the door ended attachments, this waited for the last viewer to leave (SIGTERM hung).
  await fixture.close();
  await Promise.all(ended);
  expect(viewers.map((viewer) => viewer.readyState)).toEqual([WebSocket.CLOSED, WebSocket.CLOSED]);
}, 60_000);
