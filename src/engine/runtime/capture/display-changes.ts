// When the session's display changes (decisions.md 118): the engine's own RFB connection to the
// session's Xvnc, which asks for nothing but to be told. Xvnc (TigerVNC) keeps, for each client,
// what changed on the screen since its last update, and answers an incremental
// FramebufferUpdateRequest only once something in it changed: one request outstanding is a
// listener for the next change, at no cost while the screen is still. The answer's pixels are read
// and thrown away; they come as Raw at 8 bits a pixel, the cheapest form for Xvnc to make (no
// compression) and to carry (a quarter of its own 32). Opened from inside the session like any
// viewer's connection (Display.connect), never by the socket's path as root.
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';

const VERSION = 'RFB 003.008\n';
const SECURITY_NONE = 1;
const SET_PIXEL_FORMAT = 0;
const SET_ENCODINGS = 2;
const FRAMEBUFFER_UPDATE_REQUEST = 3;
const RAW = 0;
/** Announced so that a viewer resizing the display only tells this client the new size (Xvnc cuts off a client that can follow no resize). */
const DESKTOP_SIZE = -223;
const EXTENDED_DESKTOP_SIZE = -308;
/** Announced so that the pointer's shape comes apart from the pixels: Xvnc would otherwise draw the pointer into them, and every move would be a change. */
const CURSOR = -239;
const SERVER_MESSAGE = { update: 0, colours: 1, bell: 2, cutText: 3 } as const;
/** Clipboard text another viewer copied comes to every client; longer than this is not RFB from Xvnc. */
const MAX_CUT_TEXT = 1 << 20;

/** Xvnc names its desktop `Remote browser` (runtime/display); a name past this is not Xvnc's, and is never buffered. */
const MAX_DESKTOP_NAME = 4096;
/** How long the handshake may take: Xvnc answers in milliseconds; a silent or slow peer is not it. */
const HANDSHAKE_MS = 10_000;
/** Updates that carry only the pointer's shape or the desktop's size may come unasked (a resize), but not this many in a second. */
const UNASKED_PER_SECOND = 50;

/** 8-bit true colour, blue-green-red 2-3-3. */
const PIXEL_FORMAT = Buffer.from([8, 8, 0, 1, 0, 7, 0, 7, 0, 3, 0, 3, 6, 0, 0, 0]);

type Phase = 'version' | 'security-types' | 'security-result' | 'init' | 'messages';

/**
 * One listener for the display's changes: `listen()` asks Xvnc to say when the screen next
 * changes, and `change` is emitted once when it does. `closed` is emitted once when the connection
 * ends (the display went, or Xvnc spoke a protocol this client does not follow): no more changes
 * will be told.
 */
export class DisplayChanges extends EventEmitter<{ ready: []; change: []; closed: [string] }> {
  private buffer: Buffer = Buffer.alloc(0);
  private phase: Phase = 'version';
  private width = 0;
  private height = 0;
  private ended = false;
  /** Within an update: its rectangles still to come, and the bytes of the current one still to skip. */
  private inUpdate = false;
  private rectanglesLeft = 0;
  private skipping = 0;
  /** Whether the update being read was asked for; unasked updates in the current second. */
  private asked = false;
  private unasked = { second: 0, count: 0 };
  private readonly handshake: NodeJS.Timeout;
  /** Whether a request is with Xvnc and not yet answered. */
  listening = false;

  /**
   * Reads what the session's display sends, bounded as the door bounds a client (decisions.md
   * 125): the handshake within HANDSHAKE_MS and a desktop name within MAX_DESKTOP_NAME, so that
   * nothing is buffered past a few KiB; pixels skipped as they come; an update nobody asked for is
   * a protocol error unless it only tells the pointer's shape or the display's size, and even those
   * only UNASKED_PER_SECOND a second. Past a bound the connection ends (`closed` with why).
   */
  constructor(private readonly socket: Duplex) {
    super();
    this.handshake = setTimeout(() => this.end(`the display did not finish its handshake within ${HANDSHAKE_MS / 1000} s`), HANDSHAKE_MS);
    this.handshake.unref();
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', (error) => this.end(error.message));
    socket.on('close', () => this.end('the display closed the connection'));
  }

  /** Whether the handshake is done and changes can be listened for. */
  get ready(): boolean {
    return this.phase === 'messages' && !this.ended;
  }

  /** Asks to be told the next change (once the connection is ready; a request already out stands). */
  listen(): void {
    if (!this.ready || this.listening) return;
    this.listening = true;
    const request = Buffer.alloc(10);
    request.writeUInt8(FRAMEBUFFER_UPDATE_REQUEST, 0);
    request.writeUInt8(1, 1);
    request.writeUInt16BE(this.width, 6);
    request.writeUInt16BE(this.height, 8);
    this.socket.write(request);
  }

  close(): void {
    this.end('closed');
  }

