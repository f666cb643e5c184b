// Security suite, the remote browser's network (decisions.md 25) at the egress route itself: every
// odd spelling of a forbidden address (decimal, octal, hex, short IPv4; IPv4-mapped, NAT64, 6to4
// IPv6; every private, link-local and metadata range), DNS answers that are forbidden, and DNS
// rebinding, sent through a real route to real servers on loopback that must never be reached.
import type dns from 'node:dns';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEgressRoute, type EgressRefusal, type EgressRoute } from '../../src/engine/runtime/egress/egress.js';

interface Site {
  port: number;
  /** Connections the site accepted: a refused target must see none. */
  connections: number;
  close(): Promise<void>;
}

/** A real site on `host` that answers `body` and counts every connection it gets. */
async function startSite(host: string, body: string, port = 0): Promise<Site> {
  const sockets = new Set<net.Socket>();
  const server = http.createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(Buffer.byteLength(body)) }).end(body));
  const site: Site = {
    port: 0,
    connections: 0,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on('connection', (socket: net.Socket) => {
    site.connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  site.port = (server.address() as net.AddressInfo).port;
  return site;
}

interface Answer {
  status: number;
  body: string;
}

/** Writes a raw request to the route (browsers send these as they are) and reads the whole answer. */
function exchange(route: EgressRoute, text: string): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const socket = net.connect(route.port, '127.0.0.1', () => socket.write(text));
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 5 s to ${JSON.stringify(text.split('\r\n')[0])}`));
    }, 5_000);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      // A CONNECT that was let through stays open: its 200 line is the whole answer.
      if (/^HTTP\/1\.[01] 200/.test(received) && received.includes('\r\n\r\n') && text.startsWith('CONNECT')) socket.end();
    });
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      const bodyStart = received.indexOf('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(received)?.[1] ?? 0), body: bodyStart === -1 ? '' : received.slice(bodyStart + 4) });
    });
  });
}

const get = (route: EgressRoute, host: string, port: number) =>
  exchange(route, `GET http://${host}:${port}/secret HTTP/1.1\r\nHost: ${host}:${port}\r\nConnection: close\r\n\r\n`);
const connect = (route: EgressRoute, host: string, port: number) => exchange(route, `CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`);

/** A resolver under an attacker's control: answers from a table, or from a function of the call count. */
function resolver(answer: (name: string, call: number) => string[] | undefined): { lookup: typeof dns.lookup; calls: string[] } {
  const calls: string[] = [];
  const lookup = (name: string, _options: unknown, callback: (...args: unknown[]) => void): void => {
    calls.push(name);
    const addresses = answer(name, calls.length);
    setImmediate(() => {
      if (!addresses) callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' }));
      else callback(null, addresses.map((address) => ({ address, family: net.isIP(address) })));
    });
  };
  return { lookup: lookup as unknown as typeof dns.lookup, calls };
}

// Every spelling below names a forbidden address. The loopback ones name 127.0.0.1, where the
// site listens: a route that let one through would connect there, and the site would count it.
const FORBIDDEN: ReadonlyArray<readonly [string, string]> = [
  // IPv4 loopback, in every spelling a browser's URL parser or inet_aton accepts
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['2130706433', 'loopback (decimal)'],
  ['0177.0.0.1', 'loopback (octal)'],
  ['017700000001', 'loopback (octal, one number)'],
  ['0x7f000001', 'loopback (hex, one number)'],
  ['0x7f.0x0.0x0.0x1', 'loopback (hex, dotted)'],
  ['127.1', 'loopback (short form)'],
  ['127.0.0.1.', 'loopback (trailing dot)'],
  ['%31%32%37.0.0.1', 'loopback (percent-encoded)'],
  ['0', 'this host (0.0.0.0 as one number)'],
  ['0.0.0.0', 'this host'],
  // IPv4 private, shared, link-local and metadata ranges
  ['10.0.0.1', 'private 10/8'],
  ['167772161', 'private 10/8 (decimal)'],
  ['172.16.0.1', 'private 172.16/12'],
  ['172.31.255.254', 'private 172.16/12'],
  ['192.168.0.1', 'private 192.168/16'],
  ['0xc0a80001', 'private 192.168/16 (hex)'],
  ['100.64.0.1', 'carrier-grade NAT 100.64/10'],
  ['100.127.255.254', 'carrier-grade NAT 100.64/10'],
  ['169.254.1.1', 'link-local 169.254/16'],
  ['169.254.169.254', 'cloud metadata (AWS, GCP, Azure)'],
  ['2852039166', 'cloud metadata (decimal)'],
  ['168.63.129.16', 'cloud metadata (Azure)'],
  ['100.100.100.200', 'cloud metadata (Alibaba)'],
  ['224.0.0.1', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  // IPv6, and IPv6 forms that carry an IPv4 address
  ['[::1]', 'IPv6 loopback'],
  ['[0:0:0:0:0:0:0:1]', 'IPv6 loopback (long form)'],
  ['[::]', 'IPv6 unspecified'],
  ['[::ffff:127.0.0.1]', 'IPv4-mapped loopback'],
  ['[::ffff:7f00:1]', 'IPv4-mapped loopback (hex)'],
  ['[::ffff:0:7f00:1]', 'IPv4-translated loopback'],
  ['[::ffff:169.254.169.254]', 'IPv4-mapped metadata'],
  ['[64:ff9b::7f00:1]', 'NAT64 64:ff9b::/96 of loopback'],
  ['[64:ff9b::10.0.0.1]', 'NAT64 of a private address'],
  ['[64:ff9b::a9fe:a9fe]', 'NAT64 of the metadata address'],
  ['[64:ff9b:1::1]', 'local-use NAT64'],
  ['[2002:7f00:1::]', '6to4 2002::/16 of loopback'],
  ['[2002:a9fe:a9fe::]', '6to4 of the metadata address'],
  ['[::127.0.0.1]', 'IPv4-compatible (deprecated)'],
  ['[fe80::1]', 'IPv6 link-local fe80::/10'],
  ['[fc00::1]', 'IPv6 unique-local fc00::/7'],
  ['[fd12:3456::1]', 'IPv6 unique-local fd00::/8'],
  ['[fd00:ec2::254]', 'cloud metadata (AWS, IPv6)'],
  ['[fec0::1]', 'IPv6 site-local (deprecated)'],
  ['[ff02::1]', 'IPv6 multicast'],
  ['[2001::1]', 'Teredo'],
];

describe('the egress route refuses every spelling of a forbidden address', () => {
  let site: Site;
  let route: EgressRoute;
  const refusals: EgressRefusal[] = [];

  beforeAll(async () => {
    site = await startSite('127.0.0.1', 'the secret on loopback');
    // Nothing is allowed beyond the public internet: the default a customer's engine runs with.
    route = await startEgressRoute({ sessionId: 'encodings', policy: { allow: [] } });
    route.on('refused', (refusal) => refusals.push(refusal));
  });

  afterAll(async () => {
    await route?.close();
    await site?.close();
  });

  it.each(FORBIDDEN)('%s (%s): plain HTTP and CONNECT both answer 403 "not allowed"', async (host) => {
    const before = refusals.length;
    const plain = await get(route, host, site.port);
    const tunnel = await connect(route, host, site.port);
    expect(plain.status, plain.body).toBe(403);
    expect(plain.body).toMatch(/^remote-browser-kit egress: .* is an? .* and is not allowed$/);
    expect(plain.body).not.toContain('the secret');
    expect(tunnel.status, tunnel.body).toBe(403);
    // The engine's events say what was refused, both times.
    expect(refusals.slice(before)).toHaveLength(2);
    expect(site.connections).toBe(0);
  });

  it('refuses metadata names before asking any resolver', async () => {
    const dnsAnswers = resolver(() => ['8.8.8.8']);
    const named = await startEgressRoute({ sessionId: 'metadata-names', policy: { allow: [] }, lookup: dnsAnswers.lookup });
    try {
      for (const name of ['metadata.google.internal', 'METADATA.GOOGLE.INTERNAL.', 'metadata.goog', 'metadata']) {
        expect((await get(named, name, 80)).status, name).toBe(403);
        expect((await connect(named, name, 443)).status, name).toBe(403);
      }
      expect(dnsAnswers.calls).toEqual([]);
    } finally {
      await named.close();
    }
  });

  it('refuses a public-looking name whose DNS answer is a forbidden address in any spelling, without telling what it resolved to', async () => {
    const answers: Record<string, string[]> = {
      'mapped.example': ['::ffff:127.0.0.1'],
      'nat64.example': ['64:ff9b::a9fe:a9fe'],
      'sixtofour.example': ['2002:7f00:1::'],
      'linklocal.example': ['fe80::1'],
      'private.example': ['192.168.1.10'],
      'shared.example': ['100.64.1.1'],
      'metadata.example': ['169.254.169.254'],
      'partly.example': ['8.8.8.8', '10.1.2.3'],
    };
    const dnsAnswers = resolver((name) => answers[name]);
    const named = await startEgressRoute({ sessionId: 'dns', policy: { allow: [] }, lookup: dnsAnswers.lookup });
    const seen: EgressRefusal[] = [];
    named.on('refused', (refusal) => seen.push(refusal));
    try {
      for (const [name, addresses] of Object.entries(answers)) {
        const answer = await get(named, name, site.port);
        expect(answer.status, name).toBe(403);
        expect(answer.body).toBe(`remote-browser-kit egress: ${name} leads to an address that is not allowed`);
        expect((await connect(named, name, site.port)).status, name).toBe(403);
        expect(seen.at(-1)?.address, name).toBe(addresses.at(-1));
      }
      expect(site.connections).toBe(0);
    } finally {
      await named.close();
    }
  });
});

describe('an operator who allows one loopback address (127.0.0.2/32), as the tests and the demo do', () => {
  let allowed: Site;
  let forbidden: Site;

  beforeAll(async () => {
    allowed = await startSite('127.0.0.2', 'the allowed site');
    // The forbidden site listens on the allowed site's port too: only the address tells them apart.
    forbidden = await startSite('127.0.0.3', 'the secret on 127.0.0.3', allowed.port);
  });

  afterAll(async () => {
    await allowed?.close();
    await forbidden?.close();
  });

  it('lets the allowed site load, and refuses its neighbours in every spelling', async () => {
    const route = await startEgressRoute({ sessionId: 'one-address', policy: { allow: ['127.0.0.2/32'] } });
    try {
      const page = await get(route, '127.0.0.2', allowed.port);
      expect(page).toEqual({ status: 200, body: 'the allowed site' });
      expect((await get(route, '2130706434', allowed.port)).body).toBe('the allowed site');
      for (const host of ['127.0.0.3', '2130706435', '0x7f000003', '127.3', '[::ffff:127.0.0.3]', '[64:ff9b::7f00:3]', '[2002:7f00:3::]', '127.0.0.1', '[::1]']) {
        expect((await get(route, host, allowed.port)).status, host).toBe(403);
        expect((await connect(route, host, allowed.port)).status, host).toBe(403);
      }
      expect(forbidden.connections).toBe(0);
    } finally {
      await route.close();
    }
  });

  it('DNS rebinding: a name that first resolves to the allowed site and then to a forbidden address never reaches the forbidden one', async () => {
    // The attacker's name server answers the allowed address on odd look-ups and the forbidden one
    // on even look-ups: a route that looked the name up again to connect would land on 127.0.0.3.
    const dnsAnswers = resolver((name, call) => (name === 'rebind.example' ? [call % 2 === 1 ? '127.0.0.2' : '127.0.0.3'] : undefined));
    const route = await startEgressRoute({ sessionId: 'rebinding', policy: { allow: ['127.0.0.2/32'] }, lookup: dnsAnswers.lookup });
    try {
      const outcomes: number[] = [];
      const bodies: string[] = [];
      for (let i = 0; i < 6; i++) {
        const answer = i % 2 === 0 ? await get(route, 'rebind.example', allowed.port) : await connect(route, 'rebind.example', allowed.port);
        outcomes.push(answer.status);
        if (answer.status === 200 && i % 2 === 0) bodies.push(answer.body);
      }
      // Checked on every request, connected to exactly the address that was checked.
      expect(outcomes).toEqual([200, 403, 200, 403, 200, 403]);
      expect(bodies).toEqual(['the allowed site', 'the allowed site', 'the allowed site']);
      expect(dnsAnswers.calls).toHaveLength(6);
      expect(forbidden.connections).toBe(0);
    } finally {
      await route.close();
    }
  });
});
