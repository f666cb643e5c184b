// The video channel (issue 25): a watcher gets the display's picture as H.264 while the viewer is in
// video mode (motion sustained; the viewer decides, src/core/video-mode.ts). Opened with
// the share link or a view-only link alike (watching changes nothing in the session); counted as a
// listener by presence. Its end is the display on the node that runs the session: the first
// watcher starts an encoder there, each later one restarts it (a key frame for everyone), the last
// one leaving stops it, and its bit rate follows the slowest watcher (runtime/capture/video.ts,
// runtime/capture/video-ladder.ts); each access unit goes out as one WebSocket message, answered by the
// watcher's receipt (video-watcher.ts). Across a cluster the owner's messages cross the node link one by one.
import { type Display, SessionVideo, type VideoSettings } from '../../runtime/index.js';
import { serveVideoWatcher } from './video-watcher.js';
import type { Channel } from '../channel.js';
import { VIEWER_CLOSE } from '../close-codes.js';

export interface VideoChannelOptions {
  /**
   * The encoder's settings; null where this node offers no video (configuration `video: false`,
   * or an ffmpeg without x11grab or libx264): a watcher, also one another node forwards, is closed
   * at once with VIDEO_CLOSE.unavailable and nothing runs in the session.
   */
  settings: VideoSettings | null;
  /** Watchers per session and link on this node (each restarts the session's encoder when it joins). */
  watchersPerLink?: number;
}

export const DEFAULT_WATCHERS_PER_LINK = 16;

export function videoChannel(options: VideoChannelOptions): Channel {
  const limit = options.watchersPerLink ?? DEFAULT_WATCHERS_PER_LINK;
  /** One video per display: it goes with the display (a session's end kills its encoder with it). */
  const videos = new WeakMap<Display, SessionVideo>();
  const videoOf = (display: Display) => {
    let video = videos.get(display);
    if (!video) videos.set(display, (video = new SessionVideo(display, options.settings!)));
    return video;
  };
  return {
    name: 'video',
    opensWith: ['share-link', 'view-link'],
    attachment: 'listener',
    closes: { endClosed: VIEWER_CLOSE.displayGone, refused: VIEWER_CLOSE.protocol },
    // Offered where this node can encode (configured, and ffmpeg able), whatever the plan.
    offered: () => options.settings !== null,
    // The viewer switches to video only when the state says `video: true`.
    advertised: true,
    // Video is carried as messages from the session's encoder (carry, below), never as a byte
    // stream into the session: the opener only says the display is here.
    openEnd: () => () => {
      throw new Error("the video channel carries messages from the session's encoder, not a byte stream");
    },
    needs: { seats: { control: limit, view: limit }, files: 1 },
    carry({ socket, ends }) {
      return new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        serveVideoWatcher(socket, options.settings && ends ? videoOf(ends.display) : null);
      });
    },
    close() {},
  };
}
