// Each session's egress route: the proxy its remote browser must use to reach the network. It resolves
// and checks every target itself, then pins the checked address, so pages cannot reach internal addresses.
import dns from 'node:dns';
import { EventEmitter } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import ipaddr from 'ipaddr.js';
import { RequestError, Server, type PrepareRequestFunction } from 'proxy-chain';
import { checkEgressConnectionLimits, DEFAULT_EGRESS_CONNECTIONS, openEgressGate, type EgressConnectionLimits, type EgressGate, type EgressGateCounts } from './egress-gate.js';
import type { OpenFiles } from './open-files.js';
import { categoryWords, egressRefusalText, type ShownRefusal } from './refusals.js';

/** Which addresses the remote browser may reach beyond the public internet. */
export interface EgressPolicy {
  /**
   * CIDR ranges (or single addresses) the operator allows even though they are not public,
   * e.g. `['127.0.0.0/8', '::1/128']` for tests and the local demo. A cloud metadata address
   * is only allowed by a range naming that exact address (a /32 or /128): a broad range such as
   * `169.254.0.0/16` or `0.0.0.0/0` is almost always meant for something else, and the metadata
   * service hands out the host's credentials.
   */
  allow: string[];
}

export interface EgressRouteOptions {
  sessionId: string;
  policy: EgressPolicy;
  /**
   * Send traffic on through this proxy (http, https or socks URL), e.g. for exit locations.
   * Targets are still checked here first; the upstream proxy then resolves names itself.
   */
  upstreamProxyUrl?: string;
  /**
   * Listen on this unix socket instead of a loopback port (confined sessions reach it through a
   * relay in their own network namespace). The socket is made the `socketOwner` uid's, mode 0600,
   * so that no other local user, and no other session, can use the route.
   */
  socketPath?: string;
  socketOwner?: number;
  /**
   * This host's own addresses, refused like loopback (services listening on every address would
   * otherwise be reached through the host's public one). Defaults to the addresses of its network
   * interfaces; replaceable so tests can give a host a public address.
   */
  hostAddresses?: () => readonly string[];
  /** Name resolution, replaceable so tests can simulate DNS answers. Defaults to `dns.lookup`. */
  lookup?: typeof dns.lookup;
  /** The language refusals are shown in (the session's `language`); default English. */
  language?: string;
  /** How many connections the session may hold open, and how long one may stay silent (egress-gate.ts). */
  connections?: EgressConnectionLimits;
  /** The engine's open files: a connection is refused when taking it would eat into the reserve. */
  openFiles?: OpenFiles;
}

/** A target the route would not connect to. */
export interface EgressRefusal {
  /** `host:port` of the request, as the proxy parsed it (IPv6 in brackets). */
  target: string;
  /** Why, in words, e.g. `127.0.0.1 is a loopback address and is not allowed`. */
  reason: string;
  /** The address that was refused, when the refusal was about an address rather than a name. */
  address?: string;
}

export interface EgressRoute {
  readonly sessionId: string;
  /** `http://127.0.0.1:PORT`, for the browser's `--proxy-server`; empty when on a unix socket. */
  readonly proxyUrl: string;
  /** The loopback port, or 0 when the route listens on a unix socket. */
  readonly port: number;
  /** Bytes sent to and received from targets (or the upstream proxy), including open connections. */
  bytes(): { sent: number; received: number };
  /** Connections open now, and how many the gate refused or closed for silence. */
  connections(): EgressGateCounts;
  on(event: 'refused', listener: (refusal: EgressRefusal) => void): this;
  once(event: 'refused', listener: (refusal: EgressRefusal) => void): this;
  off(event: 'refused', listener: (refusal: EgressRefusal) => void): this;
  /** Shows later refusals in `language` (a warm route learns its session's language when taken). */
  setLanguage(language: string): void;
  /** Stops listening and ends every open connection, tunnels included. */
  close(): Promise<void>;
}

export type AddressCategory =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unique-local'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'carrier-grade-nat'
  | 'metadata'
  | 'reserved'
  | 'this-host'
  | 'invalid';

/** One parsed entry of `EgressPolicy.allow`. */
export interface AllowedRange {
  /** Normalised CIDR text; IPv4-mapped IPv6 ranges are rewritten as IPv4. */
  readonly cidr: string;
  readonly family: 4 | 6;
  readonly prefixLength: number;
  contains(ip: string): boolean;
}

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Address, number];

