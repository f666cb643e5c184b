// This engine as a node of a cluster (docs/deployment.md): it registers itself in the shared
// database and heart-beats; it notices nodes that fell silent and ends their sessions; it hears
// the other nodes' status changes and placements (Postgres LISTEN/NOTIFY); and it reaches the node
// that runs a session over an authenticated node-to-node link (HTTP and WebSocket, each request
// signed with the cluster secret) to open one of its channels (a viewer's RFB) or to call one of
// the routes the core and the features give it (node-routes.ts: a session's removal, its control,
// files, tabs and recordings), each call's signature checked once by the route table.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex, Readable } from 'node:stream';
import { WebSocket } from 'ws';
import type { ClusterLink, Reply, SessionService } from '../sessions/service.js';
import type { NodeRow, NodeWithLoad, Store } from '../store/store.js';
import type { ChannelCredential } from '../channels/channel.js';
import { webSocketEnd } from '../channels/relay.js';
import type { Presence } from '../channels/presence.js';
import type { Logger } from '../operations/logger.js';
import { nodeGoneMoves } from '../sessions/lifecycle.js';
import { viewerKeyOf } from '../../protocol/index.js';
import { serveNodeRoutes, type NodeRoute } from './node-routes.js';

/**
 * Where a node opens a channel of a session another node runs, over WebSocket; nothing there
 * answers without the cluster secret: `channels/<name>/<credential>` (channels/router.ts). `rfb`
 * and `rfb-view` are what nodes of the previous version send for RFB; they are still taken, so a
 * cluster can be upgraded one node at a time.
 */
const NODE_PATH = /^\/internal\/v1\/sessions\/([0-9a-f]{32})\/(rfb|rfb-view|channels\/([a-z][a-z0-9-]{0,30})\/(share-link|view-link|api-key))$/;
const AUTH_HEADER = 'x-rbk-node-auth';
/** How far a signed call's time may be from the receiver's clock. */
const SIGNATURE_WINDOW_MS = 30_000;
const CALL_TIMEOUT_MS = 10_000;
const STATUS_CHANNEL = 'rbk_session_status';
const PLACED_CHANNEL = 'rbk_session_placed';

export interface NodeIdentity {
  id: string;
  internalUrl: string;
  advertisedUrl: string;
  capacity: number | null;
  browsers: string[];
  /** The kinds of warm browser ready now ("browser language"), told with each heartbeat for placement. */
  warm?: () => string[];
}

export interface NodeLinkOptions {
  store: Store;
  node: NodeIdentity;
  /** The cluster secret; node-to-node calls carry an HMAC of it. */
  secret: string;
  heartbeatMs: number;
  lostAfterMs: number;
  /** The wall clock (not the engine's test clock: liveness is real time on every node). */
  now: () => number;
  /** Whether this node watches for lost nodes (every node of a Postgres cluster does). */
  watchOthers: boolean;
  /** Node joins and losses are logged (decisions.md 60). */
  logger?: Logger;
}

/** The signature a node-to-node call carries: time, and an HMAC over time, method, path and body. */
export function signCall(secret: string, method: string, path: string, body: string, time: number): string {
  const digest = createHash('sha256').update(body).digest('hex');
  return `${time}.${createHmac('sha256', secret).update(`${time}\n${method}\n${path}\n${digest}`).digest('hex')}`;
}

export function verifyCall(secret: string, header: string | undefined, method: string, path: string, body: string, now: number): boolean {
  const match = /^(\d{1,16})\.([0-9a-f]{64})$/.exec(header ?? '');
  if (!match) return false;
  const time = Number(match[1]);
  if (Math.abs(now - time) > SIGNATURE_WINDOW_MS) return false;
  const expected = Buffer.from(signCall(secret, method, path, body, time).split('.')[1]!, 'hex');
  return timingSafeEqual(expected, Buffer.from(match[2]!, 'hex'));
}