  private end(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.handshake);
    this.listening = false;
    this.socket.destroy();
    this.emit('closed', reason);
  }

  private read(chunk: Buffer): void {
    if (this.ended) return;
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    try {
      for (;;) {
        const used = this.step();
        if (used === 0) break;
        this.buffer = this.buffer.subarray(used);
      }
    } catch (error) {
      this.end((error as Error).message);
    }
  }

  /** Handles one whole item at the buffer's start and says how many bytes it took (0: not whole yet). */
  private step(): number {
    const bytes = this.buffer;
    switch (this.phase) {
      case 'version': {
        if (bytes.length < 12) return 0;
        if (!bytes.subarray(0, 4).equals(Buffer.from('RFB '))) throw new Error('the display does not speak RFB');
        this.socket.write(VERSION);
        this.phase = 'security-types';
        return 12;
      }
      case 'security-types': {
        if (bytes.length < 1 || bytes.length < 1 + bytes[0]!) return 0;
        const types = [...bytes.subarray(1, 1 + bytes[0]!)];
        if (!types.includes(SECURITY_NONE)) throw new Error(`the display offers no security type this client takes (${types.join(', ') || 'none'})`);
        this.socket.write(Buffer.from([SECURITY_NONE]));
        this.phase = 'security-result';
        return 1 + bytes[0]!;
      }
      case 'security-result': {
        if (bytes.length < 4) return 0;
        if (bytes.readUInt32BE(0) !== 0) throw new Error('the display refused the connection');
        // Shared: every viewer stays connected.
        this.socket.write(Buffer.from([1]));
        this.phase = 'init';
        return 4;
      }
      case 'init': {
        if (bytes.length < 24) return 0;
        if (bytes.readUInt32BE(20) > MAX_DESKTOP_NAME) throw new Error(`the display's name is ${bytes.readUInt32BE(20)} bytes long, past ${MAX_DESKTOP_NAME}: not Xvnc`);
        if (bytes.length < 24 + bytes.readUInt32BE(20)) return 0;
        this.width = bytes.readUInt16BE(0);
        this.height = bytes.readUInt16BE(2);
        const encodings = [RAW, DESKTOP_SIZE, EXTENDED_DESKTOP_SIZE, CURSOR];
        const setEncodings = Buffer.alloc(4 + 4 * encodings.length);
        setEncodings.writeUInt8(SET_ENCODINGS, 0);
        setEncodings.writeUInt16BE(encodings.length, 2);
        encodings.forEach((encoding, i) => setEncodings.writeInt32BE(encoding, 4 + 4 * i));
        this.socket.write(Buffer.concat([Buffer.from([SET_PIXEL_FORMAT, 0, 0, 0]), PIXEL_FORMAT, setEncodings]));
        this.phase = 'messages';
        clearTimeout(this.handshake);
        this.emit('ready');
        return 24 + bytes.readUInt32BE(20);
      }
      case 'messages':
        return this.message(bytes);
    }
  }

  /**
   * One server message, or one part of an update: its header, a rectangle's header, or pixels,
   * which are skipped as they come (never gathered: a whole screen is 1 MB at this depth).
   */
  private message(bytes: Buffer): number {
    if (this.skipping > 0) {
      const used = Math.min(this.skipping, bytes.length);
      this.skipping -= used;
      if (used > 0) this.rectangleDone();
      return used;
    }
    if (this.rectanglesLeft > 0) return this.rectangle(bytes);
    if (bytes.length < 1) return 0;
    switch (bytes[0]) {
      case SERVER_MESSAGE.update: {
        if (bytes.length < 4) return 0;
        this.rectanglesLeft = bytes.readUInt16BE(2);
        this.asked = this.listening;
        if (!this.asked) this.countUnasked(this.rectanglesLeft);
        this.inUpdate = true;
        this.rectangleDone();
        return 4;
      }
      case SERVER_MESSAGE.bell:
        return 1;
      case SERVER_MESSAGE.cutText: {
        if (bytes.length < 8) return 0;
        const length = bytes.readUInt32BE(4);
        if (length > MAX_CUT_TEXT) throw new Error('the display sent clipboard text past 1 MiB');
        this.skipping = length;
        return 8;
      }
      default:
        throw new Error(`the display sent message type ${bytes[0]}, which this client did not ask for`);
    }
  }

  /** A rectangle's header: its pixels (or cursor, or screens) are then skipped. */
  private rectangle(bytes: Buffer): number {
    if (bytes.length < 12) return 0;
    const width = bytes.readUInt16BE(4);
    const height = bytes.readUInt16BE(6);
    const encoding = bytes.readInt32BE(8);
    let used = 12;
    switch (encoding) {
      case RAW:
        if (!this.asked) throw new Error('the display sent pixels nobody asked for');
        this.skipping = width * height;
        break;
      case CURSOR:
        this.skipping = width * height + ((width + 7) >> 3) * height;
        break;
      case DESKTOP_SIZE:
        this.resized(width, height);
        break;
      case EXTENDED_DESKTOP_SIZE:
        if (bytes.length < 13) return 0;
        this.skipping = 4 + 16 * bytes[12]!;
        this.resized(width, height);
        break;
      default:
        throw new Error(`the display sent encoding ${encoding}, which this client did not announce`);
    }
    this.rectanglesLeft--;
    this.rectangleDone();
    return used;
  }

  /** An update nobody asked for: only with something in it, and only so many a second. */
  private countUnasked(rectangles: number): void {
    if (rectangles === 0) throw new Error('the display sent an empty update nobody asked for');
    const second = Math.floor(performance.now() / 1000);
    if (this.unasked.second !== second) this.unasked = { second, count: 0 };
    if (++this.unasked.count > UNASKED_PER_SECOND) throw new Error(`the display sent more than ${UNASKED_PER_SECOND} updates a second nobody asked for`);
  }

  /** After each part of an update: once its last rectangle is whole, the change is told. */
  private rectangleDone(): void {
    if (!this.inUpdate || this.rectanglesLeft > 0 || this.skipping > 0) return;
    this.inUpdate = false;
    // An unasked update (the pointer's shape, a resize) answers no request: the one out still stands.
    if (!this.asked) return;
    this.listening = false;
    this.emit('change');
  }

  private resized(width: number, height: number): void {
    if (width > 0 && height > 0) [this.width, this.height] = [width, height];
  }
}
