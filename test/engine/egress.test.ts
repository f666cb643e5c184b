// Egress route tests: real proxy and target servers on loopback, DNS answers simulated through the
// route's lookup seam, so nothing here needs (or touches) the public internet; and the gate's limits
// on what one session can make the engine hold (connections, silence, the open-files reserve).
import type dns from 'node:dns';
import { readdirSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { classifyAddress, isAddressAllowed, parseAllowRanges } from '../../src/engine/runtime/egress/address-policy.js';
import { startEgressRoute, type EgressRefusal, type EgressRoute } from '../../src/engine/runtime/egress/egress.js';
import { OpenFiles } from '../../src/engine/limits/open-files.js';
import { EnginePorts } from '../../src/engine/runtime/egress/engine-ports.js';

const BODY = 'x'.repeat(10_000);
const LOOPBACK_ONLY = { allow: ['127.0.0.0/8', '::1/128'] };
const STEP_MS = 5_000;

// ---------------------------------------------------------------------------------------------
// Helpers

interface Target {
  port: number;
  connections: number;
  requests: number;
  sockets: Set<net.Socket>;
  close(): Promise<void>;
}

async function startTarget(): Promise<Target> {
  const sockets = new Set<net.Socket>();
  const server = http.createServer((_request, response) => {
    target.requests += 1;
    response.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(BODY.length) });
    response.end(BODY);
  });
  const target: Target = {
    port: 0,
    connections: 0,
    requests: 0,
    sockets,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on('connection', (socket: net.Socket) => {
    target.connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  target.port = (server.address() as net.AddressInfo).port;
  return target;
}

function bounded<T>(promise: Promise<T>, what: string, ms = STEP_MS): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

interface RawAnswer {
  status: number;
  body: string;
}

/** Writes raw bytes to the route and reads the whole answer, for requests node:http would not send. */
function rawExchange(route: EgressRoute, text: string): Promise<RawAnswer> {
  const exchange = new Promise<RawAnswer>((resolve, reject) => {
    const socket = net.connect(route.port, '127.0.0.1', () => socket.write(text));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(received)?.[1] ?? 0);
      const bodyStart = received.indexOf('\r\n\r\n');
      resolve({ status, body: bodyStart === -1 ? '' : received.slice(bodyStart + 4) });
    });
  });
  return bounded(exchange, `raw exchange ${JSON.stringify(text.split('\r\n')[0])}`);
}

function getThrough(route: EgressRoute, url: string): Promise<RawAnswer> {
  const request = new Promise<RawAnswer>((resolve, reject) => {
    const client = http.request(
      { host: '127.0.0.1', port: route.port, path: url, agent: false, headers: { host: new URL(url).host } },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        response.on('error', reject);
      },
    );
    client.on('error', reject);
    client.end();
  });
  return bounded(request, `GET ${url} through the route`);
}

function openTunnel(route: EgressRoute, authority: string): Promise<{ status: number; socket: net.Socket }> {
  const tunnel = new Promise<{ status: number; socket: net.Socket }>((resolve, reject) => {
    const client = http.request({ host: '127.0.0.1', port: route.port, method: 'CONNECT', path: authority, agent: false });
    client.on('connect', (response, socket: net.Socket) => resolve({ status: response.statusCode ?? 0, socket }));
    client.on('error', reject);
    client.end();
  });
  return bounded(tunnel, `CONNECT ${authority}`);
}

