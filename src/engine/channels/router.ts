// The one way into a session's channels. Given a session and a credential already checked (a
// share link by the share API; an API key by the HTTP API, for automation), it finds the node
// that owns the session (store/owner.ts): there, it opens the channel's end inside the session,
// counts the attachment (presence.ts) and carries the connection with the channel's policy;
// anywhere else, it forwards the connection over the one signed node-to-node path, whatever the
// channel. Every connection passes the door (door.ts) on the node it reached and again on the
// owner, whatever its channel declares: the door accepts the WebSocket with the channel's message
// limit and watches it from its first byte, so no channel seats, buffers or times out on its own. It
// closes every connection of a session that ends. A session in standby is woken before its
// channel serves the connection.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { sessionOwner } from '../store/owner.js';
import type { Plan } from '../config.js';
import type { SessionRow } from '../store/store.js';
import { rightsOf, type Channel, type ChannelCredential, type ChannelRights, type SeatRefusal, type SessionEnds } from './channel.js';
import { VIEWER_CLOSE } from './close-codes.js';
import type { Door } from './door.js';
import type { Presence } from './presence.js';
import type { ChannelRegistry } from './registry.js';
import { relay } from './relay.js';

/** A connection to open: which channel of which session, with what, from where. */
export interface ChannelTarget {
  channel: string;
  /** The session as the store has it (its status and node; its plan and browser say whether it is offered the channel). */
  row: SessionRow;
  credential: ChannelCredential;
  /** The client's address (behind trusted proxies); null when another node carries it (counted there). */
  address: string | null;
  /** The viewer key the caller gave (`?viewer=`): its input counts as its own among the session's people (issue 36). */
  viewerKey?: string;
}

/** Opens a channel of a session at the node that runs it (cluster/node-link.ts). */
export type ChannelForwarder = (nodeId: string, sessionId: string, channel: string, credential: ChannelCredential, viewerKey?: string) => Promise<() => Duplex>;

export interface ChannelRouterOptions {
  registry: ChannelRegistry;
  /** This node's id. */
  nodeId: string;
  presence: Presence;
  /** The door every connection passes (seats per link, the address's share, open files, buffer and heartbeat). */
  door: Door;
  /** The plan a session takes its slot from (the session service); undefined when no longer configured. */
  planOf(row: SessionRow): Promise<Plan | undefined>;
  /** What a session this node runs (or starts) has to open channel ends in; undefined for any other. */
  endsOf(sessionId: string): SessionEnds | undefined;
  /** Status changes of sessions (the session service): an ended session's connections close. */
  statusChanges: { on(event: 'status', listener: (change: { id: string; status: string }) => void): unknown };
  /** Forwards to the owning node; absent on one machine. */
  forward?: ChannelForwarder;
  /**
   * Wakes a session this node runs from standby (sessions/standby.ts, decisions.md 141): every
   * attachment waits for it before its channel is served; a rejection (it could not be woken, and
   * ends) closes the connection as for a session that no longer runs.
   */
  wake?: (sessionId: string) => Promise<void>;
}

const SEAT_REFUSALS: Record<SeatRefusal, { code: number; reason: string }> = { full: VIEWER_CLOSE.full, address: VIEWER_CLOSE.address, busy: VIEWER_CLOSE.busy };

export class ChannelRouter {
  /** Open connections per session, to close when the session ends. */
  private readonly connections = new Map<string, Set<WebSocket>>();

  constructor(private readonly options: ChannelRouterOptions) {
    // When a session ends, every connection is told why and closed.
    options.statusChanges.on('status', ({ id, status }) => {
      if (status === 'running' || status === 'starting') return;
      for (const socket of this.connections.get(id) ?? []) socket.close(VIEWER_CLOSE.ended.code, VIEWER_CLOSE.ended.reason);
    });
  }

  /** Whether a channel of this name is registered. */
  has(channel: string): boolean {
    return this.options.registry.has(channel);
  }

  /**
   * The channels that say so in the viewer state (`advertised`) and that the session and its link
   * are offered here, in the order of registration.
   */
  async advertised(row: SessionRow): Promise<string[]> {
    const plan = this.planOnce(row);
    const names: string[] = [];
    for (const channel of this.options.registry.all()) {
      if (channel.advertised && (await channel.offered(row, await plan()))) names.push(channel.name);
    }
    return names;
  }

  /** The session's plan, looked up once and only when a channel asks. */
  private planOnce(row: SessionRow): () => Promise<Plan | undefined> {
    let plan: Promise<Plan | undefined> | undefined;
    return () => (plan ??= this.options.planOf(row));
  }