export class NodeLink implements ClusterLink {
  private sessions: SessionService | undefined;
  private presence: Presence | undefined;
  private timer: NodeJS.Timeout | undefined;
  private beating = false;
  private closed = false;
  /**
   * When this node last wrote its own heartbeat (the wall clock once the write came back), and
   * before when it judges no other node lost: a node never judges others from heartbeats it could
   * not read or write itself (decisions.md 124).
   */
  private lastBeatAt = 0;
  private judgeFrom = Number.POSITIVE_INFINITY;

  constructor(private readonly options: NodeLinkOptions) {}

  private get store(): Store {
    return this.options.store;
  }

  private get nodeId(): string {
    return this.options.node.id;
  }

  /** Registers the node, hears the others, and heart-beats until close(). */
  async start(sessions: SessionService, presence: Presence): Promise<void> {
    this.sessions = sessions;
    this.presence = presence;
    const database = this.store.database;
    await database.listen(STATUS_CHANNEL, (payload) => this.heardStatus(payload));
    await database.listen(PLACED_CHANNEL, (payload) => this.heardPlaced(payload));
    await this.register();
    // A node that just joined has watched nobody yet: every node gets a whole grace period first.
    this.lastBeatAt = this.options.now();
    this.judgeFrom = this.lastBeatAt + this.options.lostAfterMs;
    this.timer = setInterval(() => void this.beat(), this.options.heartbeatMs);
    this.timer.unref();
  }

  private async register(): Promise<void> {
    const now = this.options.now();
    const { node } = this.options;
    const row: NodeRow = {
      id: node.id,
      internal_url: node.internalUrl,
      advertised_url: node.advertisedUrl,
      capacity: node.capacity,
      browsers: JSON.stringify(node.browsers),
      warm: JSON.stringify(node.warm?.() ?? []),
      state: 'active',
      started_at: now,
      heartbeat_at: now,
    };
    await this.store.registerNode(row);
    this.options.logger?.info({ capacity: node.capacity, browsers: node.browsers, internal: node.internalUrl }, 'node joined');
  }

  /** One heartbeat: say this node lives, end the sessions of nodes that fell silent, start what was placed here. */
  private async beat(): Promise<void> {
    if (this.beating || this.closed || !this.sessions) return;
    this.beating = true;
    try {
      const now = this.options.now();
      if (!(await this.store.heartbeat(this.nodeId, now, JSON.stringify(this.options.node.warm?.() ?? [])))) {
        // Declared lost (silent too long) or removed while still running: its sessions ended in
        // the store, so their browsers end here too; then it takes new sessions again.
        this.options.logger?.warn('this node was declared lost (its heartbeats stopped); its sessions ended, it joins again');
        await this.sessions.abandonAll();
        await this.sessions.recover();
        await this.register();
      }
      this.wrote();
      if (this.options.watchOthers && this.options.now() >= this.judgeFrom) await this.endLostNodes(this.options.now());
      // A placement whose message was missed (the listener reconnecting) still starts.
      for (const row of await this.store.sessionsWithStatus(['starting'], this.nodeId)) void this.sessions.startPlaced(row.id);
    } catch {
      /* the database is unreachable: the next beat tries again */
    } finally {
      this.beating = false;
    }
  }

  /**
   * This node's heartbeat reached the store. After a stretch in which it could not (the database
   * restarting, failing over or out of reach, or this process stalled) no node could write its
   * own either, as far as this one knows: each gets a fresh grace period from now before it may be
   * judged lost. Only a node cut off alone stays silent through it, and only its sessions end.
   */
  private wrote(): void {
    const now = this.options.now();
    if (now - this.lastBeatAt > 2 * this.options.heartbeatMs) {
      this.judgeFrom = Math.max(this.judgeFrom, now + this.options.lostAfterMs);
      this.options.logger?.warn({ silentForMs: now - this.lastBeatAt }, 'this node could not write its heartbeat for a while; no node is judged lost before a fresh grace period');
    }
    this.lastBeatAt = now;
  }