/** Sends one GET through an open tunnel and resolves once the whole body is back, leaving the tunnel open. */
function getInTunnel(socket: net.Socket, host: string): Promise<string> {
  const exchange = new Promise<string>((resolve, reject) => {
    let received = '';
    const onData = (chunk: Buffer): void => {
      received += chunk.toString('utf8');
      const bodyStart = received.indexOf('\r\n\r\n');
      if (bodyStart !== -1 && received.length - bodyStart - 4 >= BODY.length) {
        socket.off('data', onData);
        resolve(received.slice(bodyStart + 4));
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(`GET /through-tunnel HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`);
  });
  return bounded(exchange, 'GET inside the tunnel');
}

function closed(socket: net.Socket): Promise<void> {
  if (socket.destroyed) return Promise.resolve();
  return bounded(new Promise<void>((resolve) => socket.once('close', () => resolve())), 'socket close');
}

/** A lookup that answers from a table and counts its calls, as a resolver under an attacker's control would. */
function fakeLookup(answers: Record<string, string[]>): { lookup: typeof dns.lookup; calls: string[] } {
  const calls: string[] = [];
  const lookup = (hostname: string, _options: unknown, callback: (...args: unknown[]) => void): void => {
    calls.push(hostname);
    const addresses = answers[hostname];
    setImmediate(() => {
      if (!addresses) {
        callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
        return;
      }
      callback(null, addresses.map((address) => ({ address, family: net.isIP(address) })));
    });
  };
  return { lookup: lookup as unknown as typeof dns.lookup, calls };
}

const routes: EgressRoute[] = [];
async function route(options: Parameters<typeof startEgressRoute>[0]): Promise<EgressRoute> {
  const started = await startEgressRoute(options);
  routes.push(started);
  return started;
}

afterEach(async () => {
  await Promise.all(routes.splice(0).map((started) => started.close()));
});

// ---------------------------------------------------------------------------------------------
// Address classification

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['0x7f.0.0.1', 'loopback'],
    ['2130706433', 'loopback'],
    ['017700000001', 'loopback'],
    ['127.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['100.64.0.1', 'carrier-grade-nat'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['172.32.0.1', null],
    ['8.8.8.8', null],
    ['93.184.216.34', null],
  ] as const)('IPv4 %s is %s', (ip, category) => {
    expect(classifyAddress(ip)).toBe(category);
  });

  it.each([
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fd00:ec2::254', 'metadata'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:127.0.0.1]', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['::127.0.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['100::1', 'reserved'],
    ['fec0::1', 'reserved'],
    ['::ffff:8.8.8.8', null],
    ['64:ff9b::8.8.8.8', null],
    ['2001:4860:4860::8888', null],
    ['2606:4700::1111', null],
  ] as const)('IPv6 %s is %s', (ip, category) => {
    expect(classifyAddress(ip)).toBe(category);
  });

  it.each(['', 'not-an-ip', '1.2.3.4.5', '256.0.0.1', 'localhost'])('%j is invalid, never public', (text) => {
    expect(classifyAddress(text)).toBe('invalid');
  });
});

describe('parseAllowRanges and isAddressAllowed', () => {
  it('rejects anything that is not a range, naming it', () => {
    expect(() => parseAllowRanges(['127.0.0.0/8', 'nonsense'])).toThrow(/"nonsense" is not an IP range/);
    expect(() => parseAllowRanges(['10.0.0.0/33'])).toThrow(/10\.0\.0\.0\/33/);
    // An odd spelling in the operator's own configuration is more likely a mistake than intent.
    expect(() => parseAllowRanges(['127.1/8'])).toThrow(/127\.1\/8/);
  });

  it('normalises ranges, single addresses and IPv4-mapped ranges', () => {
    expect(parseAllowRanges(['10.1.2.3/8', '::1', '192.168.0.7', '::ffff:127.0.0.0/104']).map((r) => r.cidr)).toEqual([
      '10.0.0.0/8',
      '::1/128',
      '192.168.0.7/32',
      '127.0.0.0/8',
    ]);
  });

  it('allows public addresses and those inside allowed ranges only', () => {
    expect(isAddressAllowed('8.8.8.8', { allow: [] })).toBe(true);
    expect(isAddressAllowed('127.0.0.1', { allow: [] })).toBe(false);
    expect(isAddressAllowed('127.0.0.1', { allow: ['127.0.0.0/8'] })).toBe(true);
    expect(isAddressAllowed('::ffff:127.0.0.1', { allow: ['127.0.0.0/8'] })).toBe(true);
    expect(isAddressAllowed('::1', { allow: ['127.0.0.0/8'] })).toBe(false);
    expect(isAddressAllowed('127.0.0.1', { allow: ['::ffff:127.0.0.0/104'] })).toBe(true);
    expect(isAddressAllowed('169.254.1.1', { allow: ['169.254.0.0/16'] })).toBe(true);
    expect(isAddressAllowed('not-an-ip', { allow: ['0.0.0.0/0', '::/0'] })).toBe(false);
    expect(isAddressAllowed('10.0.0.1', parseAllowRanges(['10.0.0.0/8']))).toBe(true);
  });

  it('lets a metadata address through only when a range names it exactly', () => {
    expect(isAddressAllowed('169.254.169.254', { allow: ['169.254.0.0/16'] })).toBe(false);
    expect(isAddressAllowed('169.254.169.254', { allow: ['0.0.0.0/0'] })).toBe(false);
    expect(isAddressAllowed('169.254.169.254', { allow: ['169.254.169.254/32'] })).toBe(true);
    expect(isAddressAllowed('fd00:ec2::254', { allow: ['fc00::/7'] })).toBe(false);
  });

  it('refuses to start a route with a bad policy', async () => {
    await expect(startEgressRoute({ sessionId: 's', policy: { allow: ['nonsense'] } })).rejects.toThrow(/nonsense/);
    await expect(
      startEgressRoute({ sessionId: 's', policy: { allow: [] }, upstreamProxyUrl: 'ftp://example.com' }),
    ).rejects.toThrow(/upstreamProxyUrl/);
  });
});

