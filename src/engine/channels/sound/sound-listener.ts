// The sound channel's wire contract, served on one WebSocket: first one text message with the
// format (`{"codec":"opus","sampleRate":48000,"channels":2,"frameMs":10}`), then one binary message
// per Opus packet, until either side goes. The viewer decodes each packet as it comes (WebCodecs
// AudioDecoder). Independent of how the socket was reached (share API, channel seam, tests).
import type { WebSocket } from 'ws';
import type { SessionSound } from '../../runtime/index.js';

/** Close codes the sound channel uses: normal when the sound ends, 1011 when there is none. */
export const SOUND_CLOSE = { ended: 1000, unavailable: 1011 } as const;

/**
 * A listener's packets may wait in the socket's buffer up to this much (about 4 s at 64 kbit/s);
 * beyond it packets are dropped for that listener alone: late sound is worse than a gap, and a
 * slow listener must not make the engine hold its sound without end.
 */
const MAX_BUFFERED_BYTES = 32 * 1024;

/**
 * Makes `socket` a listener of the session's sound: the encoder starts with the first listener
 * and stops when the last one closes its socket. Without sound (turned off, or its server lost)
 * the socket is closed at once, saying why.
 */
export function serveSoundListener(socket: WebSocket, sound: SessionSound | null): void {
  if (!sound) {
    socket.close(SOUND_CLOSE.unavailable, 'this session has no sound');
    return;
  }
  const stream = sound.listen();
  socket.send(JSON.stringify(stream.format));
  stream.on('packet', (packet) => {
    if (socket.readyState !== socket.OPEN || socket.bufferedAmount > MAX_BUFFERED_BYTES) return;
    socket.send(packet, { binary: true });
  });
  stream.once('end', (reason) => {
    if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) {
      // A close reason is at most 123 bytes.
      socket.close(reason === 'closed by the listener' ? SOUND_CLOSE.ended : SOUND_CLOSE.unavailable, Buffer.from(reason).subarray(0, 120).toString());
    }
  });
  socket.once('close', () => stream.close());
  socket.on('error', () => stream.close());
}
