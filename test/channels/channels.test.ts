// The channel seam without a browser: the registry refuses bad registrations and stays as it was,
// one owner answer for API and channels, and the router carrying a made-up channel here, forwarding
// it to the owning node over a WebSocket, seating, refusing and closing connections as RFB's are;
// and the door every connection passes, whatever the channel declares: seats per link, the
// address's share, open files, a reader that does not read, a peer that stops answering.
import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect as connectTcp, type AddressInfo, type Socket } from 'node:net';
import { Duplex, PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Channel, ChannelCredential, SessionEnds } from '../../src/engine/channels/channel.js';
import { Door, type Arrival, type DoorLimits, type Pass } from '../../src/engine/channels/door.js';
import { OpenFiles } from '../../src/engine/limits/open-files.js';
import { Presence } from '../../src/engine/channels/presence.js';
import { ChannelRegistry } from '../../src/engine/channels/registry.js';
import { PolicyRefusal, relay, webSocketEnd } from '../../src/engine/channels/relay.js';
import { ChannelRouter, type ChannelTarget } from '../../src/engine/channels/router.js';
import { sessionOwner } from '../../src/engine/store/owner.js';
import type { SessionRow } from '../../src/engine/store/store.js';

const SESSION = 'a'.repeat(32);

/** An end inside "the session" that answers every chunk with the same bytes, upper-cased. */
function echoEnd(): Duplex {
  const toCaller = new PassThrough();
  return new Duplex({
    read() {
      toCaller.once('readable', () => {
        let chunk;
        while ((chunk = toCaller.read()) !== null) this.push(chunk);
      });
    },
    write(chunk: Buffer, _encoding, done) {
      toCaller.write(Buffer.from(chunk.toString('latin1').toUpperCase(), 'latin1'));
      done();
    },
  });
}

interface TestChannel extends Channel {
  ends: number;
}

/** A door that also keeps who holds a seat, to look at. */
class WatchedDoor extends Door {
  readonly seats: Array<Omit<Arrival, 'needs' | 'channel'>> = [];

  override admit(arrival: Arrival): Pass | 'full' | 'address' | 'busy' {
    const pass = super.admit(arrival);
    if (typeof pass === 'string') return pass;
    const seat = { sessionId: arrival.sessionId, rights: arrival.rights, address: arrival.address };
    this.seats.push(seat);
    return {
      leave: () => {
        pass.leave();
        if (this.seats.includes(seat)) this.seats.splice(this.seats.indexOf(seat), 1);
      },
    };
  }
}

function testChannel(overrides: Partial<Channel> = {}): TestChannel {
  const channel: TestChannel = {
    name: 'echo',
    opensWith: ['share-link', 'view-link'],
    attachment: 'listener',
    closes: { endClosed: { code: 4003, reason: 'echo end closed' }, refused: { code: 4004, reason: 'echo refused' } },
    needs: { seats: { control: 8, view: 8 }, files: 1, messageBytes: 64 * 1024 },
    offered: () => true,
    ends: 0,
    openEnd: () => () => {
      channel.ends++;
      return echoEnd();
    },
    // A view link's connection may not send "x": its policy refuses it.
    carry: ({ socket, rights, openEnd }) =>
      relay(socket, openEnd!, {
        onEndClosed: channel.closes.endClosed,
        onRefused: channel.closes.refused,
        policy: () => ({
          admit(chunk, pass) {
            if (rights === 'view' && chunk.includes('x')) throw new PolicyRefusal('no x');
            pass(chunk);
          },
          leave() {},
        }),
      }),
    close() {},
    ...overrides,
  };
  return channel;
}

interface TestNode {
  server: Server;
  url: string;
  router: ChannelRouter;
  door: WatchedDoor;
  presence: Presence;
  statuses: EventEmitter;
  records: Array<{ id: string; viewers: number }>;
}

const nodes: TestNode[] = [];