  private async endLostNodes(now: number): Promise<void> {
    const cutoff = now - this.options.lostAfterMs;
    // Every node looks every heartbeat; only a finding takes the service's lock.
    if (!(await this.store.anySilentNode(cutoff))) return;
    const lostNodes: string[] = [];
    const moved = await this.store.atomically(async (tx) => {
      const lost = await tx.loseSilentNodes(cutoff);
      lostNodes.push(...lost);
      const ended: Array<{ id: string; status: string }> = [];
      for (const nodeId of lost) {
        ended.push(...(await tx.endSessionsOfNode(nodeId, nodeGoneMoves(now, {
          running: 'the node that ran the session stopped answering',
          starting: 'the node that started the session stopped answering',
        }))));
      }
      return ended;
    });
    for (const nodeId of lostNodes) this.options.logger?.warn({ lost: nodeId, silentForMs: this.options.lostAfterMs, ended: moved.length }, 'node lost: its sessions end');
    for (const { id, status } of moved) {
      this.sessions!.endedForLostNode(id, status);
      this.announce(id, status);
    }
  }

  // Messages between nodes --------------------------------------------------------------------

  alive(node: NodeWithLoad): boolean {
    return this.options.now() - node.heartbeat_at < this.options.lostAfterMs;
  }

  announce(id: string, status: string): void {
    void this.store.database.notify(STATUS_CHANNEL, JSON.stringify({ node: this.nodeId, id, status })).catch(() => undefined);
  }

  announceViewers(id: string): void {
    void this.store.database.notify(STATUS_CHANNEL, JSON.stringify({ node: this.nodeId, id, viewers: true })).catch(() => undefined);
  }

  placed(nodeId: string, sessionId: string): void {
    void this.store.database.notify(PLACED_CHANNEL, JSON.stringify({ node: nodeId, id: sessionId })).catch(() => undefined);
  }

  private heardStatus(payload: string): void {
    const message = parseMessage(payload);
    if (!message || message.node === this.nodeId) return;
    if (message.viewers) this.presence?.changedElsewhere(message.id);
    else this.sessions?.movedElsewhere(message.id, message.status ?? '');
  }

  private heardPlaced(payload: string): void {
    const message = parseMessage(payload);
    if (message && message.node === this.nodeId) void this.sessions?.startPlaced(message.id).catch(() => undefined);
  }

  // Calls to the node that runs a session -------------------------------------------------------

  /** The internal address of a node that is not lost. */
  async internalUrlOf(nodeId: string): Promise<string | undefined> {
    const node = await this.store.node(nodeId);
    return node && node.state !== 'lost' ? node.internal_url : undefined;
  }

