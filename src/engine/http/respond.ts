// Writing the service's answers: JSON bodies in the interface's envelope, with the headers a
// careful service sets on every response.
import type { ServerResponse } from 'node:http';

export const SECURITY_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export function sendJson(response: ServerResponse, body: unknown, statusCode = 200, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(statusCode, {
    ...SECURITY_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}