const MESSAGE_PREFIX = 'remote-browser-kit egress: ';
const LOOKUP_TIMEOUT_MS = 10_000;

// Names that reach a metadata service even where it has no fixed address in our tables;
// refused before any lookup, so a resolver that knows them never gets the chance.
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata']);

function cidrs(...texts: string[]): Cidr[] {
  return texts.map((text) => ipaddr.parseCIDR(text));
}

// First match wins: metadata addresses sit inside link-local, private and unique-local ranges
// but deserve their own, louder name.
const IPV4_CATEGORIES: ReadonlyArray<readonly [AddressCategory, Cidr[]]> = [
  ['metadata', cidrs('169.254.169.254/32', '168.63.129.16/32', '100.100.100.200/32')],
  ['unspecified', cidrs('0.0.0.0/8')],
  ['loopback', cidrs('127.0.0.0/8')],
  ['private', cidrs('10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16')],
  ['link-local', cidrs('169.254.0.0/16')],
  ['carrier-grade-nat', cidrs('100.64.0.0/10')],
  ['multicast', cidrs('224.0.0.0/4')],
  ['broadcast', cidrs('255.255.255.255/32')],
  [
    'reserved',
    cidrs(
      '240.0.0.0/4',
      '192.0.0.0/24',
      '192.0.2.0/24',
      '192.88.99.0/24',
      '198.18.0.0/15',
      '198.51.100.0/24',
      '203.0.113.0/24',
    ),
  ],
];

const IPV6_CATEGORIES: ReadonlyArray<readonly [AddressCategory, Cidr[]]> = [
  ['metadata', cidrs('fd00:ec2::254/128')],
  ['unspecified', cidrs('::/128')],
  ['loopback', cidrs('::1/128')],
  ['link-local', cidrs('fe80::/10')],
  ['unique-local', cidrs('fc00::/7')],
  ['multicast', cidrs('ff00::/8')],
  [
    'reserved',
    cidrs(
      'fec0::/10', // deprecated site-local: still routed internally on some old networks
      '64:ff9b:1::/48', // local-use NAT64
      '2001::/23', // IETF protocol assignments, Teredo included
      '2001:db8::/32',
      '3fff::/20',
    ),
  ],
];

// Only 2000::/3 is handed out as global unicast; anything else not named above is not the internet.
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
const IPV4_MAPPED = ipaddr.parseCIDR('::ffff:0:0/96');
const IPV4_TRANSLATED = ipaddr.parseCIDR('::ffff:0:0:0/96');
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');
const SIX_TO_FOUR = ipaddr.parseCIDR('2002::/16');

function matches(address: Address, range: Cidr): boolean {
  return address.kind() === range[0].kind() && address.match(range);
}

function parseAddress(ip: string): Address | null {
  const text = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  try {
    if (!net.isIPv6(text)) return ipaddr.IPv4.parse(text);
    // ipaddr.js reads the deprecated ::a.b.c.d as ::ffff:a.b.c.d; the URL parser keeps it as what
    // the kernel sees. The zone only picks an interface and cannot change the category.
    const canonical = new URL(`http://[${text.replace(/%.*$/, '')}]/`).hostname.slice(1, -1);
    return ipaddr.IPv6.parse(canonical);
  } catch {
    return null;
  }
}

// The kernel sends ::ffff:a.b.c.d to the IPv4 address itself, so it is that address.
function unwrapMapped(address: Address): Address {
  return address.kind() === 'ipv6' && matches(address, IPV4_MAPPED)
    ? ipv4FromBytes((address as ipaddr.IPv6).toByteArray(), 12)
    : address;
}

function ipv4FromBytes(bytes: number[], start: number): ipaddr.IPv4 {
  return new ipaddr.IPv4(bytes.slice(start, start + 4));
}

// IPv6 forms that carry an IPv4 address and, through a translator or relay, reach it.
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const bytes = address.toByteArray();
  if (matches(address, IPV4_MAPPED) || matches(address, IPV4_TRANSLATED) || matches(address, NAT64)) {
    return ipv4FromBytes(bytes, 12);
  }
  if (matches(address, SIX_TO_FOUR)) return ipv4FromBytes(bytes, 2);
  return null;
}

