// Request bodies from node:http under the size cap, for the engine's server and the proxy route's
// node adapter: the same cap rule and JSON parsing as a Web-standard Request (json-body.ts), plus
// what only a node stream needs (a refused body is still read to its end before the answer).
import type { IncomingMessage } from 'node:http';
import { BODY_MAX_BYTES } from '../protocol/index.js';
import { parseJsonBody, tooLarge, UNREADABLE, type BodyResult } from './json-body.js';

export type NodeBodyRead = { ok: true; chunks: Buffer[] } | { ok: false; refusal: 'too_large' | 'unreadable'; message: string; cause?: unknown };

/** A refused body up to this size is read to its end (and dropped) before the answer goes out. */
const DISCARD_MAX_BYTES = 16 * 1024 * 1024;
const DISCARD_MAX_MS = 5_000;

/**
 * Reads and drops the rest of a refused body (or one that no endpoint reads), so that the client
 * can finish sending and then read the answer: answering first would close the connection under
 * a client still writing (EPIPE instead of the envelope). Gives up past DISCARD_MAX_BYTES or
 * DISCARD_MAX_MS.
 */
export function discardRest(request: IncomingMessage, alreadyRead = 0): Promise<void> {
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

/** The body's bytes, or the refusal: over `limit` (declared or streamed), or a stream that failed. */
export async function readNodeBody(request: IncomingMessage, limit = BODY_MAX_BYTES): Promise<NodeBodyRead> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > limit) {
    if (declared <= DISCARD_MAX_BYTES) await discardRest(request, 0);
    else request.resume();
    return tooLarge(limit);
  }
  // Events, not for-await: leaving an async iteration early destroys the request's socket.
  const chunks: Buffer[] = [];
  let size = 0;
  let cause: unknown;
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
    const onError = (error: unknown) => {
      cause = error;
      finish('failed');
    };
    request.on('data', onData).once('end', onEnd).once('error', onError);
    if (request.readableEnded) finish('read');
  });
  if (outcome === 'failed') return { ...UNREADABLE, cause };
  if (outcome === 'too large') {
    await discardRest(request, size);
    return tooLarge(limit);
  }
  return { ok: true, chunks };
}

/** Reads a node:http request body as JSON, with the same cap and refusals as a Web Request. */
export async function readJsonBody(request: IncomingMessage, limit = BODY_MAX_BYTES): Promise<BodyResult> {
  const read = await readNodeBody(request, limit);
  return read.ok ? parseJsonBody(read.chunks) : { ok: false, refusal: read.refusal, message: read.message };
}
