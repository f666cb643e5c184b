// The WebSocket <-> RFB bridge: carries a viewer's VNC protocol bytes to a session's display and
// back, with back-pressure in both directions. On the node that runs the session, the viewer's
// half is read message by message (rfb-client-messages.ts) and only what its link allows reaches
// the display (viewer-room.ts); a node that only relays to the owner passes bytes as they are.
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { ClientMessageReader, PSEUDO_ENCODING, RfbProtocolError } from './rfb-client-messages.js';
import type { ViewerRoom, ViewerRights } from './viewer-room.js';

export interface BridgeOptions {
  /** Close code and reason sent to the viewer when the display goes away. */
  onDisplayClosed?: { code: number; reason: string };
  /** Read the viewer's messages and pass on what `rights` allow, in this room of the display's viewers. */
  seat?: { room: ViewerRoom; rights: ViewerRights; onProtocolError: { code: number; reason: string } };
}

/**
 * Joins an open WebSocket to a new RFB connection of the display (`Display.connect`); resolves
 * when either side has closed.
 */
export function bridgeToDisplay(socket: WebSocket, openDisplay: () => Duplex, options: BridgeOptions = {}): Promise<void> {
  return new Promise((resolve) => {
    const display = openDisplay();
    let done = false;
    const reader = options.seat ? new ClientMessageReader() : undefined;
    // The room writes only the display sizes it applies on this viewer's connection, on its
    // behalf: none goes to a viewer whose latest SetEncodings no longer announces
    // ExtendedDesktopSize (Xvnc aborts on it when the viewer announced no size change form at
    // all, decisions.md 50).
    const viewer = options.seat?.room.join(options.seat.rights, (bytes) => {
      if (reader?.announced(PSEUDO_ENCODING.ExtendedDesktopSize)) display.write(bytes);
    });
    const finish = (code: number, reason: string) => {
      if (done) return;
      done = true;
      viewer?.leave();
      display.destroy();
      if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.close(code, reason);
      resolve();
    };
    display.on('data', (chunk) => {
      socket.send(chunk, { binary: true });
      // The viewer reads slower than Xvnc writes: pause the display until the WebSocket drains.
      if (socket.bufferedAmount > 4 * 1024 * 1024) {
        display.pause();
        const resume = setInterval(() => {
          if (socket.bufferedAmount < 1024 * 1024 || socket.readyState !== socket.OPEN) {
            clearInterval(resume);
            display.resume();
          }
        }, 5);
      }
    });
    socket.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
      if (done) return;
      const chunk = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      let writable = true;
      if (!viewer || !reader) {
        writable = display.write(chunk);
      } else {
        let messages;
        try {
          messages = reader.push(chunk);
        } catch (error) {
          if (!(error instanceof RfbProtocolError)) throw error;
          return finish(options.seat!.onProtocolError.code, options.seat!.onProtocolError.reason);
        }
        for (const message of messages) {
          const bytes = viewer.admit(message);
          if (bytes) writable = display.write(bytes);
        }
      }
      if (!writable) socket.pause();
    });
    display.on('drain', () => socket.resume());
    const closed = options.onDisplayClosed ?? { code: 1011, reason: 'the session display closed' };
    display.on('close', () => finish(closed.code, closed.reason));
    display.on('error', () => finish(closed.code, closed.reason));
    socket.on('close', () => finish(1000, 'viewer left'));
    socket.on('error', () => finish(1011, 'viewer connection failed'));
  });
}
