// The video channel (issue 25): a watcher gets the display's picture as H.264 while the viewer is in
// video mode (motion sustained; the viewer decides, src/core/video-mode.ts). Opened with
// the share link or a view-only link alike (watching changes nothing in the session); counted as a
// listener by presence. Its end is the display on the node that runs the session: the first
// watcher starts the display's encoder there (a runtime part: runtime/capture/video.ts), each later
// one restarts it (a key frame for everyone), the last one leaving stops it, and its bit rate follows the slowest watcher (runtime/capture/video.ts,
// runtime/capture/video-ladder.ts); each access unit goes out as one WebSocket message, answered by the
// watcher's receipt (video-watcher.ts). Across a cluster the owner's messages cross the node link one by one.
import { serveVideoWatcher } from './video-watcher.js';
import type { Channel } from '../channel.js';
import { VIEWER_CLOSE } from '../close-codes.js';

export interface VideoChannelOptions {
  /**
   * Whether this node offers video (configuration `video`, and an ffmpeg with x11grab and
   * libx264); the runtime then gives each display its encoder (`ends.video`). Where it does not, a
   * watcher, also one another node forwards, is closed at once with VIDEO_CLOSE.unavailable and
   * nothing runs in the session.
   */
  available: boolean;
  /** Watchers per session and link on this node (each restarts the session's encoder when it joins). */
  watchersPerLink?: number;
}

export const DEFAULT_WATCHERS_PER_LINK = 16;

export function videoChannel(options: VideoChannelOptions): Channel {
  const limit = options.watchersPerLink ?? DEFAULT_WATCHERS_PER_LINK;
  return {
    name: 'video',
    opensWith: ['share-link', 'view-link'],
    attachment: 'listener',
    closes: { endClosed: VIEWER_CLOSE.displayGone, refused: VIEWER_CLOSE.protocol },
    // Offered where this node can encode (configured, and ffmpeg able), whatever the plan.
    offered: () => options.available,
    // The viewer switches to video only when the state says `video: true`.
    advertised: true,
    // The viewer sends only its receipts (a few bytes each).
    needs: { seats: { control: limit, view: limit }, files: 1, messageBytes: 1024 },
    carry({ socket, ends }) {
      return new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        if (!options.available) return serveVideoWatcher(socket, null);
        // Before the session's display is up there is nothing to watch yet: the viewer tries again.
        if (!ends) return socket.close(VIEWER_CLOSE.notRunning.code, VIEWER_CLOSE.notRunning.reason);
        serveVideoWatcher(socket, ends.video);
      });
    },
    close() {},
  };
}
