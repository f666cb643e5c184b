// A slow link on loopback, for tests and benches (issue 25): a TCP proxy that forwards between its
// clients (a viewer) and one address (the engine) at a set rate in each direction, every
// connection sharing it as they would share a real link. It reads from a side only while that
// side's queue here is under a few packets, so a sender faster than the link is held back by TCP
// itself (its socket backs up, as over a real slow link), unlike DevTools throttling, which paces
// bytes inside the viewer browser after TCP delivered them.
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface ThrottledLinkOptions {
  /** Where the link leads (the engine's port on loopback). */
  port: number;
  host?: string;
  /** The link's rate, each direction (kbit/s). */
  kbitPerSecond: number;
  /** Bytes a side may have waiting here before the link stops reading it: the link's own buffer. */
  queueBytes?: number;
  /** One-way delay added to every byte (ms). */
  delayMs?: number;
}

export interface ThrottledLink {
  /** The link's port on 127.0.0.1: connect here instead of to the engine. */
  port: number;
  /** Rewrites an address of the engine (http or ws) to go through the link. */
  through(url: string): string;
  /** Bytes forwarded so far towards the clients and towards the engine. */
  forwarded: { down: number; up: number };
  close(): Promise<void>;
}

/** Bytes waiting to cross the link in one direction for one connection. */
interface Lane {
  from: Socket;
  to: Socket;
  queue: Buffer[];
  queued: number;
  paused: boolean;
}

const TICK_MS = 5;

export async function startThrottledLink(options: ThrottledLinkOptions): Promise<ThrottledLink> {
  const queueBytes = options.queueBytes ?? 16 * 1024;
  const bytesPerMs = (options.kbitPerSecond * 1000) / 8 / 1000;
  const forwarded = { down: 0, up: 0 };
  const directions = { down: new Set<Lane>(), up: new Set<Lane>() };
  /** Bytes each direction may still send now: refilled by the clock, at most 2 ticks' worth. */
  const allowance = { down: 0, up: 0 };
  let last = performance.now();

  const deliver = (lane: Lane, bytes: Buffer) => {
    if (lane.to.destroyed) return;
    if (options.delayMs) setTimeout(() => lane.to.destroyed || lane.to.write(bytes), options.delayMs);
    else lane.to.write(bytes);
  };

  const tick = () => {
    const now = performance.now();
    const elapsed = now - last;
    last = now;
    for (const direction of ['down', 'up'] as const) {
      allowance[direction] = Math.min(allowance[direction] + elapsed * bytesPerMs, 2 * TICK_MS * bytesPerMs + 1500);
      // Round robin over the connections with bytes waiting, a packet at most each time round.
      let sent = true;
      while (allowance[direction] >= 1 && sent) {
        sent = false;
        for (const lane of directions[direction]) {
          if (lane.queued === 0 || allowance[direction] < 1) continue;
          // The destination's own socket full: this lane waits for it (TCP backpressure onward too).
          if (lane.to.writableLength > queueBytes) continue;
          const head = lane.queue[0]!;
          const size = Math.min(head.length, 1448, Math.floor(allowance[direction]));
          const piece = head.subarray(0, size);
          if (size === head.length) lane.queue.shift();
          else lane.queue[0] = head.subarray(size);
          lane.queued -= size;
          allowance[direction] -= size;
          forwarded[direction] += size;
          deliver(lane, piece);
          sent = true;
          if (lane.paused && lane.queued < queueBytes) {
            lane.paused = false;
            lane.from.resume();
          }
        }
      }
    }
  };
  const clock = setInterval(tick, TICK_MS);

  const lane = (direction: 'down' | 'up', from: Socket, to: Socket) => {
    const entry: Lane = { from, to, queue: [], queued: 0, paused: false };
    directions[direction].add(entry);
    from.on('data', (chunk: Buffer) => {
      entry.queue.push(chunk);
      entry.queued += chunk.length;
      if (entry.queued >= queueBytes && !entry.paused) {
        entry.paused = true;
        from.pause();
      }
    });
    from.on('close', () => {
      // What is still queued goes out at the link's pace, then the other side is ended.
      const finish = setInterval(() => {
        if (entry.queued > 0 && !to.destroyed) return;
        clearInterval(finish);
        directions[direction].delete(entry);
        setTimeout(() => to.end(), options.delayMs ?? 0);
      }, TICK_MS);
    });
  };

  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const engine = connect({ port: options.port, host: options.host ?? '127.0.0.1' });
    for (const socket of [client, engine]) {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('error', () => {
        client.destroy();
        engine.destroy();
      });
      socket.on('close', () => sockets.delete(socket));
    }
    lane('down', engine, client);
    lane('up', client, engine);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    forwarded,
    through(url) {
      const address = new URL(url);
      address.host = `127.0.0.1:${port}`;
      return address.toString();
    },
    async close() {
      clearInterval(clock);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