function categoryFrom(address: Address, table: ReadonlyArray<readonly [AddressCategory, Cidr[]]>): AddressCategory | null {
  for (const [category, ranges] of table) {
    if (ranges.some((range) => matches(address, range))) return category;
  }
  return null;
}

function classifyParsed(address: Address): AddressCategory | null {
  if (address.kind() === 'ipv4') return categoryFrom(address, IPV4_CATEGORIES);
  const v6 = address as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) return categoryFrom(embedded, IPV4_CATEGORIES);
  const category = categoryFrom(v6, IPV6_CATEGORIES);
  if (category) return category;
  return matches(v6, IPV6_GLOBAL_UNICAST) ? null : 'reserved';
}

/**
 * What kind of non-public address `ip` is, or `null` for a public one. Accepts IPv4 in any
 * spelling `inet_aton` accepts (`0x7f.0.0.1`, `2130706433`, `127.1`), IPv6 with or without
 * brackets, and IPv6 forms that embed IPv4 (mapped, NAT64, 6to4), which are judged by the IPv4.
 * Anything unparseable is `'invalid'`, never public.
 */
export function classifyAddress(ip: string): AddressCategory | null {
  const address = parseAddress(ip);
  return address ? classifyParsed(address) : 'invalid';
}

/** Parses `EgressPolicy.allow`; throws an error naming the first entry that is not a range. */
export function parseAllowRanges(ranges: readonly string[]): AllowedRange[] {
  return ranges.map((entry) => {
    const text = typeof entry === 'string' ? entry.trim() : '';
    const isRange = text.includes('/')
      ? ipaddr.IPv4.isValidCIDRFourPartDecimal(text) || ipaddr.IPv6.isValidCIDR(text)
      : ipaddr.IPv4.isValidFourPartDecimal(text) || ipaddr.IPv6.isValid(text);
    if (!isRange) {
      throw new Error(
        `${MESSAGE_PREFIX}allowed range ${JSON.stringify(entry)} is not an IP range; ` +
          `write it in CIDR form, e.g. "127.0.0.0/8" or "::1/128"`,
      );
    }
    let [address, prefixLength] = text.includes('/')
      ? ipaddr.parseCIDR(text)
      : ([ipaddr.parse(text), text.includes(':') ? 128 : 32] as Cidr);
    // Addresses are unwrapped before matching, so a mapped range must be unwrapped too to match anything.
    if (address.kind() === 'ipv6' && prefixLength >= 96 && matches(address, IPV4_MAPPED)) {
      address = ipv4FromBytes(address.toByteArray(), 12);
      prefixLength -= 96;
    }
    return makeAllowedRange([address, prefixLength]);
  });
}

function makeAllowedRange(range: Cidr): AllowedRange {
  const [address, prefixLength] = range;
  const network =
    address.kind() === 'ipv4'
      ? ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${prefixLength}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${prefixLength}`);
  return {
    cidr: `${network.toString()}/${prefixLength}`,
    family: address.kind() === 'ipv4' ? 4 : 6,
    prefixLength,
    contains(ip: string): boolean {
      const parsed = parseAddress(ip);
      return parsed !== null && matches(unwrapMapped(parsed), range);
    },
  };
}

function isAllowedBy(ip: string, category: AddressCategory | null, ranges: readonly AllowedRange[]): boolean {
  if (category === null) return true;
  if (category === 'invalid') return false;
  return ranges.some(
    (range) =>
      range.contains(ip) && (category !== 'metadata' || range.prefixLength === (range.family === 4 ? 32 : 128)),
  );
}

/** Whether the route would connect to `ip`: public, or inside a range the policy allows. */
export function isAddressAllowed(ip: string, policy: EgressPolicy | readonly AllowedRange[]): boolean {
  const ranges = Array.isArray(policy)
    ? (policy as readonly AllowedRange[])
    : parseAllowRanges((policy as EgressPolicy).allow);
  return isAllowedBy(ip, classifyAddress(ip), ranges);
}


type TargetCheck =
  | { outcome: 'allowed'; addresses: dns.LookupAddress[] }
  /** `shown` is what the viewer's refusal page says: never what a name resolves to. */
  | { outcome: 'refused'; reason: string; shown: ShownRefusal; address?: string }
  | { outcome: 'failed'; statusCode: number; reason: string };

// The same host parsing a browser applies to http URLs, so every IPv4 spelling becomes one
// canonical address and names become lower-case ASCII. CONNECT targets arrive unparsed.
function canonicalHost(hostname: string): string | null {
  let host = hostname;
  if (!host.startsWith('[') && net.isIPv6(host)) host = `[${host}]`;
  const bracketed = host.startsWith('[') && host.endsWith(']');
  if (host === '' || /[\s/?#@\\]/.test(host) || (!bracketed && host.includes(':'))) return null;
  let url: URL;
  try {
    url = new URL(`http://${host}/`);
  } catch {
    return null;
  }
  if (url.port !== '' || url.pathname !== '/' || url.hostname === '') return null;
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

