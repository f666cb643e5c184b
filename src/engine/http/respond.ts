// Writing the service's answers on node:http: JSON bodies in the interface's envelope, with the
// headers a careful service sets on every response (src/http/headers.ts).
import type { ServerResponse } from 'node:http';
import { JSON_CONTENT_TYPE, SECURITY_HEADERS } from '../../http/headers.js';

export function sendJson(response: ServerResponse, body: unknown, statusCode = 200, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(statusCode, {
    ...SECURITY_HEADERS,
    'content-type': JSON_CONTENT_TYPE,
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}