// ---------------------------------------------------------------------------------------------
// The route with real servers

describe('egress route: allowed traffic', () => {
  let target: Target;
  beforeAll(async () => {
    target = await startTarget();
  });
  afterAll(async () => {
    await target.close();
  });

  it('listens on its own loopback port per session', async () => {
    const first = await route({ sessionId: 'a', policy: LOOPBACK_ONLY });
    const second = await route({ sessionId: 'b', policy: LOOPBACK_ONLY });
    expect(first.sessionId).toBe('a');
    expect(first.proxyUrl).toBe(`http://127.0.0.1:${first.port}`);
    expect(first.port).not.toBe(second.port);
    expect(first.bytes()).toEqual({ sent: 0, received: 0 });
  });

  it('forwards a plain HTTP request and counts its bytes', async () => {
    const egress = await route({ sessionId: 'http', policy: LOOPBACK_ONLY });
    const answer = await getThrough(egress, `http://127.0.0.1:${target.port}/hello`);
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(BODY);
    const bytes = egress.bytes();
    expect(bytes.received).toBeGreaterThanOrEqual(BODY.length);
    expect(bytes.sent).toBeGreaterThan(0);
  });

  it('opens a CONNECT tunnel and counts its bytes while the tunnel is still open', async () => {
    const egress = await route({ sessionId: 'connect', policy: LOOPBACK_ONLY });
    const { status, socket } = await openTunnel(egress, `127.0.0.1:${target.port}`);
    expect(status).toBe(200);
    const body = await getInTunnel(socket, `127.0.0.1:${target.port}`);
    expect(body).toBe(BODY);
    const whileOpen = egress.bytes();
    expect(whileOpen.received).toBeGreaterThanOrEqual(BODY.length);
    expect(whileOpen.sent).toBeGreaterThan(0);
    socket.destroy();
    await closed(socket);
    // Totals survive the connection: closed connections move into the route's running total.
    await bounded(
      (async () => {
        while (egress.bytes().received < whileOpen.received) await new Promise((r) => setTimeout(r, 20));
      })(),
      'byte totals after close',
    );
  });

  it('resolves a name once and connects to exactly the address it checked', async () => {
    const dnsAnswers = fakeLookup({ 'app.example': ['127.0.0.1'] });
    const egress = await route({ sessionId: 'pinned', policy: LOOPBACK_ONLY, lookup: dnsAnswers.lookup });
    const before = target.requests;

    const answer = await getThrough(egress, `http://app.example:${target.port}/`);
    expect(answer.status).toBe(200);
    expect(dnsAnswers.calls).toEqual(['app.example']);

    const { status, socket } = await openTunnel(egress, `app.example:${target.port}`);
    expect(status).toBe(200);
    expect(await getInTunnel(socket, `app.example:${target.port}`)).toBe(BODY);
    socket.destroy();
    expect(dnsAnswers.calls).toEqual(['app.example', 'app.example']);
    expect(target.requests).toBe(before + 2);
  });

  it('close() ends an open CONNECT tunnel on both sides and stops listening', async () => {
    const egress = await route({ sessionId: 'closing', policy: LOOPBACK_ONLY });
    const { status, socket } = await openTunnel(egress, `127.0.0.1:${target.port}`);
    expect(status).toBe(200);
    await getInTunnel(socket, `127.0.0.1:${target.port}`);
    const targetSide = [...target.sockets];
    expect(targetSide.length).toBeGreaterThan(0);

    await bounded(egress.close(), 'route close');
    await closed(socket);
    await Promise.all(targetSide.map((side) => closed(side)));
    await expect(
      bounded(
        new Promise((resolve, reject) => {
          const probe = net.connect(egress.port, '127.0.0.1', () => resolve(probe.destroy()));
          probe.on('error', reject);
        }),
        'connect after close',
      ),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('sends traffic on through an upstream proxy after checking it', async () => {
    const upstream = await route({ sessionId: 'upstream', policy: LOOPBACK_ONLY });
    const egress = await route({ sessionId: 'exit', policy: LOOPBACK_ONLY, upstreamProxyUrl: upstream.proxyUrl });

    const answer = await getThrough(egress, `http://127.0.0.1:${target.port}/via-upstream`);
    expect(answer.status).toBe(200);
    const { status, socket } = await openTunnel(egress, `127.0.0.1:${target.port}`);
    expect(status).toBe(200);
    expect(await getInTunnel(socket, `127.0.0.1:${target.port}`)).toBe(BODY);
    socket.destroy();
    expect(upstream.bytes().received).toBeGreaterThanOrEqual(2 * BODY.length);
    expect(egress.bytes().received).toBeGreaterThanOrEqual(2 * BODY.length);
  });
});

describe('egress route: refused traffic', () => {
  let target: Target;
  let egress: EgressRoute;
  const refusals: EgressRefusal[] = [];

  beforeAll(async () => {
    target = await startTarget();
  });
  afterAll(async () => {
    // The point of every case below: nothing ever reached the target.
    expect(target.connections).toBe(0);
    expect(target.requests).toBe(0);
    await target.close();
  });

  async function refusingRoute(lookup?: typeof dns.lookup): Promise<EgressRoute> {
    refusals.length = 0;
    egress = await route({ sessionId: 'guarded', policy: { allow: [] }, ...(lookup ? { lookup } : {}) });
    egress.on('refused', (refusal) => refusals.push(refusal));
    return egress;
  }

  const targets = [
    ['127.0.0.1', 'loopback'],
    ['localhost', 'loopback'],
    ['0x7f.0.0.1', 'loopback'],
    ['2130706433', 'loopback'],
    ['017700000001', 'loopback'],
    ['127.1', 'loopback'],
    ['[::1]', 'loopback'],
    ['[::ffff:127.0.0.1]', 'loopback'],
    ['169.254.169.254', 'cloud metadata'],
    ['10.0.0.1', 'private'],
    ['metadata.google.internal', 'cloud metadata'],
  ] as const;

  // A name that had to be resolved is refused without saying what it resolved to (the operator's
  // internal addresses are not the viewer's business); addresses and metadata names say what they are.
  const shownWords = (host: string, words: string) => (host === 'localhost' ? 'leads to an address that is not allowed' : words);

  it.each(targets)('plain HTTP to %s is refused as %s', async (host, words) => {
    const guarded = await refusingRoute();
    const answer = await rawExchange(
      guarded,
      `GET http://${host}:${target.port}/secret HTTP/1.1\r\nHost: ${host}:${target.port}\r\n\r\n`,
    );
    expect(answer.status).toBe(403);
    expect(answer.body).toMatch(/^remote-browser-kit egress: .* not allowed$/);
    expect(answer.body).toContain(shownWords(host, words));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]?.reason).toContain(words);
  });

  it.each(targets)('CONNECT to %s is refused as %s', async (host, words) => {
    const guarded = await refusingRoute();
    const answer = await rawExchange(guarded, `CONNECT ${host}:${target.port} HTTP/1.1\r\nHost: ${host}:${target.port}\r\n\r\n`);
    expect(answer.status).toBe(403);
    expect(answer.body).toContain(shownWords(host, words));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]?.target).toMatch(new RegExp(`:${target.port}$`));
  });

  it('refuses a public-looking name whose DNS answer is private (rebinding)', async () => {
    const dnsAnswers = fakeLookup({ 'rebind.example': ['10.0.0.1'] });
    const guarded = await refusingRoute(dnsAnswers.lookup);
    const answer = await rawExchange(guarded, `CONNECT rebind.example:443 HTTP/1.1\r\nHost: rebind.example:443\r\n\r\n`);
    expect(answer.status).toBe(403);
    // The viewer is not told what the name resolves to inside the operator's network; the engine is.
    expect(answer.body).toBe('remote-browser-kit egress: rebind.example leads to an address that is not allowed');
    expect(refusals).toEqual([
      { target: 'rebind.example:443', reason: expect.stringContaining('10.0.0.1') as unknown, address: '10.0.0.1', category: 'private' },
    ]);
  });

  it("refuses this host's own public address, by name and as an address (services listening on every address)", async () => {
    // A host with a public address (this test machine has none; its interfaces are given here).
    const dnsAnswers = fakeLookup({ 'self.example': ['93.184.216.34'] });
    egress = await route({ sessionId: 'host', policy: { allow: [] }, lookup: dnsAnswers.lookup, hostAddresses: () => ['127.0.0.1', '93.184.216.34'] });
    const seen: EgressRefusal[] = [];
    egress.on('refused', (refusal) => seen.push(refusal));
    const byName = await rawExchange(egress, 'CONNECT self.example:443 HTTP/1.1\r\nHost: self.example:443\r\n\r\n');
    expect(byName.status).toBe(403);
    expect(byName.body).not.toContain('93.184.216.34');
    const byAddress = await rawExchange(egress, 'GET http://[::ffff:93.184.216.34]/ HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(byAddress.status).toBe(403);
    expect(byAddress.body).toContain('an address of this host');
    expect(seen.map((refusal) => refusal.reason)).toEqual([expect.stringContaining('an address of this host'), expect.stringContaining('an address of this host')]);
  });

  it('refuses a name when any one of its answers is not allowed', async () => {
    const dnsAnswers = fakeLookup({ 'mixed.example': ['127.0.0.1', '10.0.0.1'] });
    const mixed = await route({ sessionId: 'mixed', policy: LOOPBACK_ONLY, lookup: dnsAnswers.lookup });
    const answer = await rawExchange(mixed, `GET http://mixed.example:${target.port}/ HTTP/1.1\r\nHost: mixed.example\r\n\r\n`);
    expect(answer.status).toBe(403);
    expect(answer.body).not.toContain('10.0.0.1');
    expect(answer.body).not.toContain('127.0.0.1');
    expect(refusals[0]?.reason).toContain('10.0.0.1');
  });

  it('answers broken requests with an error and keeps serving', async () => {
    const dnsAnswers = fakeLookup({ 'public.example': ['8.8.8.8'] });
    const guarded = await refusingRoute(dnsAnswers.lookup);
    const cases: Array<[string, number]> = [
      ['garbage\r\n\r\n', 400],
      ['GET http://no-host-header.example/ HTTP/1.1\r\n\r\n', 400],
      ['GET /relative HTTP/1.1\r\nHost: x\r\n\r\n', 400],
      ['GET ftp://files.example/ HTTP/1.1\r\nHost: files.example\r\n\r\n', 400],
      ['CONNECT no-port HTTP/1.1\r\nHost: no-port\r\n\r\n', 400],
      ['CONNECT bad%00host:443 HTTP/1.1\r\nHost: x\r\n\r\n', 400],
      ['GET http://unknown.example/ HTTP/1.1\r\nHost: unknown.example\r\n\r\n', 502],
      ['CONNECT unknown.example:443 HTTP/1.1\r\nHost: unknown.example:443\r\n\r\n', 502],
    ];
    for (const [text, status] of cases) {
      const answer = await rawExchange(guarded, text);
      expect(answer.status, text).toBe(status);
    }
    expect(refusals).toEqual([]);
    // Still alive: a refused request afterwards is answered like any other.
    expect((await rawExchange(guarded, `CONNECT 127.0.0.1:${target.port} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)).status).toBe(403);
  });

  it('checks before handing anything to an upstream proxy', async () => {
    let upstreamConnections = 0;
    const upstream = net.createServer((socket) => {
      upstreamConnections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = upstream.address() as net.AddressInfo;
      const guarded = await route({
        sessionId: 'upstream-guarded',
        policy: { allow: [] },
        upstreamProxyUrl: `http://127.0.0.1:${port}`,
      });
      expect((await rawExchange(guarded, `CONNECT 10.0.0.1:443 HTTP/1.1\r\nHost: 10.0.0.1:443\r\n\r\n`)).status).toBe(403);
      expect((await rawExchange(guarded, `GET http://[::1]/ HTTP/1.1\r\nHost: [::1]\r\n\r\n`)).status).toBe(403);
      expect(upstreamConnections).toBe(0);
    } finally {
      await new Promise<void>((resolve) => upstream.close(() => resolve()));
    }
  });
});

