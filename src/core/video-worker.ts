// The video channel's own thread (issue 37, decisions.md 90): a dedicated worker that holds the
// channel's WebSocket, its decoder and the overlay's OffscreenCanvas (video-playback.ts), so a busy
// page (its React, noVNC, a script of the host's) neither delays the receipts nor makes the decoder
// skip to the next key frame. It tells the page each unit (for the motion policy), each frame drawn
// (for the overlay's place) and the end. Started by video-player.ts.
import { VideoPlayback, type VideoFrameCounts } from './video-playback.js';

/** What the page asks of the worker. */
export type VideoWorkerRequest =
  | { type: 'start'; url: string; canvas: OffscreenCanvas }
  | { type: 'resize'; width: number; height: number }
  | { type: 'close' };

/** What the worker tells the page. */
export type VideoWorkerEvent =
  | { type: 'unit'; bytes: number; key: boolean; at: number }
  | { type: 'frame'; width: number; height: number; counts: VideoFrameCounts; at: number }
  | { type: 'end'; reason: string; counts: VideoFrameCounts };

// The DOM library's types stand in for the worker's: only these members are used.
const scope = globalThis as unknown as { onmessage: ((event: MessageEvent<VideoWorkerRequest>) => void) | null; postMessage(event: VideoWorkerEvent): void; close(): void };
let playback: VideoPlayback | null = null;

scope.onmessage = ({ data }) => {
  if (data.type === 'start' && !playback) {
    playback = new VideoPlayback({
      url: data.url,
      canvas: data.canvas,
      // When it arrived, ms since the epoch: the page may read it much later (a busy page).
      onUnit: (bytes, key) => scope.postMessage({ type: 'unit', bytes, key, at: performance.timeOrigin + performance.now() }),
      onFrame: (width, height, counts) => scope.postMessage({ type: 'frame', width, height, counts: { ...counts }, at: performance.timeOrigin + performance.now() }),
      onEnd: (reason, counts) => {
        scope.postMessage({ type: 'end', reason, counts: { ...counts } });
        scope.close();
      },
    });
    playback.start();
  } else if (data.type === 'resize') playback?.resize(data.width, data.height);
  else if (data.type === 'close') playback ? playback.close() : scope.close();
};
