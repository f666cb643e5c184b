// The HTTP interface as a Web-standard handler, `(Request) => Promise<Response>`: the engine
// in-process without a socket (the proxy route's in-process service calls it).
import { BODY_MAX_BYTES } from '../../protocol/index.js';
import type { ApiAnswer, ApiRequest } from './api.js';
import { parseJsonBody, type BodyResult } from './body.js';
import { SECURITY_HEADERS } from './respond.js';

/** Reads a Web request body as JSON with the same cap and the same refusals as the node:http path. */
export async function readJsonRequest(request: Request, limit = BODY_MAX_BYTES): Promise<BodyResult> {
  const tooLarge: BodyResult = { ok: false, message: `request body is larger than ${limit / 1024} KiB` };
  if (Number(request.headers.get('content-length') ?? 0) > limit) return tooLarge;
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    const reader = request.body?.getReader();
    for (let part = await reader?.read(); reader && part && !part.done; part = await reader.read()) {
      size += part.value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => undefined);
        return tooLarge;
      }
      chunks.push(part.value);
    }
  } catch {
    return { ok: false, message: 'the request body could not be read' };
  }
  return parseJsonBody(chunks);
}

/** The Web-standard request, as the API reads requests. */
export function apiRequestOf(request: Request): ApiRequest {
  return {
    method: request.method,
    url: new URL(request.url),
    headers: Object.fromEntries(request.headers),
    body: () => readJsonRequest(request),
  };
}

/** An answer written as a Web-standard response, with the same headers as the node:http path. */
export function responseOf(answer: ApiAnswer): Response {
  return new Response(JSON.stringify(answer.body), {
    status: answer.status,
    headers: { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8', ...answer.headers },
  });
}
