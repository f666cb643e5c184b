// The viewers of one session's display on the node that runs it: who may control (full link) and
// who only watches (view-only link, enforced here message by message), which viewer controls now
// (the latest to press a key or a button), and the display's size, which follows the controlling
// viewer's area within the operator's limits, at most one change per RESIZE_INTERVAL_MS. What a
// viewer holds down is let go when it stops driving and when it leaves (held-input.ts).
import { BROWSER_MIN_WIDTH } from '../../../protocol/limits.js';
import { HeldInput } from './held-input.js';
import { pressesButton, requestedSize, setDesktopSize, type ClientMessage, type DesktopSize } from './rfb-client-messages.js';

/** Seats of a session's viewers as the configuration gives them (`viewers`, decisions.md 47): RFB's (the door holds them), and the share API's event streams follow. */
export interface ViewerSeatLimits {
  /** Viewers on a session's share link (they may control) at once. */
  controlling: number;
  /** Viewers on a session's view-only link at once: never taken from the share link's seats. */
  watching: number;
  /** Viewers one client address holds at once, over every session of this node (per channel). */
  perAddress: number;
}

export const DEFAULT_VIEWER_SEATS: ViewerSeatLimits = { controlling: 8, watching: 8, perAddress: 64 };

/** What a link lets its holder do: `control` (the share link) or `view` (a view-only link). */
export type ViewerRights = 'control' | 'view';

/** The sizes a viewer may give the display (config `display`). */
export interface DisplayLimits {
  minWidth: number;
  minHeight: number;
  maxWidth: number;
  maxHeight: number;
}

export const DEFAULT_DISPLAY_LIMITS: DisplayLimits = { minWidth: 320, minHeight: 320, maxWidth: 2560, maxHeight: 1600 };


/** The display size for a viewer's area: at least BROWSER_MIN_WIDTH wide (same shape), within the limits. */
export function displaySizeFor(area: DesktopSize, limits: DisplayLimits): DesktopSize {
  let { width, height } = area;
  if (width > 0 && width < BROWSER_MIN_WIDTH) {
    height = Math.round((height * BROWSER_MIN_WIDTH) / width);
    width = BROWSER_MIN_WIDTH;
  }
  return {
    width: Math.min(limits.maxWidth, Math.max(limits.minWidth, width)),
    height: Math.min(limits.maxHeight, Math.max(limits.minHeight, height)),
  };
}

/** Resizes closer together than this are merged (a window being dragged larger sends many). */
export const RESIZE_INTERVAL_MS = 100;

export interface Viewer {
  readonly rights: ViewerRights;
  /**
   * What of this viewer's message reaches the display: the bytes to write (possibly rewritten),
   * or null when it is held back.
   */
  admit(message: ClientMessage): Buffer | null;
  /**
   * The viewer left: it no longer controls, and a resize it asked for is dropped. Answers the
   * messages that let go of the keys and buttons it still held, for the connection's last write.
   */
  leave(): Buffer[];
}

/** A viewer's own connection to the display, as the room writes to it on the viewer's behalf. */
export interface ViewerEnd {
  write(bytes: Buffer): void;
  /** Whether a display size may be written on it (its viewer announced ExtendedDesktopSize: decisions.md 50). */
  takesSizes(): boolean;
}

/**
 * What decides, in a session with one driver at a time (issue 36, channels/control/), whether this
 * viewer's input reaches the display; absent: its link's rights alone decide.
 */
export interface InputGate {
  /** Whether a key, pointer or clipboard message passes; `presses` (a key, a button) may make it the driver when nobody drives. */
  admits(presses: boolean): boolean;
  /** Whether it drives now (its display size is applied only then). */
  drives(): boolean;
  /** Its pointer moved (after it was admitted): the others see where the driver is. */
  pointer(x: number, y: number): void;
  /** Calls `changed` after each change of driver (or mode) until the returned function is called. */
  watch(changed: () => void): () => void;
}

/** A viewer in the room: its rights, its connection, what it holds down and the size it wants. */
interface Attendee {
  rights: ViewerRights;
  gate: InputGate | undefined;
  /** This viewer's own connection to the display. */
  end: ViewerEnd;
  /** The keys and buttons its passed messages hold down. */
  input: HeldInput;
  /** The last SetDesktopSize it asked for, clamped; applied when it takes control. */
  wanted: { size: DesktopSize; message: ClientMessage } | null;
  /** Its last request is held (it did not control): it waits for an answer before asking again. */
  held: boolean;
}

