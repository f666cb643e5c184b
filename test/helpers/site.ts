// Test helpers for tests that drive a real engine: a loopback web site that answers one page for
// every address (what the remote browser opens), and a v8 API caller with one account's key.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Serves `html` (UTF-8) on a loopback port for every path but /favicon.ico. */
export async function servePage(html: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => {
    if (request.url === '/favicon.ico') return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Calls `/v8<path>` of the engine at `baseUrl` with `key`: GET without a body, POST with one. */
export function v8Caller(baseUrl: () => string, key: () => string) {
  return async (path: string, body?: unknown): Promise<Record<string, any>> => {
    const response = await fetch(`${baseUrl()}/v8${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${key()}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await response.json()) as Record<string, any>;
  };
}