afterEach(async () => {
  for (const node of nodes.splice(0)) {
    node.router.close();
    await new Promise((done) => node.server.close(done));
  }
});

/** A node with one channel; `running` sessions have ends here; upgrades to /open/<credential> open `target`. */
async function startNode(
  nodeId: string,
  channel: Channel,
  options: { running?: string[]; target?: Partial<ChannelTarget>; forwardTo?: () => TestNode; door?: Partial<DoorLimits>; openFiles?: OpenFiles } = {},
): Promise<TestNode> {
  const statuses = new EventEmitter();
  const records: TestNode['records'] = [];
  const presence = new Presence({ record: async (id, fields) => void records.push({ id, viewers: fields.viewers }), now: () => 0 });
  const running = new Set(options.running ?? []);
  const door = new WatchedDoor(options.door, options.openFiles);
  const router = new ChannelRouter({
    registry: new ChannelRegistry().register(channel),
    nodeId,
    presence,
    door,
    statusChanges: statuses as never,
    planOf: async () => undefined,
    endsOf: (id) => (running.has(id) ? ({ display: {} } as SessionEnds) : undefined),
    ...(options.forwardTo
      ? {
          forward: async (owner: string, id: string, name: string, credential: ChannelCredential) => {
            const node = options.forwardTo!();
            expect(owner).toBe('node-b');
            return () => webSocketEnd(new WebSocket(`${node.url.replace('http', 'ws')}/forwarded/${id}/${name}/${credential}`));
          },
        }
      : {}),
  });
  const server = createServer();
  server.on('upgrade', (request, socket, head) => {
    const [, kind, a, b, c] = (request.url ?? '').split('/');
    if (kind === 'forwarded') return router.openForwarded(request, socket, head, { sessionId: a!, channel: b!, credential: c as ChannelCredential });
    void router.open(request, socket, head, {
      channel: 'echo',
      row: { id: SESSION, status: 'running', node_id: nodeId } as SessionRow,
      credential: a as ChannelCredential,
      address: '203.0.113.9',
      ...options.target,
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const node = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, router, door, presence, statuses, records };
  nodes.push(node);
  return node;
}

/** Connects to a node; resolves with the socket once open, or with its close code and reason (or HTTP refusal). */
function connect(node: TestNode, credential: string): Promise<{ socket: WebSocket; closed: Promise<{ code: number; reason: string }> } | { refused: number }> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${node.url.replace('http', 'ws')}/open/${credential}`);
    const closed = new Promise<{ code: number; reason: string }>((done) => socket.on('close', (code, reason) => done({ code, reason: reason.toString() })));
    socket.on('open', () => resolve({ socket, closed }));
    socket.on('unexpected-response', (_request, response) => resolve({ refused: response.statusCode ?? 0 }));
    socket.on('error', () => undefined);
  });
}

function nextMessage(socket: WebSocket): Promise<string> {
  return new Promise((resolve) => socket.once('message', (data: Buffer) => resolve(data.toString())));
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((done) => setTimeout(done, 10));
  expect(check()).toBe(true);
}

describe('the channel registry', () => {
  it('takes a channel once, by a name the paths can carry', () => {
    const registry = new ChannelRegistry().register(testChannel());
    expect(registry.names()).toEqual(['echo']);
    expect(registry.get('echo')?.attachment).toBe('listener');
    expect(() => registry.register(testChannel())).toThrow(/registered already/);
    expect(registry.names()).toEqual(['echo']);
  });

  it('refuses a bad registration with what is wrong, and stays as it was', () => {
    const registry = new ChannelRegistry();
    expect(() => registry.register(testChannel({ name: 'Sound/../x' }))).toThrow(/lowercase letters/);
    expect(() => registry.register(testChannel({ name: '' }))).toThrow(/channel name/);
    // The share API's own routes keep their names (decisions.md 150).
    for (const name of ['state', 'events', 'ping', 'view-only', 'tabs']) expect(() => registry.register(testChannel({ name }))).toThrow(/a route of its own by that name/);
    expect(() => registry.register(testChannel({ opensWith: [] }))).toThrow(/at least one credential/);
    expect(() => registry.register(testChannel({ opensWith: ['cookie' as ChannelCredential] }))).toThrow(/unknown credential "cookie"/);
    expect(() => registry.register(testChannel({ attachment: 'ghost' as never }))).toThrow(/unknown attachment kind "ghost"/);
    expect(() => registry.register(testChannel({ needs: undefined as never }))).toThrow(/declare its needs at the door/);
    expect(() => registry.register(testChannel({ needs: { seats: { control: 1, view: 1 }, files: 1, messageBytes: 0 } }))).toThrow(/largest message a caller may send/);
    expect(() => registry.register(testChannel({ needs: { seats: { control: 1, view: 1 }, files: 1, messageBytes: 64 * 1024 * 1024 } }))).toThrow(/largest message a caller may send/);
    expect(() => registry.register(testChannel({ needs: { seats: { control: -1, view: 1 }, files: 1, messageBytes: 1024 } }))).toThrow(/declare its needs at the door/);
    expect(registry.names()).toEqual([]);
  });
});

describe('the owner of a session', () => {
  it('is this node, another node, or none, in one answer', () => {
    expect(sessionOwner({ status: 'running', node_id: 'node-a' }, 'node-a')).toEqual({ at: 'here' });
    expect(sessionOwner({ status: 'starting', node_id: null }, 'node-a')).toEqual({ at: 'here' });
    expect(sessionOwner({ status: 'running', node_id: 'node-b' }, 'node-a')).toEqual({ at: 'node', nodeId: 'node-b' });
    for (const status of ['stopping', 'suspended', 'error', 'deleted']) expect(sessionOwner({ status, node_id: 'node-b' }, 'node-a')).toEqual({ at: 'none' });
  });
});

describe('the channel router', () => {
  it('carries a connection on the owning node through the channel policy, counted by presence', async () => {
    const channel = testChannel();
    const node = await startNode('node-a', channel, { running: [SESSION] });
    const opened = await connect(node, 'share-link');
    if (!('socket' in opened)) throw new Error(`refused ${opened.refused}`);
    await until(() => node.presence.count(SESSION, 'listener') === 1);
    expect(node.presence.attended(SESSION)).toBe(true);
    expect(node.door.seats).toEqual([{ sessionId: SESSION, rights: 'control', address: '203.0.113.9' }]);
    const answer = nextMessage(opened.socket);
    opened.socket.send(Buffer.from('hello x'));
    expect(await answer).toBe('HELLO X');
    opened.socket.close();
    await until(() => !node.presence.attended(SESSION) && node.door.seats.length === 0);
  });

  it('ends a connection whose message the policy refuses, with the channel\'s close', async () => {
    const node = await startNode('node-a', testChannel(), { running: [SESSION] });
    const opened = await connect(node, 'view-link');
    if (!('socket' in opened)) throw new Error('refused');
    opened.socket.send(Buffer.from('x'));
    expect(await opened.closed).toEqual({ code: 4004, reason: 'echo refused' });
  });

  it('refuses a credential the channel does not take before the WebSocket opens', async () => {
    const node = await startNode('node-a', testChannel({ opensWith: ['api-key'] }), { running: [SESSION] });
    expect(await connect(node, 'share-link')).toEqual({ refused: 403 });
  });

  it('says the session is not running when it has no end here, and full when its seats are taken', async () => {
    const idle = await startNode('node-a', testChannel());
    const closed = await connect(idle, 'share-link');
    if (!('socket' in closed)) throw new Error('refused');
    expect((await closed.closed).code).toBe(4001);

    const full = await startNode('node-a', testChannel({ needs: { seats: { control: 0, view: 8 }, files: 1, messageBytes: 1024 } }), { running: [SESSION] });
    const refused = await connect(full, 'share-link');
    if (!('socket' in refused)) throw new Error('refused');
    expect((await refused.closed).code).toBe(4002);
    expect(full.presence.attended(SESSION)).toBe(false);
  });

  it('closes every connection of a session that ends', async () => {
    const node = await startNode('node-a', testChannel(), { running: [SESSION] });
    const opened = await connect(node, 'share-link');
    if (!('socket' in opened)) throw new Error('refused');
    await until(() => node.presence.attended(SESSION));
    node.statuses.emit('status', { id: SESSION, status: 'running' });
    node.statuses.emit('status', { id: SESSION, status: 'suspended' });
    expect(await opened.closed).toEqual({ code: 4000, reason: 'the session has ended' });
  });

  it('forwards to the node that runs the session, which applies the policy and counts the attachment', async () => {
    const ownerChannel = testChannel();
    const entryChannel = testChannel();
    const owner = await startNode('node-b', ownerChannel, { running: [SESSION] });
    const entry = await startNode('node-a', entryChannel, { target: { row: { id: SESSION, status: 'running', node_id: 'node-b' } as SessionRow }, forwardTo: () => owner });
    const opened = await connect(entry, 'view-link');
    if (!('socket' in opened)) throw new Error('refused');
    await until(() => owner.presence.attended(SESSION));
    // The entry node seats the caller by its address; the owner seats it again, address counted at the entry.
    expect(entry.door.seats).toEqual([{ sessionId: SESSION, rights: 'view', address: '203.0.113.9' }]);
    expect(owner.door.seats).toEqual([{ sessionId: SESSION, rights: 'view', address: null }]);
    expect(entry.presence.attended(SESSION)).toBe(false);
    expect(entryChannel.ends).toBe(0);
    const answer = nextMessage(opened.socket);
    opened.socket.send(Buffer.from('abc'));
    expect(await answer).toBe('ABC');
    // The owner's policy refuses for a view link; its close (the channel's `refused`, not the
    // entry node's "end closed") reaches the caller through the entry node.
    opened.socket.send(Buffer.from('x'));
    expect((await opened.closed).code).toBe(4004);
    await until(() => !owner.presence.attended(SESSION) && entry.door.seats.length === 0 && owner.door.seats.length === 0);
  });
});

/** Opens a WebSocket by hand over TCP and then never reads nor answers a ping: a reader that does not read. */
function stubbornClient(node: TestNode, credential: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const { port } = new URL(node.url);
    const socket = connectTcp(Number(port), '127.0.0.1', () => {
      socket.write(
        `GET /open/${credential} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
      );
    });
    socket.once('data', (chunk: Buffer) => {
      if (!chunk.toString('latin1').startsWith('HTTP/1.1 101')) return reject(new Error(`not upgraded: ${chunk.toString('latin1').slice(0, 40)}`));
      // From here on it reads nothing: the kernel's buffers fill, then the engine's.
      socket.pause();
      resolve(socket);
    });
    socket.on('error', () => undefined);
  });
}

