// The session's reader worker (browser-reader.ts): a worker thread with a heap of its own that
// holds the lines of the engine's own connections to one session's browser and reads every message
// on them (browser-line.ts), so that what a browser made to lie writes is parsed here, not in the
// thread that serves every session. It posts each message as a plain object, checked on arrival.
import { parentPort } from 'node:worker_threads';
import { openLine, type BrowserLine } from './browser-line.js';
import { LINES_PER_READER, readToReader, type FromReader } from './browser-reader-messages.js';

const port = parentPort!;
const lines = new Map<number, BrowserLine>();
const post = (message: FromReader) => port.postMessage(message);

port.on('message', (raw: unknown) => {
  const message = readToReader(raw);
  // The engine's own messages: one that does not fit is a defect, and this worker ends (its session with it).
  if (!message) throw new Error('the engine posted a message the reader does not take');
  switch (message.type) {
    case 'ping':
      return post({ type: 'pong', n: message.n });
    case 'open': {
      if (lines.size >= LINES_PER_READER) return post({ type: 'closed', line: message.line, why: `more than ${LINES_PER_READER} lines to one browser` });
      const { line } = message;
      lines.set(line, openLine(message.url, { maxPayload: message.maxPayload, maxDepth: message.maxDepth, ...(message.host ? { host: message.host } : {}), ...(message.bytesPerSecond ? { bytesPerSecond: message.bytesPerSecond } : {}) }, {
        open: () => post({ type: 'opened', line }),
        message: (value) => post({ type: 'message', line, value }),
        unreadable: (why, exceeded) => post({ type: 'unreadable', line, why: why.slice(0, 500), ...(exceeded ? { exceeded } : {}) }),
        close: (why) => {
          lines.delete(line);
          post({ type: 'closed', line, why: why.slice(0, 500) });
        },
      }));
      return;
    }
    case 'send':
      return lines.get(message.line)?.send(message.text);
    case 'close':
      return lines.get(message.line)?.close();
  }
});
