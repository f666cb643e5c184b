// A lightweight watcher of a session's video channel (src/protocol/video.ts), for tests and benches:
// a Node WebSocket client that decodes nothing, keeps each access unit's arrival, size and key flag
// and each format message, and receipts frames as the viewer's player does (or not, to be a client
// that never does, or not for a while).
import { WebSocket } from 'ws';
import { parseVideoFormat, videoReceipt, VIDEO_KEY_FRAME, type VideoFormat } from '../../src/protocol/video.js';

export interface VideoClient {
  /** Every access unit so far: when it arrived (performance.now()), its message's size, whether a key frame. */
  frames: { at: number; bytes: number; key: boolean }[];
  /** Every format message so far, with when it arrived. */
  formats: (VideoFormat & { at: number })[];
  /** Resolves with the close code when the channel ends. */
  closed: Promise<number>;
  /** Stops answering frames, as a viewer whose page stalls or whose link holds its receipts. */
  pauseReceipts(): void;
  /** Answers again, at once for everything read meanwhile. */
  resumeReceipts(): void;
  close(): void;
}

export async function watchVideo(url: string, options: { receipts?: boolean } = {}): Promise<VideoClient> {
  const socket = new WebSocket(url, { perMessageDeflate: false });
  const frames: VideoClient['frames'] = [];
  const formats: VideoClient['formats'] = [];
  let received = 0;
  let paused = false;
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  socket.on('message', (data: Buffer, binary: boolean) => {
    const at = performance.now();
    if (!binary || data[0] === 0x7b) {
      const format = parseVideoFormat(data.toString());
      if (format) formats.push({ ...format, at });
      return;
    }
    received += data.length;
    frames.push({ at, bytes: data.length, key: (data[0]! & VIDEO_KEY_FRAME) !== 0 });
    if (options.receipts !== false && !paused) socket.send(videoReceipt(received));
  });
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('close', (code) => reject(new Error(`the video channel closed (${code})`)));
  });
  return {
    frames,
    formats,
    closed,
    pauseReceipts: () => void (paused = true),
    resumeReceipts() {
      paused = false;
      if (options.receipts !== false && socket.readyState === socket.OPEN) socket.send(videoReceipt(received));
    },
    close: () => socket.close(),
  };
}
