// The viewer's follower of a share API channel (src/core/share-channel.ts, used by editing, files
// and people) against a real WebSocket server: text and relayed bytes both read, hello said on
// each open, opened again after a drop, a refusal before opening ends it (unless asked to retry),
// and nothing after stop. The browser's WebSocket is the component tests' one over `ws`.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket, WebSocketServer, type WebSocket as ServerSocket } from 'ws';
import { followShareChannel } from '../../src/core/share-channel.js';
import { BrowserWebSocket } from '../react/browser-websocket.js';

let server: Server;
let base: string;
const wss = new WebSocketServer({ noServer: true });
/** What each upgrade of a link is answered with: accepted (then `onSocket`), or refused with a status. */
const links = new Map<string, { refuse?: number; sockets: ServerSocket[]; upgrades: number; heard: string[] }>();

function link(id: string, refuse?: number) {
  const entry = { ...(refuse ? { refuse } : {}), sockets: [] as ServerSocket[], upgrades: 0, heard: [] as string[] };
  links.set(id, entry);
  return entry;
}

beforeAll(async () => {
  vi.stubGlobal('WebSocket', BrowserWebSocket);
  server = createServer((_request, response) => response.writeHead(404).end());
  server.on('upgrade', (request, socket, head) => {
    const id = /^\/share\/([^/]+)\//.exec(request.url ?? '')?.[1] ?? '';
    const entry = links.get(id);
    if (!entry) return void socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
    entry.upgrades += 1;
    if (entry.refuse) return void socket.end(`HTTP/1.1 ${entry.refuse} Refused\r\n\r\n`);
    wss.handleUpgrade(request, socket, head, (ws) => {
      entry.sockets.push(ws);
      ws.on('message', (data: Buffer) => entry.heard.push(data.toString('utf8')));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  vi.unstubAllGlobals();
  for (const entry of links.values()) for (const socket of entry.sockets) socket.terminate();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const until = (check: () => boolean) => vi.waitFor(() => expect(check()).toBe(true), { timeout: 5000, interval: 10 });
const parse = (text: string) => {
  try {
    return JSON.parse(text) as { n: number };
  } catch {
    return null;
  }
};

describe('followShareChannel', () => {
  it('reads text and relayed bytes alike, skips what does not parse, says hello on each open and opens again after a drop', async () => {
    const entry = link('one');
    const got: number[] = [];
    let drops = 0;
    const follow = followShareChannel(base, 'one', 'people', { parse, onMessage: (m) => got.push(m.n), onOpen: (send) => send('hello'), onDrop: () => drops++, retryMs: 20 });
    await until(() => entry.sockets.length === 1);
    await until(() => entry.heard.length === 1);
    entry.sockets[0]!.send('{"n":1}');
    entry.sockets[0]!.send(Buffer.from('{"n":2}'), { binary: true });
    entry.sockets[0]!.send('not json');
    entry.sockets[0]!.send('{"n":3}');
    await until(() => got.length === 3);
    expect(got).toEqual([1, 2, 3]);
    entry.sockets[0]!.close();
    await until(() => entry.sockets.length === 2 && entry.heard.length === 2);
    expect(drops).toBe(1);
    expect(entry.heard).toEqual(['hello', 'hello']);
    expect(follow.send('{"type":"ask"}')).toBe(true);
    await until(() => entry.heard.length === 3);
    follow.stop();
    expect(follow.send('{"type":"ask"}')).toBe(false);
    await until(() => entry.sockets[1]!.readyState === WebSocket.CLOSED);
    expect(drops).toBe(1);
    expect(entry.upgrades).toBe(2);
  });

  it('stops for good at a refusal before the socket opens, unless told to keep trying', async () => {
    const refused = link('refused', 403);
    const busy = link('busy', 503);
    let drops = 0;
    followShareChannel(base, 'refused', 'files', { parse, onMessage: () => undefined, onDrop: () => drops++, retryMs: 10 });
    const follow = followShareChannel(base, 'busy', 'people', { parse, onMessage: () => undefined, retryMs: [10, 20], retryRefused: true });
    // The one that keeps trying has tried again and again meanwhile; the other tried once.
    await until(() => busy.upgrades >= 4);
    expect(drops).toBe(1);
    expect(refused.upgrades).toBe(1);
    delete busy.refuse;
    await until(() => busy.sockets.length === 1);
    follow.stop();
  });
});
