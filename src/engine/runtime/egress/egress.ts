// Each session's egress route: the proxy its remote browser must use to reach the network. It resolves
// and checks every target itself (egress-targets.ts, address-policy.ts), then pins the checked
// address, so pages cannot reach internal addresses nor the engine's own listeners
// (engine-ports.ts). Behind its gate (egress-gate.ts).
import dns from 'node:dns';
import { EventEmitter } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import { RequestError, Server, type PrepareRequestFunction } from 'proxy-chain';
import { checkEgressConnectionLimits, DEFAULT_EGRESS_CONNECTIONS, openEgressGate, type EgressConnectionLimits, type EgressGate, type EgressGateCounts } from './egress-gate.js';
import type { OpenFiles } from '../../limits/open-files.js';
import { MESSAGE_PREFIX, parseAllowRanges, type EgressPolicy } from './address-policy.js';
import { canonicalHostAddresses, checkTarget, interfaceAddresses, pinnedLookup, type RefusedFor, type TargetCheck } from './egress-targets.js';
import type { EnginePorts } from './engine-ports.js';
import { egressRefusalText } from './refusals.js';


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
  /**
   * The engine's own ports (engine-ports.ts): refused on this host's addresses whatever the policy
   * allows, read at each request (a listener that opens later counts from then on). The route's
   * own port joins them while it listens on one.
   */
  enginePorts?: EnginePorts;
}

/** A target the route would not connect to. */
export interface EgressRefusal {
  /** `host:port` of the request, as the proxy parsed it (IPv6 in brackets). */
  target: string;
  /** Why, in words, e.g. `127.0.0.1 is a loopback address and is not allowed`. */
  reason: string;
  /** The address that was refused, when the refusal was about an address rather than a name. */
  address?: string;
  /** What it was refused for: the address's category, a metadata name, or one of the engine's own listeners. */
  category: RefusedFor;
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
  /**
   * Sends later connections on through `upstreamProxyUrl` (an exit location or the residential
   * route), or straight out when undefined: a warm route learns its session's exit when taken.
   */
  setUpstream(upstreamProxyUrl: string | undefined): void;
  /** Stops listening and ends every open connection, tunnels included. */
  close(): Promise<void>;
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
    private readonly upstream: { url: string | undefined },
    /** The listener that hands connections to `server` (its port, or a unix socket). */
    private readonly gate: EgressGate,
    /** Takes the gate's port out of the engine's ports (engine-ports.ts). */
    private readonly forgetPort: () => void,
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

  setUpstream(upstreamProxyUrl: string | undefined): void {
    const url = upstreamProxyUrl === undefined ? undefined : checkUpstreamProxyUrl(upstreamProxyUrl);
    if (url === this.upstream.url) return;
    this.upstream.url = url;
    // Nothing the browser opened before carries on the old way: open tunnels and kept sockets end.
    this.server.closeConnections();
    this.agents.http.destroy();
    this.agents.https.destroy();
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
      this.forgetPort();
    })();
    return this.#closing;
  }
}

/** Starts a session's egress route on 127.0.0.1 and an ephemeral port (the port identifies the session). */
export async function startEgressRoute(options: EgressRouteOptions): Promise<EgressRoute> {
  const allowed = parseAllowRanges(options.policy.allow);
  const hostAddresses = canonicalHostAddresses(options.hostAddresses ?? interfaceAddresses());
  // Read at each connection: a warm route is given its session's upstream when the session takes it.
  const upstream = { url: options.upstreamProxyUrl === undefined ? undefined : checkUpstreamProxyUrl(options.upstreamProxyUrl) };
  const lookup = options.lookup ?? dns.lookup;
  const enginePorts = options.enginePorts;
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
      check = await checkTarget(hostname, allowed, lookup, hostAddresses, enginePorts ? { port, enginePorts } : undefined);
    } catch {
      check = { outcome: 'failed', statusCode: 502, reason: `could not check ${target}` };
    }
    if (check.outcome === 'refused') {
      const refusal: EgressRefusal = { target, reason: check.reason, category: check.for };
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
    if (upstream.url !== undefined) return { ...pools, upstreamProxyUrl: upstream.url };
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
  // Unconfined, the route is a loopback port like the engine's own: no session's page may chain
  // through another's route (or its own) to count its bytes elsewhere or loop. Forgotten as it closes.
  const forgetPort = enginePorts?.add(gate.port) ?? (() => undefined);

  return new SessionEgressRoute(options.sessionId, server, events, closedBytes, agents, shownIn, upstream, gate, forgetPort);
}
