// The video channel's wire contract, served on one WebSocket: a JSON text message with the format
// (src/protocol/video.ts) each time the encoder (re)starts, then one binary message per access
// unit, until either side goes; the watcher answers each frame with a receipt. A watcher on a
// slow link never gets a queue: a frame is dropped, and the frames after it until a key frame (a
// frame that refers to a dropped one cannot be drawn), while the oldest frame not yet receipted
// is later than the link's own round trip and MAX_LATE_MS beyond when the encoder's bit rate
// would have had it through (decisions.md 67 and 73: a key frame's own size is not lateness), or
// while the socket itself holds MAX_BUFFERED_BYTES (a watcher that sends no receipts: the kernel's
// buffers then hide the rest of the queue). Each drop is told to the session's video, which
// lowers the encoder's bit rate for a watcher that keeps dropping (decisions.md 68); once the
// link is clear again, the watcher's want of a key frame is told too, and the video gets it one
// without waiting for the encoder's own (decisions.md 72). Independent of how the socket was
// reached.
import type { WebSocket } from 'ws';
import { parseVideoReceipt } from '../../../protocol/video.js';
import type { SessionVideo } from '../../runtime/index.js';

/** Close codes the video channel uses: normal when the watcher leaves, 1011 when there is no video. */
export const VIDEO_CLOSE = { ended: 1000, unavailable: 1011 } as const;

/**
 * About a fifth of a second at the encoder's 2.5 Mbit/s ceiling: more waiting in the socket means
 * the link is slower than the picture, and a later frame is worth more than this one.
 */
const MAX_BUFFERED_BYTES = 64 * 1024;
/** How much later than the link's round trip a frame may still be receipted before the next ones are dropped. */
export const MAX_LATE_MS = 150;
/** The link's round trip is the least seen over this long (a route may change). */
const ROUND_TRIP_WINDOW_MS = 10_000;

/** Makes `socket` a watcher of the display's video; without video the socket closes at once, saying why. */
export function serveVideoWatcher(socket: WebSocket, video: SessionVideo | null): void {
  if (!video) {
    socket.close(VIDEO_CLOSE.unavailable, 'this session has no video');
    return;
  }
  const stream = video.watch();
  /** Frames are dropped until a key frame: after a drop, and until the first one. */
  let waitForKey = true;
  /**
   * Frames sent and not yet receipted: the frame bytes sent in all once each was sent, when, and
   * when the encoder's bit rate would have had it through (frames before it included).
   */
  const unreceipted: { end: number; at: number; through: number }[] = [];
  let sentBytes = 0;
  /** The encoder's bit rate (kbit/s = bits/ms), as the format said, and when the last frame sent would be through at it. */
  let kbps = 0;
  let throughAt = 0;
  let receipts = false;
  let roundTrip = { ms: Infinity, at: 0 };

  socket.on('message', (data: Buffer | string) => {
    const received = parseVideoReceipt(typeof data === 'string' ? data : new Uint8Array(data));
    if (received === null) return;
    receipts = true;
    const now = performance.now();
    let newest: { end: number; at: number; through: number } | undefined;
    while (unreceipted.length > 0 && unreceipted[0]!.end <= received) newest = unreceipted.shift();
    if (newest && (now - newest.at < roundTrip.ms || now - roundTrip.at > ROUND_TRIP_WINDOW_MS)) roundTrip = { ms: now - newest.at, at: now };
  });
  /** Whether the picture already on its way is late: then this frame would only wait behind it. */
  const behind = (now: number) =>
    socket.bufferedAmount > MAX_BUFFERED_BYTES || (receipts && unreceipted.length > 0 && now - unreceipted[0]!.through > roundTrip.ms + MAX_LATE_MS);

  stream.on('format', (format) => {
    waitForKey = true;
    kbps = format.bitrateKbps ?? 0;
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(format));
  });
  stream.on('frame', (message, key) => {
    if (socket.readyState !== socket.OPEN) return;
    const now = performance.now();
    if (behind(now)) {
      waitForKey = true;
      stream.dropped();
      return;
    }
    if (waitForKey && !key) {
      // The link is clear again: what this watcher lacks is a key frame.
      stream.waiting();
      return;
    }
    waitForKey = false;
    sentBytes += message.length;
    throughAt = Math.max(now, throughAt) + (kbps > 0 ? (message.length * 8) / kbps : 0);
    unreceipted.push({ end: sentBytes, at: now, through: throughAt });
    // A watcher that never sends receipts must not grow this.
    if (!receipts && unreceipted.length > 64) unreceipted.shift();
    socket.send(message, { binary: true });
  });
  stream.once('end', (reason) => {
    if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) {
      // A close reason is at most 123 bytes.
      socket.close(reason === 'closed by the watcher' ? VIDEO_CLOSE.ended : VIDEO_CLOSE.unavailable, Buffer.from(reason).subarray(0, 120).toString());
    }
  });
  socket.once('close', () => stream.close());
  socket.on('error', () => stream.close());
}
