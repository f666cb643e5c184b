// The one door every attachment to a session passes before its channel sees it (docs/architecture.md
// "One door", decisions.md 78): RFB, sound, video, files, automation, the share API's event
// streams and whatever channel comes next. It gives a seat on the attachment's link (the share
// link's holders and the view-only link's watchers have seats of their own, so a link with control
// always has one), holds one client address to its share, keeps the engine's open-files reserve,
// and, while the attachment lasts, cuts off a reader that does not read (a bounded buffer) and a
// peer that no longer answers (pings). Channels only declare what they need; the router (and the
// share API for event streams) holds the door, so no channel can skip it.
import type { ServerResponse } from 'node:http';
import type { WebSocket } from 'ws';
import type { OpenFiles } from '../limits/open-files.js';
import type { ChannelRights, CloseReason, DoorNeeds, SeatRefusal } from './channel.js';
import { VIEWER_CLOSE } from './close-codes.js';

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
  needs: DoorNeeds;
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

  constructor(limits: Partial<DoorLimits> = {}, private readonly openFiles?: OpenFiles) {
    this.limits = { ...DEFAULT_DOOR_LIMITS, ...limits };
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
   * Watches an admitted WebSocket for as long as it is open: every send that leaves more than
   * `bufferBytes` queued toward the peer cuts it off (VIEWER_CLOSE.slow), and a peer that answered
   * no ping within a heartbeat is cut off (VIEWER_CLOSE.silent). Whatever a channel sends passes here.
   */
  watch(socket: WebSocket): void {
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
