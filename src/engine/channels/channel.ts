// A channel: one kind of stream between someone outside and a session (the display's RFB, sound,
// video, files, editing, people, automation). A channel says its name and the credentials that
// open it; whether a session and its link are offered it (its plan, this node's configuration) and
// whether the viewer state tells viewers so; what a connection needs at the door (seats per link,
// open files, its largest message: door.ts); what presence counts it as; how its connections are
// closed; and how the node that runs the session carries one with its per-message policy. A
// byte-stream channel (RFB to the display, DevTools to the browser) gives the opener of its end in
// the session (`openEnd`: a relay run as the session's uid, outside its process space, so the
// engine never opens a session's path as root); a message channel reads what the session's parts
// say from the runtime (`ends`). Everything else (the door, finding the owner, forwarding, closing
// when the session ends) is the router's, once.
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { Plan } from '../config.js';
import type { SessionEnds } from '../runtime/index.js';
import type { SessionRow } from '../store/store.js';
import type { AttachmentKind } from './presence.js';

/** What a session has on the node that runs it (its display, encoders, DevTools end, files): the runtime says, a channel picks. */
export type { SessionBiDi, SessionDevTools, SessionEnds, SessionFolders } from '../runtime/index.js';

/** What a caller opens a channel with: the share link (control), a view-only link, or an API key. */
export type ChannelCredential = 'share-link' | 'view-link' | 'api-key';

export const CHANNEL_CREDENTIALS: readonly ChannelCredential[] = ['share-link', 'view-link', 'api-key'];

/** What a connection may do: `control` (share link, API key) or `view` (a view-only link only watches). */
export type ChannelRights = 'control' | 'view';

export function rightsOf(credential: ChannelCredential): ChannelRights {
  return credential === 'view-link' ? 'view' : 'control';
}

/** A WebSocket close code and its reason, as a viewer shows it (docs/viewer.md). */
export interface CloseReason {
  code: number;
  reason: string;
}

/** Seats of one session's channel: for the share link's holders (control, also an API key) and for the view-only link's watchers. */
export interface LinkSeats {
  control: number;
  view: number;
}

/** What one attachment of a channel needs at the door: its seats per link, the engine's files it holds, the largest message it may send. */
export interface DoorNeeds {
  seats: LinkSeats;
  /** Open files one attachment makes the engine hold (its socket, and any pipe or connection into the session). */
  files: number;
  /**
   * The largest message (all its fragments together) a caller may send on one attachment; a
   * bigger one closes the attachment with 1009 before the channel sees any of it (door.ts). At
   * most MAX_MESSAGE_BYTES.
   */
  messageBytes: number;
}

/** Why a connection got no seat at the door: its link's seats for the session are taken, its address holds its share, or the engine is at its open-files reserve. */
export type SeatRefusal = 'full' | 'address' | 'busy';

/** One connection being carried on the node that runs the session. */
export interface ChannelConnection {
  socket: WebSocket;
  sessionId: string;
  rights: ChannelRights;
  /**
   * What the session has here: a channel that carries messages from a part (sound, video) reads
   * its part from it. Absent while the session's runtime has not begun (its display is not up yet).
   */
  ends?: SessionEnds;
  /** Opens a new stream to the channel's end inside the session; present for a byte-stream channel (one with `openEnd`). */
  openEnd?: () => Duplex;
  /** The viewer key the caller gave (`?viewer=`, issue 36): whose input this is among the session's people (channels/control/). */
  viewerKey?: string;
}

export interface Channel {
  /** Its name: the share API's route and the node link's path segment (lowercase, digits, dashes). */
  readonly name: string;
  /** The credentials that open it; any other is refused before the WebSocket is accepted. */
  readonly opensWith: readonly ChannelCredential[];
  /** What presence counts a connection as. */
  readonly attachment: AttachmentKind;
  /** How a connection is closed when the session's end of the channel goes away, and when the policy refuses a message. */
  readonly closes: { endClosed: CloseReason; refused: CloseReason };
  /**
   * Whether a session and its link are offered the channel here: this node's configuration and
   * programs, and the plan the session takes its slot from (undefined: a plan no longer
   * configured, which keeps every default). Asked by the router before a connection is accepted
   * (403 when not), and by the share API for the viewer state (`advertised`).
   */
  offered(row: SessionRow, plan: Plan | undefined): boolean | Promise<boolean>;
  /** Whether the share API's viewer state says `"<name>": true` where the channel is offered (a viewer opens it only when told). */
  readonly advertised?: boolean;
  /**
   * For a channel that is a byte stream into the session (RFB to its display, DevTools to its
   * browser): the opener of its end in a session this node runs, or undefined when the session
   * has none (yet; the connection is then closed as not running). A channel that carries messages
   * from a part of the session reads it from its connection's `ends` instead.
   */
  openEnd?(session: SessionEnds): (() => Duplex) | undefined;
  /**
   * What a connection needs at the door (door.ts): seats per session for each link, and the
   * engine's open files it holds. The router admits it on the node the caller reached and again
   * on the owner; the channel never seats anyone itself.
   */
  readonly needs: DoorNeeds;
  /** Carries one connection on the owning node with the channel's per-message policy; resolves when it ends. */
  carry(connection: ChannelConnection): Promise<void>;
  /** The engine closes: per-session state (RFB's rooms) goes. */
  close(): void;
}