// ---------------------------------------------------------------------------------------------
// What one session can make the engine hold (decisions.md 48)

/** Opens `count` connections to the route that send nothing; each notes when it was closed. */
async function silentConnections(port: number, count: number): Promise<Array<{ socket: net.Socket; closedAt: number | null }>> {
  const opened = await Promise.all(
    Array.from({ length: count }, () =>
      bounded(
        new Promise<{ socket: net.Socket; closedAt: number | null }>((resolve) => {
          const entry = { socket: net.connect(port, '127.0.0.1'), closedAt: null as number | null };
          entry.socket.on('error', () => undefined);
          entry.socket.once('close', () => (entry.closedAt = Date.now()));
          entry.socket.once('connect', () => resolve(entry));
          entry.socket.once('close', () => resolve(entry));
        }),
        'a connection to the route',
      ),
    ),
  );
  return opened;
}

describe("egress route: the engine's own listeners (issue 43, finding 6)", () => {
  // Two loopback listeners: one stands for the engine's own (its public port, operator listener),
  // the other for a site the operator allowed on loopback.
  let engineListener: Target;
  let site: Target;
  beforeAll(async () => {
    [engineListener, site] = await Promise.all([startTarget(), startTarget()]);
  });
  afterAll(async () => {
    // Every spelling below was refused before a connection was made.
    expect(engineListener.connections).toBe(0);
    await Promise.all([engineListener.close(), site.close()]);
  });

  async function guardedRoute(allow: string[], ports: EnginePorts) {
    const refusals: EgressRefusal[] = [];
    const dnsAnswers = fakeLookup({ 'engine.example': ['127.0.0.1'], 'self.example': ['93.184.216.34'] });
    const egress = await route({ sessionId: 'own-ports', policy: { allow }, lookup: dnsAnswers.lookup, enginePorts: ports, hostAddresses: () => ['127.0.0.1', '93.184.216.34'] });
    egress.on('refused', (refusal) => refusals.push(refusal));
    return { egress, refusals };
  }

  it.each([
    ['127.0.0.0/8', '::1/128'],
    ['127.0.0.1/32'],
    ['0.0.0.0/0', '::/0'],
  ])('refuses them on every address of this host, whatever the allow list (%s), and still serves an allowed loopback site', async (...allow) => {
    const ports = new EnginePorts();
    ports.add(engineListener.port);
    const { egress, refusals } = await guardedRoute(allow, ports);
    const port = engineListener.port;
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '0x7f.0.0.1', '93.184.216.34']) {
      const answer = await getThrough(egress, `http://${host}:${port}/metrics`);
      expect([host, answer.status]).toEqual([host, 403]);
      // The host's public address is outside the loopback ranges: refused as this host's, as before.
      const words = host === '93.184.216.34' && allow[0] !== '0.0.0.0/0' ? 'is an address of this host' : `:${port} is a port of the remote browser service itself`;
      expect(answer.body).toMatch(/^remote-browser-kit egress: .* not allowed$/);
      expect(answer.body).toContain(words);
      const tunnel = await rawExchange(egress, `CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`);
      expect([host, tunnel.status]).toEqual([host, 403]);
    }
    // Further loopback addresses and the unspecified one reach this host too, where the range allows them.
    if (allow[0] !== '127.0.0.1/32') {
      for (const host of ['127.0.0.2', '0.0.0.0']) expect([host, (await getThrough(egress, `http://${host}:${port}/healthz`)).status]).toEqual([host, 403]);
    }
    // A name that resolves to this host: refused after the lookup, without saying where it leads.
    const named = await getThrough(egress, `http://engine.example:${port}/healthz`);
    expect(named.status).toBe(403);
    expect(named.body).toBe('remote-browser-kit egress: engine.example leads to an address that is not allowed');
    expect(refusals.at(-1)).toMatchObject({ target: `engine.example:${port}`, category: 'engine-listener', address: '127.0.0.1' });
    expect(refusals.at(-1)?.reason).toContain(`port ${port} is one of the engine's own listeners`);
    // Only what the allow list itself leaves out was refused for another reason.
    const outside = allow[0] === '0.0.0.0/0' ? [] : allow[0] === '127.0.0.0/8' ? ['93.184.216.34', '0.0.0.0'] : ['93.184.216.34'];
    expect([...new Set(refusals.filter((refusal) => refusal.category !== 'engine-listener').map((refusal) => refusal.address))]).toEqual(outside);
    // The operator's loopback site on another port still loads.
    const allowed = await getThrough(egress, `http://127.0.0.1:${site.port}/page`);
    expect([allowed.status, allowed.body]).toEqual([200, BODY]);
  });

  it('refuses a port the engine listens on from the moment it is added (after the route started), and serves it once taken away', async () => {
    const ports = new EnginePorts();
    const { egress } = await guardedRoute(['127.0.0.0/8'], ports);
    expect((await getThrough(egress, `http://127.0.0.1:${site.port}/`)).status).toBe(200);
    const forget = ports.add(site.port);
    expect((await getThrough(egress, `http://127.0.0.1:${site.port}/`)).status).toBe(403);
    forget();
    expect((await getThrough(egress, `http://127.0.0.1:${site.port}/`)).status).toBe(200);
  });

  it("counts an unconfined route's own port among the engine's while it listens", async () => {
    const ports = new EnginePorts();
    const { egress } = await guardedRoute(['127.0.0.0/8'], ports);
    const other = await route({ sessionId: 'other', policy: { allow: ['127.0.0.0/8'] }, enginePorts: ports });
    expect(ports.has(egress.port) && ports.has(other.port)).toBe(true);
    expect((await getThrough(egress, `http://127.0.0.1:${other.port}/`)).status).toBe(403);
    const otherPort = other.port;
    await other.close();
    expect(ports.has(otherPort)).toBe(false);
  });

  it('names the port in the session\'s language', async () => {
    const ports = new EnginePorts();
    ports.add(engineListener.port);
    const egress = await route({ sessionId: 'de', policy: { allow: ['127.0.0.0/8'] }, enginePorts: ports, language: 'de-DE' });
    const answer = await getThrough(egress, `http://127.0.0.1:${engineListener.port}/`);
    expect(answer.body).toBe(`remote-browser-kit egress: 127.0.0.1:${engineListener.port} ist ein Port des Dienstes, der den entfernten Browser betreibt, und nicht erlaubt`);
  });
});

