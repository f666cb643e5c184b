// How fast the engine reads a pipe that a session can write into (issue 49): a process's error
// output, a sound server's events. Past its bytes for the current second, the pipe is not read until
// the next second: the pipe fills and the writer waits, inside the session, and the engine's event
// loop spends nothing on the excess. Nothing is dropped; a flood only slows the session that made it.
import type { Readable } from 'node:stream';

/** Reads `stream` as `onData` chunks, at most `bytesPerSecond` a second (a chunk is never split). */
export function readWithinBudget(stream: Readable, bytesPerSecond: number, onData: (chunk: Buffer) => void): void {
  let windowStart = Date.now();
  let spent = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  stream.on('data', (chunk: Buffer | string) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const now = Date.now();
    if (now - windowStart >= 1000) {
      windowStart = now;
      spent = 0;
    }
    spent += bytes.length;
    onData(bytes);
    if (spent >= bytesPerSecond && !timer) {
      stream.pause();
      timer = setTimeout(() => {
        timer = undefined;
        windowStart = Date.now();
        spent = 0;
        stream.resume();
      }, Math.max(1, windowStart + 1000 - now));
      timer.unref();
    }
  });
  stream.once('close', () => clearTimeout(timer));
}
