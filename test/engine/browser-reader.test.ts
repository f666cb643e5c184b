// A session's reader worker (browser-reader.ts, issue 53): the engine's own connection to a browser
// is read in a worker of the session's, so what a lying browser writes is parsed there. Against a
// stand-in browser on loopback (a ws server: the fake that makes the fault happen): messages arrive
// as plain objects; one it cannot read, or past the line's bytes a second, is told and the line
// goes on; a worker that fails ends, not the process, and every line it held hears why; a reader
// that has ended opens no more lines; the lines of one reader are capped.
import type { AddressInfo } from 'node:net';
import type { Worker } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import type { LineSink } from '../../src/engine/runtime/browser/browser-line.js';
import { BrowserReader } from '../../src/engine/runtime/browser/browser-reader.js';
import { DevToolsConnection } from '../../src/engine/runtime/browser/devtools-connection.js';

let server: WebSocketServer;
let url: string;
/** What the stand-in browser writes to each connection as it opens. */
let onConnection: (socket: WebSocket) => void = () => undefined;
const readers: BrowserReader[] = [];

beforeAll(async () => {
  server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => server.once('listening', resolve));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/devtools/browser/x`;
  server.on('connection', (socket) => onConnection(socket));
});

afterEach(async () => {
  await Promise.all(readers.splice(0).map((reader) => reader.stop()));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** What a line told a sink: its messages, what it could not read, and when it opened and closed (with why). */
interface Recorded {
  sink: LineSink;
  messages: Array<Record<string, unknown>>;
  unreadable: string[];
  opened: Promise<void>;
  closed: Promise<string>;
}

function recording(): Recorded {
  const messages: Array<Record<string, unknown>> = [];
  const unreadable: string[] = [];
  let open!: () => void;
  let close!: (why: string) => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const closed = new Promise<string>((resolve) => (close = resolve));
  const sink: LineSink = { open: () => open(), message: (value) => void messages.push(value), unreadable: (why) => void unreadable.push(why), close: (why) => close(why) };
  return { sink, messages, unreadable, opened, closed };
}

function reader(heapMb?: number): BrowserReader {
  const made = new BrowserReader(heapMb);
  readers.push(made);
  return made;
}

const LIMITS = { maxPayload: 64 * 1024 * 1024, maxDepth: 512 };

describe("a session's reader", () => {
  it('hands on what the browser wrote as plain objects, and tells what it could not read while the line goes on', async () => {
    onConnection = (socket) => {
      socket.send('{"method":"Target.targetCreated","params":{"targetInfo":{"targetId":"A","type":"page","url":"https://example.com/"}}}');
      socket.send('null');
      socket.send('[' .repeat(600) + ']'.repeat(600));
      socket.send('{"id":1,"result":{}}');
    };
    const sink = recording();
    reader().open(url, LIMITS, sink.sink);
    await sink.opened;
    await expect.poll(() => sink.messages.length).toBe(2);
    expect(sink.messages).toEqual([
      { method: 'Target.targetCreated', params: { targetInfo: { targetId: 'A', type: 'page', url: 'https://example.com/' } } },
      { id: 1, result: {} },
    ]);
    expect(sink.unreadable).toEqual(['a message that is not a JSON object', 'a message nested deeper than 512 levels']);
  });

  it('ends when its worker ends, and every line hears why; the engine goes on', async () => {
    onConnection = () => undefined;
    const one = reader();
    const failed = new Promise<string>((resolve) => one.once('failed', resolve));
    const sinks = [recording(), recording()];
    for (const sink of sinks) one.open(url, LIMITS, sink.sink);
    await Promise.all(sinks.map((sink) => sink.opened));
    // A fault in the worker itself: a message its protocol does not hold makes it throw (what a
    // defect in its reading would do); the worker is private, reached here only to make the fault.
    (one as unknown as { worker: Worker }).worker.postMessage({ type: 'nonsense' });
    const why = await failed;
    expect(why).toMatch(/^the session's reader ended: it (failed|exited)/);
    for (const sink of sinks) {
      expect(await sink.closed).toBe(why);
      expect(sink.unreadable).toEqual([why]);
    }
    // Ended, it opens nothing more: a later line is told at once.
    const later = recording();
    one.open(url, LIMITS, later.sink);
    expect(await later.closed).toBe(why);
  });

  it('gives the engine a DevTools connection whose session ends, saying why, when its browser writes what cannot be read', async () => {
    onConnection = (socket) => socket.on('message', (data) => {
      const { id } = JSON.parse(String(data)) as { id: number };
      socket.send(JSON.stringify({ id, result: { ok: true } }));
      socket.send('{"method":"Target.targetInfoChanged","params":7}');
    });
    const connection = await DevToolsConnection.open(url, { reader: reader() });
    const unreadable = new Promise<{ why: string }>((resolve) => connection.once('unreadable', resolve));
    expect(await connection.send('Target.getTargets')).toEqual({ ok: true });
    expect(await unreadable).toEqual({ why: 'a Target.targetInfoChanged event whose params are not an object' });
  });

  it('hands on at most its bytes a second, and tells what passes them as unreadable', async () => {
    // Five of 600 kB at once against 1 MiB a second: however a second's turn falls among them,
    // one second holds three, and what passes the budget is not handed on.
    const big = JSON.stringify({ method: 'Page.lifecycleEvent', params: { name: 'x'.repeat(600 * 1024) } });
    onConnection = (socket) => {
      for (let i = 0; i < 5; i++) socket.send(big);
      socket.send('{"id":9,"result":{}}');
    };
    const sink = recording();
    reader().open(url, { ...LIMITS, bytesPerSecond: 1024 * 1024 }, sink.sink);
    await expect.poll(() => sink.messages.length + sink.unreadable.length).toBeGreaterThanOrEqual(6);
    expect(sink.unreadable.length).toBeGreaterThanOrEqual(1);
    expect(new Set(sink.unreadable)).toEqual(new Set(['more than 1 MiB in a second']));
    expect(sink.messages.length).toBeGreaterThanOrEqual(1);
  });

  it('holds at most 16 lines to one browser', async () => {
    onConnection = () => undefined;
    const one = reader();
    const sinks = Array.from({ length: 17 }, () => recording());
    for (const sink of sinks) one.open(url, LIMITS, sink.sink);
    expect(await sinks[16]!.closed).toBe('more than 16 lines to one browser');
    expect(one.lineCount).toBe(16);
  });
});