function resolveName(lookup: typeof dns.lookup, name: string): Promise<dns.LookupAddress[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('lookup timed out')), LOOKUP_TIMEOUT_MS);
    try {
      lookup(name, { all: true }, (error, answers) => {
        clearTimeout(timer);
        if (error) {
          reject(error);
          return;
        }
        // A replaced lookup may ignore `all`; accept a single answer too.
        const list: unknown[] = Array.isArray(answers) ? answers : [answers];
        resolve(
          list.map((answer) => {
            const address =
              typeof answer === 'string' ? answer : String((answer as { address?: unknown } | null)?.address ?? '');
            return { address, family: net.isIP(address) };
          }),
        );
      });
    } catch (error) {
      clearTimeout(timer);
      reject(error);
    }
  });
}

/** One spelling per address: IPv4-mapped IPv6 as IPv4, IPv6 in full; null when unparseable. */
function canonicalAddress(ip: string): string | null {
  const address = parseAddress(ip);
  if (!address) return null;
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) return (address as ipaddr.IPv6).toIPv4Address().toString();
  return address.kind() === 'ipv6' ? (address as ipaddr.IPv6).toNormalizedString() : address.toString();
}

/** The addresses of this host's network interfaces, read again at most every few seconds. */
function interfaceAddresses(): () => readonly string[] {
  let read = 0;
  let addresses: string[] = [];
  return () => {
    if (Date.now() - read > 5_000) {
      addresses = Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((entry) => entry.address));
      read = Date.now();
    }
    return addresses;
  };
}

/**
 * The canonical forms of `hostAddresses()`, parsed again only when it answers with a new list
 * (the interfaces' list changes every few seconds at most), not on every request.
 */
function canonicalHostAddresses(hostAddresses: () => readonly string[]): () => ReadonlySet<string> {
  let source: readonly string[] | undefined;
  let canonical = new Set<string>();
  return () => {
    const current = hostAddresses();
    if (current !== source) {
      source = current;
      canonical = new Set(current.map(canonicalAddress).filter((address): address is string => address !== null));
    }
    return canonical;
  };
}

/** What kind of address `ip` is for this route: non-public, this host's own, or null (public). */
function categorize(ip: string, hostAddresses: () => ReadonlySet<string>): AddressCategory | null {
  const category = classifyAddress(ip);
  if (category !== null) return category;
  const canonical = canonicalAddress(ip);
  return canonical !== null && hostAddresses().has(canonical) ? 'this-host' : null;
}

