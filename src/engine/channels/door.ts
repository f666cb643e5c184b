// The one door every attachment to a session passes before its channel sees it (docs/architecture.md
// "One door", decisions.md 78 and 123): RFB, sound, video, files, automation, people, the share
// API's event streams and whatever channel comes next. It owns each attachment's whole life, so
// that no channel can forget a part of it: it accepts the WebSocket itself, with the largest
// message the channel declares (a bigger one closes it with 1009 before the channel reads any of
// it), with its own `error` listener (ws emits one for every frame it cannot take: oversized,
// compressed, malformed; an unheard one would end the process and every session of the node), and
// its own answers to pings; it gives a seat on the attachment's link (the share link's holders and
// the view-only link's watchers have seats of their own, so a link with control always has one),
// holds one client address to its share, keeps the engine's open-files reserve, and, while the
// attachment lasts, cuts off a reader that does not read (a bounded buffer, pongs included) and a
// peer that no longer answers (pings). Channels only declare what they need; the router (and the
// share API for event streams) holds the door, so no channel can skip it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { OpenFiles } from '../limits/open-files.js';
import type { ChannelRights, CloseReason, DoorNeeds, SeatRefusal } from './channel.js';
import { VIEWER_CLOSE } from './close-codes.js';

/** The largest message any channel may declare (needs.messageBytes): RFB's clipboard text is the biggest today (1 MiB). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** How long a connection the door closed for a bad frame may take to answer the close before it is cut. */
const CLOSE_GRACE_MS = 1000;

export interface DoorLimits {
  /** Attachments one client address holds at once to one channel, over every session of this node (config `viewers.perAddress`). */
  perAddress: number;
  /** Bytes queued toward a reader that does not read before it is cut off. */
  bufferBytes: number;
  /** A WebSocket peer is pinged this often, and cut off when it did not answer the last ping. */
  heartbeatMs: number;
}

export const DEFAULT_DOOR_LIMITS: DoorLimits = { perAddress: 64, bufferBytes: 32 * 1024 * 1024, heartbeatMs: 30_000 };

/** Who comes in: to which channel of which session, with what rights, from where (null: another node counted the address). */
export interface Arrival {
  channel: string;
  sessionId: string;
  rights: ChannelRights;
  address: string | null;
  needs: Pick<DoorNeeds, 'seats' | 'files'>;
}

export interface Pass {
  /** Gives the seat back (once; later calls do nothing). */
  leave(): void;
}

export class Door {
  /** Seats taken per session and channel, by rights. */
  private readonly taken = new Map<string, { control: number; view: number }>();
  /** Attachments per channel and client address. */
  private readonly byAddress = new Map<string, number>();
  private readonly limits: DoorLimits;

  /** One WebSocket acceptor per message limit a channel declared (ws takes the limit per server). */
  private readonly acceptors = new Map<number, WebSocketServer>();

  constructor(limits: Partial<DoorLimits> = {}, private readonly openFiles?: OpenFiles) {
    this.limits = { ...DEFAULT_DOOR_LIMITS, ...limits };
  }

  /**
   * Accepts a WebSocket upgrade for an attachment with `needs`: the socket is watched (watch())
   * before `then` sees it, whatever `then` does with it (seats it, closes it at once).
   */
  accept(request: IncomingMessage, socket: Duplex, head: Buffer, needs: Pick<DoorNeeds, 'messageBytes'>, then: (ws: WebSocket) => void): void {
    // The registry has checked the limit (1 byte to MAX_MESSAGE_BYTES).
    const limit = needs.messageBytes;
    let acceptor = this.acceptors.get(limit);
    if (!acceptor) {
      // Pings are answered by watch(), which counts the pongs against the reader's buffer.
      acceptor = new WebSocketServer({ noServer: true, maxPayload: limit, perMessageDeflate: false, autoPong: false });
      this.acceptors.set(limit, acceptor);
    }
    acceptor.handleUpgrade(request, socket, head, (ws) => {
      this.watch(ws);
      then(ws);
    });
  }

