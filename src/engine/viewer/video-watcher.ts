// The video channel's wire contract, served on one WebSocket: a JSON text message with the format
// (src/protocol/video.ts) each time the encoder (re)starts, then one binary message per access
// unit, until either side goes. A watcher on a slow link never gets a queue: once its socket holds
// MAX_BUFFERED_BYTES, its frames are dropped until the next key frame finds the buffer drained (a
// frame that refers to a dropped one cannot be drawn). Independent of how the socket was reached.
import type { WebSocket } from 'ws';
import type { SessionVideo } from '../runtime/video.js';

/** Close codes the video channel uses: normal when the watcher leaves, 1011 when there is no video. */
export const VIDEO_CLOSE = { ended: 1000, unavailable: 1011 } as const;

/**
 * About a fifth of a second at the encoder's 2.5 Mbit/s ceiling: more waiting in the socket means
 * the link is slower than the picture, and a later frame is worth more than this one.
 */
const MAX_BUFFERED_BYTES = 64 * 1024;

/** Makes `socket` a watcher of the display's video; without video the socket closes at once, saying why. */
export function serveVideoWatcher(socket: WebSocket, video: SessionVideo | null): void {
  if (!video) {
    socket.close(VIDEO_CLOSE.unavailable, 'this session has no video');
    return;
  }
  const stream = video.watch();
  /** Frames are dropped until a key frame: after a drop, and until the first one. */
  let waitForKey = true;
  stream.on('format', (format) => {
    waitForKey = true;
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(format));
  });
  stream.on('frame', (message, key) => {
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
      waitForKey = true;
      return;
    }
    if (waitForKey && !key) return;
    waitForKey = false;
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
