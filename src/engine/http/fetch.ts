// The HTTP interface as a Web-standard handler, `(Request) => Promise<Response>`: the engine
// in-process without a socket (the proxy route's in-process service calls it).
import { JSON_CONTENT_TYPE, SECURITY_HEADERS } from '../../http/headers.js';
import { readJsonRequest } from '../../http/json-body.js';
import type { ApiAnswer, ApiRequest } from './calls.js';

/** The Web-standard request, as the API reads requests. */
export function apiRequestOf(request: Request): ApiRequest {
  return {
    method: request.method,
    url: new URL(request.url),
    headers: Object.fromEntries(request.headers),
    body: () => readJsonRequest(request),
    signal: request.signal,
  };
}

/** An answer written as a Web-standard response, with the same headers as the node:http path. */
export function responseOf(answer: ApiAnswer): Response {
  return new Response(JSON.stringify(answer.body), {
    status: answer.status,
    headers: { ...SECURITY_HEADERS, 'content-type': JSON_CONTENT_TYPE, ...answer.headers },
  });
}