describe('egress route: connections a session can make the engine hold', () => {
  let target: Target;
  const flood: net.Socket[] = [];
  beforeAll(async () => {
    target = await startTarget();
  });
  afterEach(() => {
    for (const socket of flood.splice(0)) socket.destroy();
  });
  afterAll(async () => {
    await target.close();
  });

  it('closes connections beyond the session’s cap at once and silent ones after their deadline, then serves again', async () => {
    const guarded = await route({ sessionId: 'capped', policy: LOOPBACK_ONLY, connections: { perSession: 20, firstBytesMs: 600 } });
    const started = Date.now();
    const connections = await silentConnections(guarded.port, 100);
    flood.push(...connections.map((entry) => entry.socket));
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Beyond the cap: closed at once, well before the deadline for silence.
    expect(connections.filter((entry) => entry.closedAt !== null && entry.closedAt - started < 600).length).toBe(80);
    expect(guarded.connections()).toEqual({ open: 20, refused: 80, silent: 0 });
    // At the cap, even a connection with a request in it is held out.
    await expect(getThrough(guarded, `http://127.0.0.1:${target.port}/`)).rejects.toThrow();
    // The silent ones: closed once their deadline passed.
    await waitUntil(() => connections.every((entry) => entry.closedAt !== null), 3000);
    expect(guarded.connections()).toEqual({ open: 0, refused: 81, silent: 20 });
    const answer = await getThrough(guarded, `http://127.0.0.1:${target.port}/`);
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(BODY);
  });

  it('keeps a connection that speaks at once, past the deadline for silence', async () => {
    const guarded = await route({ sessionId: 'speaking', policy: LOOPBACK_ONLY, connections: { perSession: 4, firstBytesMs: 300 } });
    const { status, socket } = await openTunnel(guarded, `127.0.0.1:${target.port}`);
    flood.push(socket);
    expect(status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 800));
    // The tunnel, quiet since its CONNECT, still carries a request.
    socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    const answer = await bounded(new Promise<string>((resolve) => {
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('close', () => resolve(text));
    }), 'the answer through a quiet tunnel');
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(guarded.connections().silent).toBe(0);
  });

  it('refuses connections that would eat into the engine’s reserve of open files, and serves once files are free', async () => {
    const inUse = readdirSync('/proc/self/fd').length;
    // Room for about 20 more files above a reserve of 10: each connection here costs this process
    // two (both of its ends) and the route counts two for it.
    const openFiles = new OpenFiles({ limit: inUse + 30, reserve: 10 });
    const guarded = await route({ sessionId: 'reserve', policy: LOOPBACK_ONLY, openFiles, connections: { perSession: 1000, firstBytesMs: 5000 } });
    const connections = await silentConnections(guarded.port, 60);
    flood.push(...connections.map((entry) => entry.socket));
    await waitUntil(() => guarded.connections().open + guarded.connections().refused === 60, 3000);
    expect(guarded.connections().refused).toBeGreaterThan(40);
    expect(guarded.connections().open).toBeLessThan(20);
    for (const socket of flood.splice(0)) socket.destroy();
    await waitUntil(() => guarded.connections().open === 0, 3000);
    expect(openFiles.inUse).toBe(0);
    // Recounted a second later, the freed files are there to take again.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await getThrough(guarded, `http://127.0.0.1:${target.port}/`)).status).toBe(200);
  });

  it('refuses limits that are not limits, naming the setting', async () => {
    await expect(route({ sessionId: 'bad', policy: LOOPBACK_ONLY, connections: { perSession: 0, firstBytesMs: 1000 } })).rejects.toThrow(/perSession/);
    await expect(route({ sessionId: 'bad', policy: LOOPBACK_ONLY, connections: { perSession: 10, firstBytesMs: 5 } })).rejects.toThrow(/firstBytesMs/);
  });
});

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}
