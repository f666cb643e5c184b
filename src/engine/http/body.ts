// Reading a request body as JSON with a size cap: too large or not JSON is the caller's error,
// answered in the envelope, never an exception.
import type { IncomingMessage } from 'node:http';
import { BODY_MAX_BYTES } from '../../protocol/index.js';

export type BodyResult = { ok: true; value: unknown } | { ok: false; message: string };

/** A refused body up to this size is read to its end (and dropped) before the answer goes out. */
const DISCARD_MAX_BYTES = 16 * 1024 * 1024;
const DISCARD_MAX_MS = 5_000;

/**
 * Reads and drops the rest of a refused body, so that the client can finish sending and then
 * read the answer: answering first would close the connection under a client still writing
 * (EPIPE instead of the envelope). Gives up past DISCARD_MAX_BYTES or DISCARD_MAX_MS.
 */
function discardRest(request: IncomingMessage, alreadyRead: number): Promise<void> {
  if (request.complete || request.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let seen = alreadyRead;
    const done = () => {
      clearTimeout(timer);
      request.off('data', onData).off('end', done).off('error', done).off('close', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > DISCARD_MAX_BYTES) done();
    };
    const timer = setTimeout(done, DISCARD_MAX_MS);
    request.on('data', onData).once('end', done).once('error', done).once('close', done);
    request.resume();
  });
}

export async function readJsonBody(request: IncomingMessage, limit = BODY_MAX_BYTES): Promise<BodyResult> {
  const tooLarge: BodyResult = { ok: false, message: `request body is larger than ${limit / 1024} KiB` };
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > limit) {
    if (declared <= DISCARD_MAX_BYTES) await discardRest(request, 0);
    else request.resume();
    return tooLarge;
  }
  // Events, not for-await: leaving an async iteration early destroys the request's socket.
  const chunks: Buffer[] = [];
  let size = 0;
  const outcome = await new Promise<'read' | 'too large' | 'failed'>((resolve) => {
    const finish = (result: 'read' | 'too large' | 'failed') => {
      request.off('data', onData).off('end', onEnd).off('error', onError);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return finish('too large');
      chunks.push(chunk);
    };
    const onEnd = () => finish('read');
    const onError = () => finish('failed');
    request.on('data', onData).once('end', onEnd).once('error', onError);
    if (request.readableEnded) finish('read');
  });
  if (outcome === 'failed') return { ok: false, message: 'the request body could not be read' };
  if (outcome === 'too large') {
    await discardRest(request, size);
    return tooLarge;
  }
  return parseJsonBody(chunks);
}

/** The body's bytes as JSON, with the refusals both transports give (node:http and fetch). */
export function parseJsonBody(chunks: Uint8Array[]): BodyResult {
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return { ok: false, message: 'request body is empty; send a JSON object' };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, message: 'request body is not valid JSON' };
  }
}