  /**
   * Takes a WebSocket upgrade for a channel of a session whose credential the caller checked:
   * carried here when this node owns the session, forwarded to the owner otherwise.
   */
  async open(request: IncomingMessage, socket: Duplex, head: Buffer, target: ChannelTarget): Promise<void> {
    const channel = this.options.registry.get(target.channel);
    if (!channel) return refuse(socket, 404, 'Not Found');
    if (!channel.opensWith.includes(target.credential)) return refuse(socket, 403, 'Forbidden');
    // Asked on the node the caller reached (its configuration), once: a forwarded one is not asked again.
    if (!(await channel.offered(target.row, await this.options.planOf(target.row)))) return refuse(socket, 403, 'Forbidden');
    const { row, credential, address } = target;
    const rights = rightsOf(credential);
    const owner = sessionOwner(row, this.options.nodeId);
    const { forward } = this.options;
    if (owner.at === 'node' && forward) {
      // Another node runs it: this node carries the bytes to that node, which applies the policy.
      const connect = await forward(owner.nodeId, row.id, channel.name, credential, target.viewerKey).catch(() => undefined);
      this.options.door.accept(request, socket, head, channel.needs, (ws) => {
        if (!connect) return ws.close(VIEWER_CLOSE.notRunning.code, VIEWER_CLOSE.notRunning.reason);
        const leave = this.seat(channel, row.id, ws, rights, address);
        if (!leave) return;
        void relay(ws, connect, { onEndClosed: channel.closes.endClosed }).finally(leave);
      });
      return;
    }
    this.options.door.accept(request, socket, head, channel.needs, (ws) => this.carryHere(ws, channel, row.id, owner.at !== 'none', rights, address, target.viewerKey));
  }

  /**
   * Takes a connection that another node forwards (node-to-node, its signature already checked):
   * carried to the session this node runs.
   */
  openForwarded(request: IncomingMessage, socket: Duplex, head: Buffer, target: { sessionId: string; channel: string; credential: ChannelCredential; viewerKey?: string }): void {
    const channel = this.options.registry.get(target.channel);
    if (!channel) return refuse(socket, 404, 'Not Found');
    if (!channel.opensWith.includes(target.credential)) return refuse(socket, 403, 'Forbidden');
    // The node the caller reached counted its address; here the address would be that node's.
    this.options.door.accept(request, socket, head, channel.needs, (ws) => this.carryHere(ws, channel, target.sessionId, true, rightsOf(target.credential), null, target.viewerKey));
  }

  /** Opens the channel's end in a session this node runs and carries the connection with the channel's policy. */
  private carryHere(ws: WebSocket, channel: Channel, sessionId: string, active: boolean, rights: ChannelRights, address: string | null, viewerKey?: string): void {
    // A viewer may connect while the session starts (its waiting screen stays up meanwhile), so
    // the live session shows the moment it is running.
    // A byte stream needs its end in the session; any other channel only the session to be here
    // (what it carries from the session's parts, it reads from `ends`).
    // A hibernated session has no ends anywhere until its first attachment resumes it here (decisions.md 166).
    if (!active) return ws.close(VIEWER_CLOSE.notRunning.code, VIEWER_CLOSE.notRunning.reason);
    const leave = this.seat(channel, sessionId, ws, rights, address);
    if (!leave) return;
    // Counted first, so the session is not put back into standby while it wakes.
    const attachment = this.options.presence.attach(sessionId, channel.attachment, { channel: channel.name, rights });
    const { wake } = this.options;
    // What the client sends while the session wakes (a program speaks first) waits in the socket,
    // unread, until the channel carries the connection: a message read before it listens is lost.
    ws.pause();
    // A channel's failure ends its connection, never the engine.
    Promise.resolve()
      .then(() => wake?.(sessionId))
      .then(
        () => {
          // Its ends as they are once it runs (a resumed session's are new).
          const ends = this.options.endsOf(sessionId);
          const openEnd = channel.openEnd && ends ? channel.openEnd(ends) : undefined;
          ws.resume();
          if (channel.openEnd && !openEnd) return ws.close(VIEWER_CLOSE.notRunning.code, VIEWER_CLOSE.notRunning.reason);
          return channel.carry({ socket: ws, sessionId, rights, ...(ends ? { ends } : {}), ...(openEnd ? { openEnd } : {}), ...(viewerKey ? { viewerKey } : {}) });
        },
        // Not woken: it ends with the reason; the connection is told it no longer runs.
        () => {
          ws.resume();
          ws.close(VIEWER_CLOSE.notRunning.code, VIEWER_CLOSE.notRunning.reason);
        },
      )
      .catch(() => ws.terminate())
      .finally(() => {
        leave();
        attachment.leave();
      });
  }

  /**
   * Seats a connection (its channel's seats, its address's share, the engine's open files) and
   * keeps it to close when the session ends; undefined, and the socket closed with the reason,
   * when there is no seat. Answers how to give the seat back.
   */
  private seat(channel: Channel, sessionId: string, ws: WebSocket, rights: ChannelRights, address: string | null): (() => void) | undefined {
    const seat = this.options.door.admit({ channel: channel.name, sessionId, rights, address, needs: channel.needs });
    if (typeof seat === 'string') {
      ws.close(SEAT_REFUSALS[seat].code, SEAT_REFUSALS[seat].reason);
      return undefined;
    }
    const held = this.connections.get(sessionId) ?? new Set<WebSocket>();
    held.add(ws);
    this.connections.set(sessionId, held);
    return () => {
      seat.leave();
      held.delete(ws);
      if (held.size === 0 && this.connections.get(sessionId) === held) this.connections.delete(sessionId);
    };
  }

  close(): void {
    this.options.registry.close();
    this.options.door.close();
  }
}

function refuse(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
}
