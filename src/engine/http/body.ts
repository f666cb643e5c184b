// Reading a request body as JSON with a size cap: too large or not JSON is the caller's error,
// answered in the envelope, never an exception.
import type { IncomingMessage } from 'node:http';
import { BODY_MAX_BYTES } from '../../protocol/index.js';

export type BodyResult = { ok: true; value: unknown } | { ok: false; message: string };

export async function readJsonBody(request: IncomingMessage, limit = BODY_MAX_BYTES): Promise<BodyResult> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > limit) {
    request.resume();
    return { ok: false, message: `request body is larger than ${limit / 1024} KiB` };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of request as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        request.resume();
        return { ok: false, message: `request body is larger than ${limit / 1024} KiB` };
      }
      chunks.push(chunk);
    }
  } catch {
    return { ok: false, message: 'the request body could not be read' };
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
