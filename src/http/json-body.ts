// JSON request bodies under the size cap, for the engine's HTTP interface and the proxy route
// alike: one parsing rule, one cap rule and one set of refusals, whatever carried the body. This
// file reads a Web-standard Request (Node 20 and browsers have it); node-body.ts reads node:http.
import { BODY_MAX_BYTES } from '../protocol/index.js';

/** Why a body was refused: each caller picks its HTTP status from this, the message goes out as is. */
export type BodyRefusal = 'too_large' | 'empty' | 'not_json' | 'unreadable';

export type BodyResult = { ok: true; value: unknown } | { ok: false; refusal: BodyRefusal; message: string };

/**
 * A body over `limit` bytes, by its Content-Length or as it streams in: refused before parsing.
 */
export function tooLarge(limit: number): { ok: false; refusal: 'too_large'; message: string } {
  return { ok: false, refusal: 'too_large', message: `request body is larger than ${Math.floor(limit / 1024)} KiB` };
}

/** The client's stream failed before its end (a client that went away, usually). */
export const UNREADABLE = { ok: false, refusal: 'unreadable', message: 'the request body could not be read' } as const;

// A byte-order mark stays in the text, so that it is refused as JSON (RFC 8259 forbids sending one).
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** The body's bytes as JSON. Invalid UTF-8 becomes U+FFFD, as JSON.parse then sees it. */
export function parseJsonBody(chunks: readonly Uint8Array[]): BodyResult {
  const size = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
  const bytes = new Uint8Array(size);
  chunks.reduce((at, chunk) => (bytes.set(chunk, at), at + chunk.byteLength), 0);
  const text = utf8.decode(bytes);
  if (text.trim() === '') return { ok: false, refusal: 'empty', message: 'request body is empty; send a JSON object' };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, refusal: 'not_json', message: 'request body is not valid JSON; send a JSON object' };
  }
}

/** Reads a Web request body as JSON: past `limit` bytes, declared or streamed, reading stops. */
export async function readJsonRequest(request: Request, limit = BODY_MAX_BYTES): Promise<BodyResult> {
  if (Number(request.headers.get('content-length') ?? 0) > limit) return tooLarge(limit);
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    const reader = request.body?.getReader();
    for (let part = await reader?.read(); reader && part && !part.done; part = await reader.read()) {
      size += part.value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => undefined);
        return tooLarge(limit);
      }
      chunks.push(part.value);
    }
  } catch {
    return UNREADABLE;
  }
  return parseJsonBody(chunks);
}
