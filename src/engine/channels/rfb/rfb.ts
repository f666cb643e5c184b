// The RFB channel: a viewer's VNC stream to the session's display, the first channel on the seam.
// Opened with the share link (control) or a view-only link (watch); its end is a new connection to
// Xvnc's socket made by a relay inside the session (Display.connect); seats per link from the
// configuration's `viewers` (the door, channels/door.ts, holds them); on the owner, each viewer joins the session's room, where its rights
// are enforced message by message and the display follows the controller (viewer-room.ts); in a
// session with one driver at a time, its driving says whose input passes (channels/control/).
import { bridgeToDisplay } from './rfb-bridge.js';
import { RFB_MESSAGE_BYTES } from './rfb-client-messages.js';
import { DEFAULT_DISPLAY_LIMITS, DEFAULT_VIEWER_SEATS, ViewerRoom, type DisplayLimits, type ViewerSeatLimits } from './viewer-room.js';
import type { Channel } from '../channel.js';
import { VIEWER_CLOSE } from '../close-codes.js';
import type { NodeDriving } from '../control/node-driving.js';

export interface RfbChannelOptions {
  /** Seats per session for the share link's viewers and the view-only link's (config `viewers`). */
  seats?: ViewerSeatLimits;
  /** The sizes viewers may give a display (config `display`). */
  displayLimits?: DisplayLimits;
  /** Who drives each session (issue 36): in `one` mode only the driver's input passes. Absent: the link's rights alone decide. */
  driving?: NodeDriving;
}

/** Files a viewer makes the engine hold: its WebSocket and its relay's three pipes into the session. */
export const FILES_PER_VIEWER = 4;

export function rfbChannel(options: RfbChannelOptions = {}): Channel {
  const seats = options.seats ?? DEFAULT_VIEWER_SEATS;
  /** The viewers of each session this node runs: rights, control, display size. */
  const rooms = new Map<string, ViewerRoom>();
  const closes = { endClosed: VIEWER_CLOSE.displayGone, refused: VIEWER_CLOSE.protocol };
  return {
    name: 'rfb',
    opensWith: ['share-link', 'view-link'],
    attachment: 'viewer',
    closes,
    // Every session has a display to watch.
    offered: () => true,
    openEnd: (session) => () => session.display.connect(),
    // A viewer holds its WebSocket and its relay's three pipes into the session.
    // The longest RFB message a viewer sends is its clipboard text (rfb-client-messages.ts).
    needs: { seats: { control: seats.controlling, view: seats.watching }, files: FILES_PER_VIEWER, messageBytes: RFB_MESSAGE_BYTES },
    async carry({ socket, sessionId, rights, openEnd, viewerKey }) {
      let room = rooms.get(sessionId);
      if (!room) rooms.set(sessionId, (room = new ViewerRoom(options.displayLimits ?? DEFAULT_DISPLAY_LIMITS)));
      // The session's driving (made with its first user): whose input passes, in `one` mode.
      const held = options.driving ? await options.driving.hold(sessionId) : undefined;
      const gate = held && {
        admits: (presses: boolean) => held.driving.admits(viewerKey, presses),
        drives: () => held.driving.drives(viewerKey),
        pointer: (x: number, y: number) => held.driving.pointerMoved(viewerKey, x, y),
        watch: (changed: () => void) => held.driving.watchDriver(changed),
      };
      try {
        await bridgeToDisplay(socket, openEnd!, { onDisplayClosed: closes.endClosed, viewer: { room, rights, ...(gate ? { gate } : {}), onProtocolError: closes.refused } });
      } finally {
        held?.release();
        // The room goes with its last viewer; the display keeps its last size.
        if (room.size === 0 && rooms.get(sessionId) === room) {
          room.close();
          rooms.delete(sessionId);
        }
      }
    },
    close() {
      for (const room of rooms.values()) room.close();
      rooms.clear();
    },
  };
}