async function checkTarget(
  hostname: string,
  allowed: readonly AllowedRange[],
  lookup: typeof dns.lookup,
  hostAddresses: () => ReadonlySet<string>,
): Promise<TargetCheck> {
  const host = canonicalHost(hostname);
  if (host === null) {
    return { outcome: 'failed', statusCode: 400, reason: `${JSON.stringify(hostname)} is not a valid host` };
  }
  const literalFamily = net.isIP(host);
  if (literalFamily !== 0) {
    const category = categorize(host, hostAddresses);
    if (!isAllowedBy(host, category, allowed)) {
      const reason = `${host} is ${categoryWords(category ?? 'invalid')} and is not allowed`;
      return { outcome: 'refused', reason, shown: { kind: 'address', host, category: category ?? 'invalid' }, address: host };
    }
    return { outcome: 'allowed', addresses: [{ address: host, family: literalFamily }] };
  }
  if (METADATA_NAMES.has(host.replace(/\.+$/, ''))) {
    const reason = `${host} is a cloud metadata name and is not allowed`;
    return { outcome: 'refused', reason, shown: { kind: 'metadata-name', host } };
  }
  let answers: dns.LookupAddress[];
  try {
    answers = await resolveName(lookup, host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    return { outcome: 'failed', statusCode: 502, reason: `could not resolve ${host}${code ? ` (${code})` : ''}` };
  }
  if (answers.length === 0) {
    return { outcome: 'failed', statusCode: 502, reason: `could not resolve ${host} (no addresses)` };
  }
  // One bad answer refuses the name: which answer a connection would use is not ours to choose.
  for (const { address } of answers) {
    const category = categorize(address, hostAddresses);
    if (!isAllowedBy(address, category, allowed)) {
      return {
        outcome: 'refused',
        reason: `${host} resolves to ${address}, ${categoryWords(category ?? 'invalid')}, and is not allowed`,
        // The operator's internal addresses stay unknown to whoever is in the session.
        shown: { kind: 'leads-to-address', host },
        address,
      };
    }
  }
  return { outcome: 'allowed', addresses: answers };
}

// Answers every lookup of the connection with the addresses that were checked: a second, real
// lookup could return something else (DNS rebinding).
function pinnedLookup(addresses: readonly dns.LookupAddress[]): typeof dns.lookup {
  const lookup = (hostname: string, options: unknown, callback?: unknown): void => {
    const done = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
    const settings: dns.LookupOptions =
      typeof options === 'number' ? { family: options } : typeof options === 'object' && options ? options : {};
    const family = settings.family === 'IPv4' ? 4 : settings.family === 'IPv6' ? 6 : (settings.family ?? 0);
    const candidates = family === 0 ? addresses : addresses.filter((answer) => answer.family === family);
    process.nextTick(() => {
      const first = candidates[0];
      if (!first) {
        const error: NodeJS.ErrnoException = new Error(`${MESSAGE_PREFIX}no checked IPv${family} address for ${hostname}`);
        error.code = 'ENOTFOUND';
        done(error);
      } else if (settings.all) {
        done(null, candidates.map((answer) => ({ ...answer })));
      } else {
        done(null, first.address, first.family);
      }
    });
  };
  return lookup as unknown as typeof dns.lookup;
}

function checkUpstreamProxyUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`${MESSAGE_PREFIX}upstreamProxyUrl is not a URL; expected e.g. http://user:pass@proxy:8000`);
  }
  if (!['http:', 'https:', 'socks:', 'socks4:', 'socks4a:', 'socks5:', 'socks5h:'].includes(url.protocol)) {
    throw new Error(`${MESSAGE_PREFIX}upstreamProxyUrl must be an http, https or socks URL (was ${url.protocol})`);
  }
  return text;
}

class SessionEgressRoute implements EgressRoute {
  readonly proxyUrl: string;
  readonly port: number;
  #closing: Promise<void> | undefined;

  constructor(
    readonly sessionId: string,
    private readonly server: Server,
    private readonly events: EventEmitter<{ refused: [EgressRefusal] }>,
    private readonly closedBytes: { sent: number; received: number },
    private readonly agents: { http: http.Agent; https: https.Agent },
    private readonly shownIn: { language: string },
    /** The listener that hands connections to `server` (its port, or a unix socket). */
    private readonly gate: EgressGate,
  ) {
    this.port = gate.port;
    this.proxyUrl = this.port ? `http://127.0.0.1:${this.port}` : '';
  }

  connections(): EgressGateCounts {
    return this.gate.counts();
  }

  setLanguage(language: string): void {
    this.shownIn.language = language;
  }

  bytes(): { sent: number; received: number } {
    let { sent, received } = this.closedBytes;
    for (const id of this.server.getConnectionIds()) {
      const stats = this.server.getConnectionStats(id);
      sent += stats?.trgTxBytes ?? 0;
      received += stats?.trgRxBytes ?? 0;
    }
    return { sent, received };
  }

  on(event: 'refused', listener: (refusal: EgressRefusal) => void): this {
    this.events.on(event, listener);
    return this;
  }

  once(event: 'refused', listener: (refusal: EgressRefusal) => void): this {
    this.events.once(event, listener);
    return this;
  }

