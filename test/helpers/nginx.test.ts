// The throwaway nginx of the cluster tests: round robin over the nodes without affinity, the
// client's Host and address passed on, WebSocket upgrades proxied, a dead node skipped, and the
// node list replaced while it runs.
import { createServer, get, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { freePort } from './server-process.js';
import { startNginx, type TestNginx } from './nginx.js';

/** A stand-in node: answers its name over HTTP and echoes WebSocket messages with its name. */
async function startNode(name: string): Promise<{ url: string; seen: IncomingHttpHeaders[]; server: Server }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    seen.push(request.headers);
    response.end(name);
  });
  new WebSocketServer({ server }).on('connection', (socket) => socket.on('message', (data) => socket.send(`${name}:${data}`)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen, server };
}

/** The bodies of `count` GETs, each on a new connection (a reload closes kept-alive ones). */
async function answers(url: string, count: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    names.push(
      await new Promise<string>((resolve, reject) => {
        get(url, { agent: false }, (response) => {
          let body = '';
          response.on('data', (chunk) => (body += chunk)).on('end', () => resolve(body));
        }).on('error', reject);
      }),
    );
  }
  return names;
}

describe('startNginx', () => {
  let a: Awaited<ReturnType<typeof startNode>>;
  let b: Awaited<ReturnType<typeof startNode>>;
  let nginx: TestNginx;

  beforeAll(async () => {
    [a, b] = await Promise.all([startNode('a'), startNode('b')]);
    nginx = await startNginx({ upstreams: [a.url, b.url] });
  });

  afterAll(async () => {
    await nginx?.stop();
    for (const node of [a, b]) node?.server.closeAllConnections();
    await Promise.all([a, b].map((node) => node && new Promise((resolve) => node.server.close(resolve))));
  });

  it('sends requests to the nodes in turn, with the client Host and address', async () => {
    const names = await answers(`${nginx.url}/v8/vm/data`, 4);
    expect(names.sort()).toEqual(['a', 'a', 'b', 'b']);
    const headers = a.seen.at(-1)!;
    expect(headers.host).toBe(new URL(nginx.url).host);
    expect(headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(headers['x-forwarded-proto']).toBe('http');
  });

  it('proxies WebSocket upgrades', async () => {
    const socket = new WebSocket(`${nginx.url.replace('http', 'ws')}/viewer/socket`);
    const reply = await new Promise<string>((resolve, reject) => {
      socket.once('open', () => socket.send('hello'));
      socket.once('message', (data) => resolve(String(data)));
      socket.once('error', reject);
    });
    socket.close();
    expect(reply).toMatch(/^(a|b):hello$/);
  });

  it('skips a node that refuses connections, and takes a new node list', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    await nginx.setUpstreams([dead, b.url]);
    expect(await answers(nginx.url, 4)).toEqual(['b', 'b', 'b', 'b']);
    await nginx.setUpstreams([a.url]);
    expect(await answers(nginx.url, 2)).toEqual(['a', 'a']);
  });
});
