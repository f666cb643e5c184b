// The files channel (issue 23, decisions.md 57): how a controlling viewer learns, as it happens,
// what the session's browser downloads and what was given to it. Opened with the share link only
// (a view-only link is refused before the WebSocket opens: it is offered nothing), counted as a
// listener by presence. On the node that runs the session it reads the session's files through
// the program inside it (runtime/session/session-files.ts) once a second (four times a second while a
// download is arriving) and sends the list as one JSON text message whenever it changes
// (src/protocol/files.ts: name, size, kind, created, state, and what may move). It reads nothing
// from the viewer; the bytes themselves go over HTTP (`/share/<link>/files/download|upload`), so
// that a download is a real download of the viewer's browser. Across a cluster the owner's
// messages cross the node link one by one and arrive as bytes; the viewer reads both.
import type { FilesChannelMessage } from '../../../protocol/files.js';
import type { Channel } from '../channel.js';
import { VIEWER_CLOSE } from '../close-codes.js';

export interface FilesChannelOptions {
  /** The session's files and switches as the channel sends them; null when the session is not running here. */
  snapshot(sessionId: string): Promise<FilesChannelMessage | null>;
  /** Watchers per session on this node (the share link's only). */
  watchersPerSession?: number;
  /** How often the list is read: at rest, and while a download arrives (ms). */
  intervals?: { idle: number; arriving: number };
}

export const DEFAULT_FILE_WATCHERS_PER_SESSION = 16;

export function filesChannel(options: FilesChannelOptions): Channel {
  const limit = options.watchersPerSession ?? DEFAULT_FILE_WATCHERS_PER_SESSION;
  const intervals = options.intervals ?? { idle: 1000, arriving: 250 };
  return {
    name: 'files',
    opensWith: ['share-link'],
    attachment: 'listener',
    closes: { endClosed: VIEWER_CLOSE.displayGone, refused: VIEWER_CLOSE.protocol },
    // Offered to every session's share link: where nothing may move, the list says so (both
    // switches off, decisions.md 56) and the viewer hides its Files control; sessions/files.ts
    // applies the switches to each transfer.
    offered: () => true,
    // It reads nothing from the viewer (the bytes move over HTTP): nothing big is taken in.
    needs: { seats: { control: limit, view: 0 }, files: 1, messageBytes: 1024 },
    carry({ socket, sessionId }) {
      return new Promise<void>((resolve) => {
        let last = '';
        let timer: NodeJS.Timeout | undefined;
        let open = true;
        const stop = () => {
          open = false;
          clearTimeout(timer);
          resolve();
        };
        socket.once('close', stop);
        socket.on('error', stop);
        // Nothing the viewer sends is read; a viewer that sends anything is closed as off-protocol.
        socket.on('message', () => socket.close(VIEWER_CLOSE.protocol.code, VIEWER_CLOSE.protocol.reason));
        const look = async () => {
          if (!open) return;
          let message: FilesChannelMessage | null;
          try {
            message = await options.snapshot(sessionId);
          } catch (error) {
            // The session's program failed (the session is ending): the viewer is told, and may reconnect.
            if (open) socket.close(VIEWER_CLOSE.displayGone.code, Buffer.from(`files: ${(error as Error).message}`).subarray(0, 120).toString());
            return;
          }
          if (!open) return;
          if (!message) return void socket.close(VIEWER_CLOSE.notRunning.code, VIEWER_CLOSE.notRunning.reason);
          const text = JSON.stringify(message);
          if (text !== last && socket.readyState === socket.OPEN) {
            last = text;
            socket.send(text);
          }
          timer = setTimeout(() => void look(), message.files.some((file) => file.state === 'downloading') ? intervals.arriving : intervals.idle);
        };
        void look();
      });
    },
    close() {},
  };
}