  off(event: 'refused', listener: (refusal: EgressRefusal) => void): this {
    this.events.off(event, listener);
    return this;
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.agents.http.destroy();
      this.agents.https.destroy();
      // Destroying the browser's sockets makes proxy-chain end the target side of every tunnel.
      // The proxy never listened itself (the gate hands it connections): its close reports that.
      await Promise.all([this.gate.close(), this.server.close(true).catch(() => undefined)]);
    })();
    return this.#closing;
  }
}

/** Starts a session's egress route on 127.0.0.1 and an ephemeral port (the port identifies the session). */
export async function startEgressRoute(options: EgressRouteOptions): Promise<EgressRoute> {
  const allowed = parseAllowRanges(options.policy.allow);
  const hostAddresses = canonicalHostAddresses(options.hostAddresses ?? interfaceAddresses());
  const upstreamProxyUrl =
    options.upstreamProxyUrl === undefined ? undefined : checkUpstreamProxyUrl(options.upstreamProxyUrl);
  const lookup = options.lookup ?? dns.lookup;
  const events = new EventEmitter<{ refused: [EgressRefusal] }>();
  const closedBytes = { sent: 0, received: 0 };
  const shownIn = { language: options.language ?? 'en' };
  const limits = checkEgressConnectionLimits(options.connections ?? DEFAULT_EGRESS_CONNECTIONS);
  // Own pools: a kept-alive socket must never carry another session's traffic, and close() can end
  // them. Bounded like the gate, and an unused socket closes after a while: otherwise requests to
  // many hosts would leave the engine holding one idle socket per host without end.
  const pooled = { keepAlive: true, maxTotalSockets: limits.perSession, maxFreeSockets: 32, timeout: 30_000 };
  const agents = { http: new http.Agent(pooled), https: new https.Agent(pooled) };

  const prepareRequestFunction: PrepareRequestFunction = async ({ hostname, port }) => {
    const target = `${hostname}:${port}`;
    let check: TargetCheck;
    try {
      check = await checkTarget(hostname, allowed, lookup, hostAddresses);
    } catch {
      check = { outcome: 'failed', statusCode: 502, reason: `could not check ${target}` };
    }
    if (check.outcome === 'refused') {
      const refusal: EgressRefusal = { target, reason: check.reason };
      if (check.address !== undefined) refusal.address = check.address;
      events.emit('refused', refusal);
      // The viewer learns that the address is not allowed (in the session's language), never what
      // a name resolves to inside the operator's network: that goes to the engine's events only.
      throw new RequestError(`${MESSAGE_PREFIX}${egressRefusalText(check.shown, shownIn.language)}`, 403);
    }
    if (check.outcome === 'failed') throw new RequestError(`${MESSAGE_PREFIX}${check.reason}`, check.statusCode);
    const pools = { httpAgent: agents.http, httpsAgent: agents.https };
    // proxy-chain hands dnsLookup to the upstream connection too, where it would answer with the
    // target's address; the upstream proxy resolves the target itself.
    if (upstreamProxyUrl !== undefined) return { ...pools, upstreamProxyUrl };
    return { ...pools, dnsLookup: pinnedLookup(check.addresses) };
  };

  const server = new Server({
    host: '127.0.0.1',
    port: 0,
    authRealm: 'remote-browser-kit',
    prepareRequestFunction,
  });
  server.on('connectionClosed', ({ stats }: { stats?: { trgTxBytes: number | null; trgRxBytes: number | null } }) => {
    closedBytes.sent += stats?.trgTxBytes ?? 0;
    closedBytes.received += stats?.trgRxBytes ?? 0;
  });
  // The proxy listens through the gate, which keeps the session to its connection limits.
  const gate = await openEgressGate({
    ...(options.socketPath !== undefined ? { socketPath: options.socketPath } : {}),
    ...(options.socketOwner !== undefined ? { socketOwner: options.socketOwner } : {}),
    limits,
    ...(options.openFiles ? { openFiles: options.openFiles } : {}),
    admit: (socket) => server.server.emit('connection', socket),
  }).catch(async (error: unknown) => {
    agents.http.destroy();
    agents.https.destroy();
    throw error;
  });
  // An unheard 'error' on the proxy's server would end the whole engine, not just this session.
  server.server.on('error', () => {});

  return new SessionEgressRoute(options.sessionId, server, events, closedBytes, agents, shownIn, gate);
}