export class ViewerRoom {
  private readonly attendees = new Set<Attendee>();
  private controller: Attendee | null = null;
  private applied: DesktopSize | null = null;
  private lastResizeAt = 0;
  private resizeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly limits: DisplayLimits = DEFAULT_DISPLAY_LIMITS) {}

  get size(): number {
    return this.attendees.size;
  }

  join(rights: ViewerRights, end: ViewerEnd, gate?: InputGate): Viewer {
    const attendee: Attendee = { rights, gate, end, input: new HeldInput(), wanted: null, held: false };
    this.attendees.add(attendee);
    // Control passed to someone else: what this viewer held goes up now, or the new driver's
    // keys would come with its Shift and its moves drag with its button.
    const unwatch = gate?.watch(() => {
      if (attendee.input.holds && !gate.drives()) for (const bytes of attendee.input.letGo()) attendee.end.write(bytes);
    });
    return {
      rights,
      admit: (message) => {
        const bytes = this.admit(attendee, message);
        if (bytes) attendee.input.passed(message);
        return bytes;
      },
      leave: () => {
        unwatch?.();
        this.attendees.delete(attendee);
        if (this.controller === attendee) this.controller = null;
        return attendee.input.letGo();
      },
    };
  }

  private admit(attendee: Attendee, message: ClientMessage): Buffer | null {
    if (message.kind === 'handshake' || message.kind === 'watch') return message.bytes;
    // A view-only link watches: its keys, pointer, clipboard and size never reach the display.
    if (attendee.rights === 'view') return null;
    if (attendee.gate && message.kind !== 'resize') {
      const presses = message.kind === 'key' || pressesButton(message);
      if (!attendee.gate.admits(presses)) return null;
      if (message.kind === 'pointer') attendee.gate.pointer(message.bytes.readUInt16BE(2), message.bytes.readUInt16BE(4));
    }
    switch (message.kind) {
      case 'key':
        this.takeControl(attendee);
        return message.bytes;
      case 'pointer':
        // Passing over the screen is not taking it: only a press (or the wheel) is.
        if (pressesButton(message)) this.takeControl(attendee);
        return message.bytes;
      case 'clipboard':
        return message.bytes;
      case 'resize': {
        const size = requestedSize(message);
        if (!size) return null;
        attendee.wanted = { size: displaySizeFor(size, this.limits), message };
        // Not the driver (one at a time): its size waits until it drives and gives input.
        if (attendee.gate && !attendee.gate.drives()) {
          attendee.held = true;
          return null;
        }
        // The first viewer to ask, with no one controlling, controls until another gives input.
        if (this.controller === null || !this.attendees.has(this.controller)) this.controller = attendee;
        if (this.controller === attendee) this.scheduleResize();
        else attendee.held = true;
        return null;
      }
    }
  }

  private takeControl(attendee: Attendee): void {
    if (this.controller === attendee) return;
    this.controller = attendee;
    const wanted = attendee.wanted?.size;
    // noVNC asks once and waits for the answer: a held request is always passed on.
    if (wanted && (attendee.held || wanted.width !== this.applied?.width || wanted.height !== this.applied?.height)) this.scheduleResize();
  }

  /** Applies the controller's wanted size now, or at the end of the interval since the last change. */
  private scheduleResize(): void {
    if (this.resizeTimer) return;
    const wait = this.lastResizeAt + RESIZE_INTERVAL_MS - Date.now();
    if (wait <= 0) return this.resize();
    this.resizeTimer = setTimeout(() => {
      this.resizeTimer = undefined;
      this.resize();
    }, wait);
  }

  private resize(): void {
    const attendee = this.controller;
    if (!attendee?.wanted || !this.attendees.has(attendee)) return;
    this.lastResizeAt = Date.now();
    this.applied = attendee.wanted.size;
    attendee.held = false;
    // On the controller's own connection: Xvnc tells it "you asked" and the others "another did".
    // None goes to a viewer whose latest SetEncodings no longer announces ExtendedDesktopSize.
    if (attendee.end.takesSizes()) attendee.end.write(setDesktopSize(attendee.wanted.size, attendee.wanted.message));
  }

  close(): void {
    clearTimeout(this.resizeTimer);
    this.resizeTimer = undefined;
    this.attendees.clear();
    this.controller = null;
  }
}
