// One WebSocket line from the engine to a session's browser (its DevTools or its BiDi agent), read
// as a stranger's: every text message read once within the line's limits (limits/stranger-json.ts)
// and handed on as a plain object, or as why it could not be read; a binary message is unreadable.
// The same code runs in the session's reader worker (browser-reader-worker.ts), where the parse
// has the worker's own heap, and in the engine's thread for a caller with no reader (tests, tools).
import { WebSocket } from 'ws';
import { leadingId } from '../../limits/leading-id.js';
import { readStrangerJson } from '../../limits/stranger-json.js';

/** What a session is told when its browser sent what the engine could not read (decisions.md 181). */
export const UNREADABLE_BROWSER = "the session's browser sent what the service could not read";

/** What a line reads: the largest message, its deepest nesting, and the Host header the far end takes (Firefox's agent). */
export interface LineLimits {
  maxPayload: number;
  maxDepth: number;
  host?: string;
  /**
   * The most a line hands on in one second; past it, each further message that second is
   * unreadable ("more than … a second") and dropped unread. The engine's guard asks for far less
   * than a browser made to flood it would send; absent: only the relay's own read budget.
   */
  bytesPerSecond?: number;
}

/** What a line tells its reader, in order: open (once), messages or unreadable ones, close (once). */
export interface LineSink {
  open(): void;
  message(value: Record<string, unknown>): void;
  /**
   * A message that could not be read (why): the line stays open; its reader decides. `exceeded`:
   * it passed a limit (it may be an answer that is only too much), with the id it names at its
   * top level when one is found without reading it.
   */
  unreadable(why: string, exceeded?: { id: number | null }): void;
  close(why: string): void;
}

/** The engine's end of a line: send text, close it. */
export interface BrowserLine {
  send(text: string): void;
  /** Closes politely (a browser that does not answer is cut after a second). */
  close(): void;
  /** Cuts at once. */
  terminate(): void;
}

/** Opens a line to `url` in this thread; `sink` hears everything it reads. */
export function openLine(url: string, limits: LineLimits, sink: LineSink): BrowserLine {
  const socket = new WebSocket(url, { perMessageDeflate: false, maxPayload: limits.maxPayload, ...(limits.host ? { headers: { host: limits.host } } : {}) });
  let closed = false;
  socket.on('open', () => sink.open());
  let second = 0;
  let handedOn = 0;
  socket.on('message', (data: Buffer, isBinary: boolean) => {
    if (limits.bytesPerSecond !== undefined) {
      const now = Math.floor(performance.now() / 1000);
      if (now !== second) [second, handedOn] = [now, 0];
      handedOn += data.length;
      if (handedOn > limits.bytesPerSecond) return sink.unreadable(`more than ${limits.bytesPerSecond / 1024 / 1024} MiB in a second`);
    }
    if (isBinary) return sink.unreadable('a binary message');
    const text = data.toString('utf8');
    const read = readStrangerJson(text, { maxLength: limits.maxPayload, maxDepth: limits.maxDepth });
    if (read.ok) sink.message(read.value);
    else sink.unreadable(read.why, read.exceeded ? { id: leadingId(text) } : undefined);
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    if (closed) return;
    closed = true;
    sink.close('the connection closed');
  });
  return {
    send: (text) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(text);
    },
    close: () => {
      if (socket.readyState === WebSocket.CLOSED) return;
      socket.close();
      setTimeout(() => socket.terminate(), 1000).unref();
    },
    terminate: () => socket.terminate(),
  };
}
