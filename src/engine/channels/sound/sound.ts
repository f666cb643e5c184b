// The sound channel: a listener hears what the session's browser plays. Opened with the share link
// or a view-only link alike (listening changes nothing in the session); counted as a listener by
// presence (an attended session is not idle). Its end is the session's sound server on the node
// that runs it: the first listener starts the session's Opus encoder, the last one leaving stops
// it (runtime/capture/sound.ts); each packet goes out as one WebSocket message (sound-listener.ts).
// Across a cluster the owner's messages cross the node link one by one, and the forwarding node
// hands each on as one message (the format then arrives as bytes; the viewer reads both).
import { serveSoundListener } from './sound-listener.js';
import type { Channel } from '../channel.js';
import { VIEWER_CLOSE } from '../close-codes.js';

export interface SoundChannelOptions {
  /** Whether this node offers sound at all: configured (`sound`), and its programs installed (runtime/capture/sound.ts probeSound). */
  available: boolean;
  /** Listeners per session and link on this node (each holds a WebSocket and, on the owner, a share of the encoder's output). */
  listenersPerLink?: number;
}

export const DEFAULT_LISTENERS_PER_LINK = 16;

export function soundChannel(options: SoundChannelOptions): Channel {
  const limit = options.listenersPerLink ?? DEFAULT_LISTENERS_PER_LINK;
  return {
    name: 'sound',
    opensWith: ['share-link', 'view-link'],
    attachment: 'listener',
    closes: { endClosed: VIEWER_CLOSE.displayGone, refused: VIEWER_CLOSE.protocol },
    // Offered where this node has sound and the session's plan lets its viewers hear it (a plan's `sound`, decisions.md 53).
    offered: (_row, plan) => options.available && plan?.sound !== false,
    // The viewer opens the sound route only when the state says `sound: true`.
    advertised: true,
    // A listener holds one socket (its WebSocket); the encoder's pipe is the session's, once.
    needs: { seats: { control: limit, view: limit }, files: 1, messageBytes: 1024 },
    carry({ socket, ends }) {
      return new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        // Before the session's display is up there is nothing to hear yet: the viewer tries again.
        if (!ends) return socket.close(VIEWER_CLOSE.notRunning.code, VIEWER_CLOSE.notRunning.reason);
        serveSoundListener(socket, ends.sound);
      });
    },
    close() {},
  };
}