  /** Ends every attachment the door accepted (the engine closes). */
  close(): void {
    for (const acceptor of this.acceptors.values()) {
      for (const client of acceptor.clients) client.terminate();
      acceptor.close();
    }
    this.acceptors.clear();
  }

  /** A seat for `arrival`, or why there is none (nothing is taken then). */
  admit(arrival: Arrival): Pass | SeatRefusal {
    const { channel, sessionId, rights, address, needs } = arrival;
    const key = `${channel}\n${sessionId}`;
    const session = this.taken.get(key) ?? { control: 0, view: 0 };
    if (session[rights] >= needs.seats[rights]) return 'full';
    const addressKey = address === null ? null : `${channel}\n${address}`;
    if (addressKey !== null && (this.byAddress.get(addressKey) ?? 0) >= this.limits.perAddress) return 'address';
    if (this.openFiles && !this.openFiles.take(needs.files, 'viewer')) return 'busy';
    session[rights] += 1;
    this.taken.set(key, session);
    if (addressKey !== null) this.byAddress.set(addressKey, (this.byAddress.get(addressKey) ?? 0) + 1);
    let left = false;
    return {
      leave: () => {
        if (left) return;
        left = true;
        this.openFiles?.give(needs.files);
        session[rights] -= 1;
        if (session.control === 0 && session.view === 0 && this.taken.get(key) === session) this.taken.delete(key);
        if (addressKey === null) return;
        const count = (this.byAddress.get(addressKey) ?? 1) - 1;
        if (count === 0) this.byAddress.delete(addressKey);
        else this.byAddress.set(addressKey, count);
      },
    };
  }

  /**
   * Watches a WebSocket for as long as it is open: a frame it cannot take (over the message limit,
   * compressed, malformed) closes it (ws sends the close code) and it is cut if the peer does not
   * answer within a second; every send or pong that leaves more than `bufferBytes` queued toward
   * the peer cuts it off (VIEWER_CLOSE.slow), and a peer that answered no ping within a heartbeat
   * is cut off (VIEWER_CLOSE.silent). Whatever a channel sends passes here.
   */
  private watch(socket: WebSocket): void {
    const { bufferBytes, heartbeatMs } = this.limits;
    const send = socket.send.bind(socket) as (...args: unknown[]) => void;
    let cut = false;
    const cutOff = (close: CloseReason) => {
      if (cut) return;
      cut = true;
      clearInterval(heartbeat);
      // A peer that does not read would never take the close frame: the close is sent, and the
      // socket goes at once whether or not it was read.
      try {
        socket.close(close.code, close.reason);
      } finally {
        socket.terminate();
      }
    };
    (socket as { send: (...args: unknown[]) => void }).send = (...args: unknown[]) => {
      if (cut) return;
      send(...args);
      if (socket.bufferedAmount > bufferBytes) cutOff(VIEWER_CLOSE.slow);
    };
    // ws has already sent the close (1009, 1002, 1007) for a frame it could not take; a peer that
    // does not answer it is not held for ws's own 30 s.
    socket.on('error', () => setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref());
    // A flood of pings from a peer that does not read would queue pongs without bound.
    socket.on('ping', (data: Buffer) => {
      if (cut || socket.readyState !== socket.OPEN) return;
      socket.pong(data);
      if (socket.bufferedAmount > bufferBytes) cutOff(VIEWER_CLOSE.slow);
    });
    let answered = true;
    socket.on('pong', () => (answered = true));
    const heartbeat = setInterval(() => {
      if (!answered) return cutOff(VIEWER_CLOSE.silent);
      answered = false;
      try {
        socket.ping();
      } catch {
        cutOff(VIEWER_CLOSE.silent);
      }
    }, heartbeatMs);
    heartbeat.unref();
    socket.once('close', () => clearInterval(heartbeat));
  }

  /**
   * Writes to an admitted HTTP stream (server-sent events) for as long as it is open; more than
   * `bufferBytes` queued toward a client that does not read ends the response. Answers the writer.
   */
  streamTo(response: ServerResponse): (text: string) => void {
    return (text) => {
      if (response.destroyed || response.writableEnded) return;
      response.write(text);
      if (response.writableLength > this.limits.bufferBytes) response.destroy();
    };
  }
}