describe('the door every connection passes', () => {
  it('keeps the share link a seat however many view-only connections hold theirs', async () => {
    const node = await startNode('node-a', testChannel({ needs: { seats: { control: 2, view: 3 }, files: 1, messageBytes: 1024 } }), { running: [SESSION] });
    const watchers = await Promise.all([1, 2, 3].map(() => connect(node, 'view-link')));
    await until(() => node.door.seats.length === 3);
    const fourth = await connect(node, 'view-link');
    if (!('socket' in fourth)) throw new Error('refused');
    expect(await fourth.closed).toEqual({ code: 4002, reason: 'too many viewers on this link' });
    const holder = await connect(node, 'share-link');
    if (!('socket' in holder)) throw new Error('refused');
    const answer = nextMessage(holder.socket);
    holder.socket.send('still here');
    expect(await answer).toBe('STILL HERE');
    for (const watcher of watchers) if ('socket' in watcher) watcher.socket.close();
    holder.socket.close();
  });

  it('holds one client address to its share of a channel, on every session of the node', async () => {
    const node = await startNode('node-a', testChannel(), { running: [SESSION], door: { perAddress: 2 } });
    const first = await connect(node, 'view-link');
    const second = await connect(node, 'share-link');
    await until(() => node.door.seats.length === 2);
    const third = await connect(node, 'share-link');
    if (!('socket' in third)) throw new Error('refused');
    expect(await third.closed).toEqual({ code: 4005, reason: 'too many viewers from this address' });
    for (const opened of [first, second]) if ('socket' in opened) opened.socket.close();
  });

  it('refuses a connection that would eat into the engine\'s open-files reserve', async () => {
    // A channel that says one connection holds 10,000 files, on an engine limited to 5,000.
    const node = await startNode('node-a', testChannel({ needs: { seats: { control: 8, view: 8 }, files: 10_000, messageBytes: 64 * 1024 } }), {
      running: [SESSION],
      openFiles: new OpenFiles({ limit: 5000, reserve: 256 }),
    });
    const refused = await connect(node, 'share-link');
    if (!('socket' in refused)) throw new Error('refused');
    expect(await refused.closed).toEqual({ code: 4006, reason: 'the service is busy; try again in a moment' });
    expect(node.presence.attended(SESSION)).toBe(false);
  });

  it('cuts off a reader that does not read once a bounded buffer is queued, and its seat comes back', async () => {
    // A channel that streams as fast as it may, whatever the reader does (as a DevTools answer flood would).
    const streaming = testChannel({
      carry: ({ socket }) =>
        new Promise<void>((resolve) => {
          const chunk = Buffer.alloc(64 * 1024, 7);
          const pump = setInterval(() => {
            for (let i = 0; i < 16 && socket.readyState === socket.OPEN; i++) socket.send(chunk);
          }, 1);
          socket.once('close', () => {
            clearInterval(pump);
            resolve();
          });
        }),
    });
    const node = await startNode('node-a', streaming, { running: [SESSION], door: { bufferBytes: 1024 * 1024 } });
    const reader = await stubbornClient(node, 'share-link');
    await until(() => node.door.seats.length === 1);
    // Cut off by the engine: its seat and attachment are given back, and the reader's socket ends.
    for (let i = 0; i < 1000 && node.door.seats.length > 0; i++) await new Promise((done) => setTimeout(done, 10));
    expect(node.door.seats).toEqual([]);
    expect(node.presence.attended(SESSION)).toBe(false);
    reader.destroy();
  });

  it('cuts off a peer that answers no ping within a heartbeat', async () => {
    const node = await startNode('node-a', testChannel(), { running: [SESSION], door: { heartbeatMs: 100 } });
    const silent = await stubbornClient(node, 'view-link');
    const answering = await connect(node, 'view-link');
    if (!('socket' in answering)) throw new Error('refused');
    await until(() => node.door.seats.length === 2);
    for (let i = 0; i < 500 && node.door.seats.length > 1; i++) await new Promise((done) => setTimeout(done, 10));
    // The silent one is gone; the one whose WebSocket answers pings stays.
    expect(node.door.seats.length).toBe(1);
    expect(answering.socket.readyState).toBe(WebSocket.OPEN);
    answering.socket.close();
    silent.destroy();
  });

  it('ends a connection whose channel fails, and nothing else', async () => {
    const failing = testChannel({
      carry: () => {
        throw new Error('a channel bug');
      },
    });
    const node = await startNode('node-a', failing, { running: [SESSION] });
    const opened = await connect(node, 'share-link');
    if (!('socket' in opened)) throw new Error('refused');
    expect((await opened.closed).code).toBe(1006);
    await until(() => node.door.seats.length === 0 && !node.presence.attended(SESSION));
    const again = await connect(node, 'view-link');
    expect('socket' in again).toBe(true);
    if ('socket' in again) again.socket.close();
  });
});
