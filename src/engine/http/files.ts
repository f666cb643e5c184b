// Files over HTTP (issue 23, decisions.md 55-57): a file's bytes sent as a real download (its own
// name in Content-Disposition, RFC 5987), and a request body taken as an upload; both streamed
// through the program inside the session, never held whole, and paced (`files.bytesPerSecond`)
// so that one transfer leaves the engine time for the session's picture and input. Used by the
// API's `vm/files/download` and `vm/files/upload` (by key) and by the share link's own (by link).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, Transform, type Readable, type TransformCallback } from 'node:stream';
import { discardRest } from '../../http/node-body.js';
import { SECURITY_HEADERS } from '../../http/headers.js';
import { attachmentDisposition, FILE_KINDS, type FileKind } from '../../protocol/files.js';
import type { FilesRefusal, SessionFilesService } from '../sessions/files.js';
import type { SessionRow } from '../store/store.js';
import { sendJson } from './respond.js';

/** Pieces a paced transfer is cut into: small enough that no one write holds the event loop long. */
const PIECE = 64 * 1024;

/**
 * Holds a stream to `bytesPerSecond` (a token bucket that may run a quarter of a second ahead),
 * cut into 64 KiB pieces. Null: not held, only cut.
 */
export function paced(bytesPerSecond: number | null): Transform {
  let allowance = 0;
  let last = Date.now();
  const burst = bytesPerSecond === null ? Infinity : bytesPerSecond / 4;
  return new Transform({
    highWaterMark: PIECE,
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      let offset = 0;
      const next = () => {
        while (offset < chunk.length) {
          const piece = chunk.subarray(offset, offset + PIECE);
          if (bytesPerSecond !== null) {
            const now = Date.now();
            allowance = Math.min(burst, allowance + ((now - last) / 1000) * bytesPerSecond);
            last = now;
            if (allowance < piece.length) {
              setTimeout(next, Math.ceil(((piece.length - allowance) / bytesPerSecond) * 1000));
              return;
            }
            allowance -= piece.length;
          }
          offset += piece.length;
          this.push(piece);
        }
        callback();
      };
      next();
    },
  });
}

/** The HTTP status a refused download answers with: not found, or not allowed. */
function downloadStatus(refusal: FilesRefusal): number {
  if (/^name: no file named/.test(refusal.message)) return 404;
  if (/^name: .*(is not a plain file|is still downloading)/.test(refusal.message)) return 403;
  return /^(name|kind): /.test(refusal.message) ? 400 : 403;
}

export interface FileTransferOptions {
  files: SessionFilesService;
  bytesPerSecond: number | null;
  /** Headers every answer carries (the share link's CORS). */
  headers?: Record<string, string>;
}

/** `?kind=download|upload`, or null (any). */
export function kindParameter(url: URL): FileKind | null | FilesRefusal {
  const kind = url.searchParams.get('kind');
  if (kind === null || kind === '') return null;
  return FILE_KINDS.includes(kind as FileKind) ? (kind as FileKind) : { status: 'denied', message: 'kind: must be "download" or "upload"' };
}

/** Sends one of the session's files as a download, or the refusal in the envelope (4xx). */
export async function sendSessionFile(request: IncomingMessage, response: ServerResponse, row: SessionRow, url: URL, options: FileTransferOptions): Promise<void> {
  await discardRest(request);
  const headers = options.headers ?? {};
  const kind = kindParameter(url);
  const outcome = kind !== null && typeof kind === 'object' ? kind : await options.files.read(row, url.searchParams.get('name'), kind);
  if (outcome.status !== 'ok') return sendJson(response, outcome, downloadStatus(outcome), headers);
  response.writeHead(200, {
    ...SECURITY_HEADERS,
    ...headers,
    'content-type': 'application/octet-stream',
    'content-length': String(outcome.size),
    'content-disposition': attachmentDisposition(outcome.name),
    'cache-control': 'no-store',
  });
  await new Promise<void>((resolve) => {
    let sent = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        sent += chunk.length;
        callback(null, chunk);
      },
    });
    pipeline(outcome.stream as Readable, counter, paced(options.bytesPerSecond), response, (error) => {
      // A caller that left, or a file cut short: the program ends, the connection is not reused.
      if (error || sent !== outcome.size) {
        outcome.cancel();
        response.destroy();
      }
      resolve();
    });
  });
}

/** Takes the request's body as an upload into the session; answers in the envelope (200) with its size, or the refusal. */
export async function receiveSessionFile(request: IncomingMessage, response: ServerResponse, row: SessionRow, url: URL, options: FileTransferOptions): Promise<void> {
  const headers = options.headers ?? {};
  const length = request.headers['content-length'];
  const declared = length === undefined ? null : Number(length);
  const body = paced(options.bytesPerSecond);
  // The request's own errors (a caller who left) end the body, and with it the program inside.
  request.on('error', (error) => body.destroy(error));
  request.on('aborted', () => body.destroy(new Error('the sender went away')));
  request.pipe(body);
  const outcome = await options.files.write(row, url.searchParams.get('name'), body, declared);
  if (outcome.status !== 'ok') {
    request.unpipe(body);
    // A refused body is read (and dropped) up to a bound, so the caller can read the answer; beyond it the connection closes.
    await discardRest(request);
    return sendJson(response, outcome, 200, { ...headers, ...(request.complete ? {} : { connection: 'close' }) });
  }
  sendJson(response, outcome, 200, headers);
}
