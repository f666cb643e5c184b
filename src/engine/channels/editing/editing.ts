// The editing channel (issue 36, decisions.md 106): tells a controlling viewer whether a text field
// in the session's browser has the keyboard focus, so that a phone's viewer opens its on-screen
// keyboard when a tap lands in one. Opened with the share link only (a view-only link types
// nothing), counted as a listener by presence. The browser tells it (runtime/browser/editing-watch.ts,
// Chromium family); where it cannot (Firefox), the session is not offered it and the viewer's
// Keyboard button is the way. One JSON text message at once and one per change; nothing is read.
import type { EditingMessage } from '../../../protocol/editing.js';
import { speaksDevTools } from '../../runtime/index.js';
import type { Channel } from '../channel.js';
import { VIEWER_CLOSE } from '../close-codes.js';

export interface EditingChannelOptions {
  /** The family of a session's browser (its image), undefined for one this node does not know. */
  familyOf?: (browser: string) => string | undefined;
  /** Watchers per session on this node (the share link's only). */
  watchersPerSession?: number;
}

export const DEFAULT_EDITING_WATCHERS_PER_SESSION = 16;

export function editingChannel(options: EditingChannelOptions): Channel {
  const limit = options.watchersPerSession ?? DEFAULT_EDITING_WATCHERS_PER_SESSION;
  return {
    name: 'editing',
    opensWith: ['share-link'],
    attachment: 'listener',
    closes: { endClosed: VIEWER_CLOSE.displayGone, refused: VIEWER_CLOSE.protocol },
    // Chromium's sessions: their DevTools control tells (Firefox has no such connection here).
    offered: (row) => speaksDevTools(options.familyOf?.(row.browser)),
    // The viewer opens the route only when the state says `editing: true`.
    advertised: true,
    // It reads nothing from the viewer: anything it sends is closed as off-protocol, and nothing big is taken in.
    needs: { seats: { control: limit, view: 0 }, files: 1, messageBytes: 1024 },
    carry({ socket, ends }) {
      return new Promise<void>((resolve) => {
        let stop: () => void = () => undefined;
        const done = () => {
          stop();
          resolve();
        };
        socket.once('close', done);
        socket.on('error', done);
        // Before the browser runs there is nothing to tell yet: the viewer tries again.
        const editing = ends?.editing;
        if (!editing) return socket.close(VIEWER_CLOSE.notRunning.code, VIEWER_CLOSE.notRunning.reason);
        socket.on('message', () => socket.close(VIEWER_CLOSE.protocol.code, VIEWER_CLOSE.protocol.reason));
        const send = (value: boolean) => {
          const message: EditingMessage = { editing: value };
          if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
        };
        stop = editing.follow(send);
        send(editing.now());
      });
    },
    close() {},
  };
}
