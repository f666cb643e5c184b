// The WebSocket <-> RFB bridge: carries a viewer's VNC protocol bytes to a session's display and
// back (channels/relay.ts). On the node that runs the session, the viewer's half is read message
// by message (rfb-client-messages.ts) and only what its link allows reaches the display
// (viewer-room.ts): RFB's per-message policy; a node that only relays to the owner passes bytes as they are.
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { PolicyRefusal, relay, type MessagePolicy } from '../relay.js';
import { ClientMessageReader, PSEUDO_ENCODING, RfbProtocolError } from './rfb-client-messages.js';
import type { InputGate, ViewerRoom, ViewerRights } from './viewer-room.js';

export interface BridgeOptions {
  /** Close code and reason sent to the viewer when the display goes away. */
  onDisplayClosed?: { code: number; reason: string };
  /** Read the viewer's messages and pass on what `rights` allow, in this room of the display's viewers. */
  viewer?: { room: ViewerRoom; rights: ViewerRights; gate?: InputGate; onProtocolError: { code: number; reason: string } };
}

/**
 * RFB's policy for one viewer in `room`: whole messages only, what `rights` allow, extensions only
 * once announced; a message that is not RFB this display accepts ends the connection.
 */
export function rfbPolicy(room: ViewerRoom, rights: ViewerRights, gate?: InputGate): (write: (bytes: Buffer) => void) => MessagePolicy {
  return (write) => {
    const reader = new ClientMessageReader();
    // The room writes on this viewer's connection, on its behalf: the display sizes it applies
    // (none to a viewer whose latest SetEncodings no longer announces ExtendedDesktopSize: Xvnc
    // aborts on it when the viewer announced no size change form at all, decisions.md 50), and
    // the releases of what it held down.
    const viewer = room.join(rights, { write, takesSizes: () => reader.announced(PSEUDO_ENCODING.ExtendedDesktopSize) }, gate);
    return {
      admit(chunk, pass) {
        let messages;
        try {
          messages = reader.push(chunk);
        } catch (error) {
          if (error instanceof RfbProtocolError) throw new PolicyRefusal(error.message);
          throw error;
        }
        for (const message of messages) {
          const bytes = viewer.admit(message);
          if (bytes) pass(bytes);
        }
      },
      // Its last words: the keys and buttons it still held go up before the connection closes.
      leave: () => Buffer.concat(viewer.leave()),
    };
  };
}

/**
 * Joins an open WebSocket to a new RFB connection of the display (`Display.connect`); resolves
 * when either side has closed.
 */
export function bridgeToDisplay(socket: WebSocket, openDisplay: () => Duplex, options: BridgeOptions = {}): Promise<void> {
  const { viewer } = options;
  return relay(socket, openDisplay, {
    ...(options.onDisplayClosed ? { onEndClosed: options.onDisplayClosed } : {}),
    ...(viewer ? { policy: rfbPolicy(viewer.room, viewer.rights, viewer.gate), onRefused: viewer.onProtocolError } : {}),
  });
}
