// The channel seam without a browser: the registry refuses bad registrations and stays as it was,
// one owner answer for API and channels, and the router carrying a made-up channel here, forwarding
// it to the owning node over a WebSocket, seating, refusing and closing connections as RFB's are.
import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Duplex, PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Channel, ChannelCredential, ChannelRights, SeatRefusal, SessionEnds } from '../../src/engine/channels/channel.js';
import { Presence } from '../../src/engine/channels/presence.js';
import { ChannelRegistry } from '../../src/engine/channels/registry.js';
import { PolicyRefusal, relay, webSocketEnd } from '../../src/engine/channels/relay.js';
import { ChannelRouter, type ChannelTarget } from '../../src/engine/channels/router.js';
import { sessionOwner } from '../../src/engine/cluster/owner.js';

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
  seats: Array<{ sessionId: string; rights: ChannelRights; address: string | null }>;
  ends: number;
}

function testChannel(overrides: Partial<Channel> & { maxSeats?: number } = {}): TestChannel {
  const seats: TestChannel['seats'] = [];
  const channel: TestChannel = {
    name: 'echo',
    opensWith: ['share-link', 'view-link'],
    attachment: 'listener',
    closes: { endClosed: { code: 4003, reason: 'echo end closed' }, refused: { code: 4004, reason: 'echo refused' } },
    seats,
    ends: 0,
    openEnd: () => () => {
      channel.ends++;
      return echoEnd();
    },
    seat(sessionId, rights, address): { leave(): void } | SeatRefusal {
      if (seats.length >= (overrides.maxSeats ?? 8)) return 'full';
      const seat = { sessionId, rights, address };
      seats.push(seat);
      return { leave: () => void seats.splice(seats.indexOf(seat), 1) };
    },
    // A view link's connection may not send "x": its policy refuses it.
    carry: ({ socket, rights, openEnd }) =>
      relay(socket, openEnd, {
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
async function startNode(nodeId: string, channel: Channel, options: { running?: string[]; target?: Partial<ChannelTarget>; forwardTo?: () => TestNode } = {}): Promise<TestNode> {
  const statuses = new EventEmitter();
  const records: TestNode['records'] = [];
  const presence = new Presence({ record: async (id, fields) => void records.push({ id, viewers: fields.viewers }), now: () => 0 });
  const running = new Set(options.running ?? []);
  const router = new ChannelRouter({
    registry: new ChannelRegistry().register(channel),
    nodeId,
    presence,
    statusChanges: statuses as never,
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
      row: { id: SESSION, status: 'running', node_id: nodeId },
      credential: a as ChannelCredential,
      address: '203.0.113.9',
      ...options.target,
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const node = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, router, presence, statuses, records };
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
    expect(() => registry.register(testChannel({ opensWith: [] }))).toThrow(/at least one credential/);
    expect(() => registry.register(testChannel({ opensWith: ['cookie' as ChannelCredential] }))).toThrow(/unknown credential "cookie"/);
    expect(() => registry.register(testChannel({ attachment: 'ghost' as never }))).toThrow(/unknown attachment kind "ghost"/);
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
    expect(channel.seats).toEqual([{ sessionId: SESSION, rights: 'control', address: '203.0.113.9' }]);
    const answer = nextMessage(opened.socket);
    opened.socket.send(Buffer.from('hello x'));
    expect(await answer).toBe('HELLO X');
    opened.socket.close();
    await until(() => !node.presence.attended(SESSION) && channel.seats.length === 0);
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

    const full = await startNode('node-a', testChannel({ maxSeats: 0 } as never), { running: [SESSION] });
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
    const entry = await startNode('node-a', entryChannel, { target: { row: { id: SESSION, status: 'running', node_id: 'node-b' } }, forwardTo: () => owner });
    const opened = await connect(entry, 'view-link');
    if (!('socket' in opened)) throw new Error('refused');
    await until(() => owner.presence.attended(SESSION));
    // The entry node seats the caller by its address; the owner seats it again, address counted at the entry.
    expect(entryChannel.seats).toEqual([{ sessionId: SESSION, rights: 'view', address: '203.0.113.9' }]);
    expect(ownerChannel.seats).toEqual([{ sessionId: SESSION, rights: 'view', address: null }]);
    expect(entry.presence.attended(SESSION)).toBe(false);
    expect(entryChannel.ends).toBe(0);
    const answer = nextMessage(opened.socket);
    opened.socket.send(Buffer.from('abc'));
    expect(await answer).toBe('ABC');
    // The owner's policy refuses for a view link; its close (the channel's `refused`, not the
    // entry node's "end closed") reaches the caller through the entry node.
    opened.socket.send(Buffer.from('x'));
    expect((await opened.closed).code).toBe(4004);
    await until(() => !owner.presence.attended(SESSION) && entryChannel.seats.length === 0 && ownerChannel.seats.length === 0);
  });
});
