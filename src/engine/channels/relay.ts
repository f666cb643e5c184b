// Carries a connection's bytes between a WebSocket and a channel's end with back-pressure both
// ways. On the node that runs the session a channel's per-message policy stands between the
// caller and the end (what may reach the session, message by message); a node that only forwards
// to the owner relays bytes as they are, since the owner applies the policy.
import type { Duplex } from 'node:stream';
import { createWebSocketStream, type WebSocket } from 'ws';
import type { CloseReason } from './channel.js';

/** Thrown by a policy for input it refuses: the connection ends with the channel's `refused` close. */
export class PolicyRefusal extends Error {}

/** A channel's policy for one connection's messages toward the session. */
export interface MessagePolicy {
  /** Reads a chunk from the caller and passes on, in order, what may reach the session; throws PolicyRefusal to end the connection. */
  admit(chunk: Buffer, pass: (bytes: Buffer) => void): void;
  /**
   * The connection ended. May answer its last words: bytes written to the end before it closes
   * (RFB lets go of the keys and buttons a viewer left down).
   */
  leave(): Buffer | void;
}

/** How long the end may take to carry a policy's last words before it is cut off. */
const LAST_WORDS_MS = 2000;

export interface RelayOptions {
  /** Close sent to the caller when the end goes away. */
  onEndClosed?: CloseReason;
  /**
   * Makes the connection's policy once its end is open; `write` writes to that end on the
   * connection's behalf (RFB's room applies a display size on the controller's own connection).
   */
  policy?: (write: (bytes: Buffer) => void) => MessagePolicy;
  /** Close sent to the caller when its policy refuses a message. */
  onRefused?: CloseReason;
}

/** Joins an open WebSocket to a new stream of the end (`openEnd`); resolves when either side has closed. */
export function relay(socket: WebSocket, openEnd: () => Duplex, options: RelayOptions = {}): Promise<void> {
  return new Promise((resolve) => {
    const end = openEnd();
    let done = false;
    const policy = options.policy?.((bytes) => end.write(bytes));
    let endClosed = false;
    end.once('close', () => (endClosed = true));
    const finish = (close: CloseReason) => {
      if (done) return;
      done = true;
      const last = policy?.leave();
      if (last && last.length > 0 && !endClosed && end.writable) {
        // Ended rather than destroyed, so the bytes reach the session before the end closes
        // (a relay process inside the session is killed with the stream; ended, it flushes first).
        const cutOff = setTimeout(() => end.destroy(), LAST_WORDS_MS);
        cutOff.unref();
        end.once('close', () => clearTimeout(cutOff));
        end.end(last);
      } else {
        end.destroy();
      }
      if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.close(close.code, close.reason);
      resolve();
    };
    end.on('data', (chunk) => {
      socket.send(chunk, { binary: true });
      // The caller reads slower than the end writes: pause the end until the WebSocket drains.
      if (socket.bufferedAmount > 4 * 1024 * 1024) {
        end.pause();
        const resume = setInterval(() => {
          if (socket.bufferedAmount < 1024 * 1024 || socket.readyState !== socket.OPEN) {
            clearInterval(resume);
            end.resume();
          }
        }, 5);
      }
    });
    socket.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
      if (done) return;
      const chunk = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      let writable = true;
      if (!policy) {
        writable = end.write(chunk);
      } else {
        try {
          policy.admit(chunk, (bytes) => (writable = end.write(bytes)));
        } catch (error) {
          // A policy that fails on input it did not foresee refuses it too: one connection ends, never the engine.
          return finish(error instanceof PolicyRefusal ? (options.onRefused ?? { code: 1008, reason: 'refused by the channel policy' }) : { code: 1011, reason: 'the channel failed on this message' });
        }
      }
      if (!writable) socket.pause();
    });
    end.on('drain', () => socket.resume());
    const closed = options.onEndClosed ?? { code: 1011, reason: 'the session display closed' };
    // An owner node's own close (the session ended, its policy refused) reaches the caller as it was given.
    end.on('close', () => finish(forwardedClose.get(end) ?? closed));
    end.on('error', () => finish(closed));
    socket.on('close', () => finish({ code: 1000, reason: 'viewer left' }));
    socket.on('error', () => finish({ code: 1011, reason: 'viewer connection failed' }));
  });
}

/** The close the sound and video channels give when the session has none (VIDEO_CLOSE.unavailable, serveSoundListener). */
const NO_STREAM = 1011;

/** The close an owner node gave a forwarded connection, when it was one of the viewer's (4000-4999, or NO_STREAM). */
const forwardedClose = new WeakMap<Duplex, CloseReason>();

/**
 * A WebSocket to another node as a channel's end (the forwarding node's side). ws's own stream only
 * ends its readable half when the socket closes; the relay waits for 'close', so it is destroyed:
 * a connection the owner closes closes the caller's too, with the owner's code and reason when
 * they are the viewer's own (close-codes.ts) or the sound or video channel's "nothing to stream
 * here" (1011 with its reason: sound or video off on the owner), so a viewer learns the same on
 * every node.
 */
export function webSocketEnd(socket: WebSocket): Duplex {
  const stream = createWebSocketStream(socket);
  socket.once('close', (code: number, reason: Buffer) => {
    if ((code >= 4000 && code < 5000) || code === NO_STREAM) forwardedClose.set(stream, { code, reason: reason.toString() });
    stream.destroy();
  });
  return stream;
}