  /**
   * A signed HTTP call to another node, the one path every node-to-node call takes (a removal, a
   * session's files): the answer as it arrives. The signature covers the method, the path with its
   * query, the time and a text body; a streamed body (a file) is not signed, so what must be
   * trusted of it (its length, the caps) travels in the signed query.
   */
  async call(nodeId: string, method: 'GET' | 'POST', path: string, body: string | Readable = '', timeoutMs?: number): Promise<IncomingMessage> {
    const base = await this.internalUrlOf(nodeId);
    if (!base) throw new Error('the node that runs this session is gone');
    const url = new URL(path, base);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const text = typeof body === 'string' ? body : '';
    const headers = { [AUTH_HEADER]: signCall(this.options.secret, method, path, text, this.options.now()), ...(text ? { 'content-type': 'application/json' } : {}) };
    return new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = send(url, { method, headers, ...(timeoutMs ? { signal: AbortSignal.timeout(timeoutMs) } : {}) }, resolve);
      outgoing.on('error', reject);
      if (typeof body === 'string') return void outgoing.end(body);
      body.on('error', (error) => outgoing.destroy(error));
      body.pipe(outgoing);
    });
  }

  /** Whether an HTTP call came from a node of this cluster: signed over its method, path with query and text body, in time. */
  isSigned(request: IncomingMessage, pathWithQuery: string, body = ''): boolean {
    return verifyCall(this.options.secret, header(request), request.method ?? 'GET', pathWithQuery, body, this.options.now());
  }

  /**
   * A signed call whose answer is JSON (`call`): its HTTP status and body, or undefined when the
   * node could not be reached or answered something else.
   */
  async callJson<T>(nodeId: string, method: 'GET' | 'POST', path: string, body = '', timeoutMs = CALL_TIMEOUT_MS): Promise<{ httpStatus: number; body: T } | undefined> {
    try {
      const answer = await this.call(nodeId, method, path, body, timeoutMs);
      const chunks: Buffer[] = [];
      for await (const chunk of answer) chunks.push(chunk as Buffer);
      return { httpStatus: answer.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as T };
    } catch {
      return undefined;
    }
  }

  async removeOn(nodeId: string, accountId: string, sessionId: string): Promise<Reply> {
    const answer = await this.callJson<Reply>(nodeId, 'POST', `/internal/v1/sessions/${sessionId}/remove`, JSON.stringify({ accountId }));
    return answer && answer.httpStatus >= 200 && answer.httpStatus < 300 ? answer.body : { status: 'error', message: 'the node that runs this session did not answer; try again in a few seconds' };
  }

  /** Opens a channel of a session another node runs (channels/router.ts): the caller's bytes go through it. */
  async openChannel(nodeId: string, sessionId: string, channel: string, credential: ChannelCredential, viewerKey?: string): Promise<() => Duplex> {
    const base = await this.internalUrlOf(nodeId);
    if (!base) throw new Error('the node that runs this session is gone');
    // The owner enforces what the credential allows; the signed path (with the viewer key's query) tells it which it was.
    // The key goes under its former name `seat` too, for one version, so a node not yet upgraded reads it (decisions.md 149).
    const key = viewerKey ? encodeURIComponent(viewerKey) : undefined;
    const path = `/internal/v1/sessions/${sessionId}/channels/${channel}/${credential}${key ? `?viewer=${key}&seat=${key}` : ''}`;
    const url = new URL(path, base);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    return () => {
      const socket = new WebSocket(url, {
        headers: { [AUTH_HEADER]: signCall(this.options.secret, 'GET', path, '', this.options.now()) },
        perMessageDeflate: false,
        handshakeTimeout: CALL_TIMEOUT_MS,
      });
      return webSocketEnd(socket);
    };
  }

  // Calls from other nodes ----------------------------------------------------------------------

  /**
   * Serves the node link's HTTP routes (node-routes.ts): the core's and every feature's, each call's
   * signature checked once before its route answers; false when the path is not the link's.
   */
  serve(routes: readonly NodeRoute[]): (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<boolean> {
    return serveNodeRoutes(routes, (request, path, body) => this.isSigned(request, path, body));
  }

  /** Verifies a node-to-node WebSocket upgrade: the session, channel and credential to open, or null. */
  verifyUpgrade(request: IncomingMessage, url: URL): { sessionId: string; channel: string; credential: ChannelCredential; viewerKey?: string } | null {
    const match = NODE_PATH.exec(url.pathname);
    if (!match) return null;
    if (request.method !== 'GET' || !this.isSigned(request, url.pathname + url.search)) return null;
    if (match[2] === 'rfb' || match[2] === 'rfb-view') return { sessionId: match[1]!, channel: 'rfb', credential: match[2] === 'rfb' ? 'share-link' : 'view-link' };
    const viewerKey = viewerKeyOf(url.searchParams);
    return { sessionId: match[1]!, channel: match[3]!, credential: match[4] as ChannelCredential, ...(viewerKey ? { viewerKey } : {}) };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
  }
}

function header(request: IncomingMessage): string | undefined {
  const value = request.headers[AUTH_HEADER];
  return Array.isArray(value) ? value[0] : value;
}

function parseMessage(payload: string): { node: string; id: string; status?: string; viewers?: boolean } | undefined {
  try {
    const value = JSON.parse(payload) as { node?: unknown; id?: unknown; status?: unknown; viewers?: unknown };
    if (typeof value.node !== 'string' || typeof value.id !== 'string') return undefined;
    return { node: value.node, id: value.id, ...(typeof value.status === 'string' ? { status: value.status } : {}), ...(value.viewers === true ? { viewers: true } : {}) };
  } catch {
    return undefined;
  }
}
