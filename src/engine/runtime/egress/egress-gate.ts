// The gate in front of a session's egress proxy: the socket its relay (or, unconfined, its browser)
// connects to. It holds the session to a number of open connections and closes a connection that
// sends nothing, so that one session cannot make the engine hold files without end (decisions.md 48).
import { chmod, chown } from 'node:fs/promises';
import net from 'node:net';
import type { OpenFiles } from '../../limits/open-files.js';

export interface EgressConnectionLimits {
  /**
   * Connections one session may have open to its egress route at once. Browsers use at most 32 to
   * one proxy for pages (Chromium's and Firefox's default), plus WebSockets.
   */
  perSession: number;
  /** A connection that has sent no byte this long after it opened is closed (ms). */
  firstBytesMs: number;
}

export const DEFAULT_EGRESS_CONNECTIONS: EgressConnectionLimits = { perSession: 256, firstBytesMs: 10_000 };

/** Files one connection can make the engine hold: the session's end and the target's. */
export const FILES_PER_EGRESS_CONNECTION = 2;

/** What the gate did, for diagnostics and tests. */
export interface EgressGateCounts {
  /** Connections open now (handed to the proxy, or waiting for their first bytes). */
  open: number;
  /** Connections closed at once: the session was at its cap, or the engine at its reserve. */
  refused: number;
  /** Connections closed because they sent nothing in time. */
  silent: number;
}

export interface EgressGate {
  /** The loopback port, or 0 on a unix socket. */
  readonly port: number;
  counts(): EgressGateCounts;
  /** Stops listening and ends every connection that has not reached the proxy yet. */
  close(): Promise<void>;
}

export interface EgressGateOptions {
  /** A unix socket path (made mode 0600, `socketOwner`'s), or undefined for 127.0.0.1 and a free port. */
  socketPath?: string;
  socketOwner?: number;
  limits: EgressConnectionLimits;
  openFiles?: OpenFiles;
  /** Hands a connection that has sent its first bytes to the proxy (they are read again there). */
  admit: (socket: net.Socket) => void;
}

export function checkEgressConnectionLimits(limits: EgressConnectionLimits): EgressConnectionLimits {
  if (!Number.isInteger(limits.perSession) || limits.perSession < 1) {
    throw new Error(`egress.connections.perSession must be a whole number, at least 1 (was ${limits.perSession})`);
  }
  if (!Number.isFinite(limits.firstBytesMs) || limits.firstBytesMs < 100) {
    throw new Error(`egress.connections.firstBytesMs must be at least 100 ms (was ${limits.firstBytesMs})`);
  }
  return limits;
}

export async function openEgressGate(options: EgressGateOptions): Promise<EgressGate> {
  const { limits, openFiles, admit } = options;
  checkEgressConnectionLimits(limits);
  const sockets = new Set<net.Socket>();
  const counts: EgressGateCounts = { open: 0, refused: 0, silent: 0 };
  const onUnixSocket = options.socketPath !== undefined;

  const server = net.createServer((socket) => {
    socket.on('error', () => undefined);
    if (sockets.size >= limits.perSession || (openFiles && !openFiles.take(FILES_PER_EGRESS_CONNECTION, 'egress'))) {
      counts.refused += 1;
      socket.destroy();
      return;
    }
    sockets.add(socket);
    counts.open = sockets.size;
    const silence = setTimeout(() => {
      counts.silent += 1;
      socket.destroy();
    }, limits.firstBytesMs);
    socket.once('close', () => {
      clearTimeout(silence);
      sockets.delete(socket);
      counts.open = sockets.size;
      openFiles?.give(FILES_PER_EGRESS_CONNECTION);
    });
    // The proxy reads the request from the start: the first bytes go back before it gets the socket.
    socket.once('data', (first: Buffer) => {
      clearTimeout(silence);
      socket.pause();
      socket.unshift(first);
      // proxy-chain drops a connection that has no peer address, which a unix socket never has:
      // the relay in the session's own loopback is the peer.
      if (onUnixSocket) Object.defineProperty(socket, 'remoteAddress', { value: '127.0.0.1' });
      admit(socket);
      process.nextTick(() => socket.resume());
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const listening = () => {
      server.off('error', reject);
      resolve();
    };
    if (options.socketPath !== undefined) server.listen(options.socketPath, listening);
    else server.listen(0, '127.0.0.1', listening);
  });
  // An unheard 'error' on the listening server would end the whole engine, not just this session.
  server.on('error', () => undefined);
  if (options.socketPath !== undefined) {
    await chmod(options.socketPath, 0o600);
    if (options.socketOwner !== undefined) await chown(options.socketPath, options.socketOwner, options.socketOwner);
  }
  const address = server.address();
  let closing: Promise<void> | undefined;
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    counts: () => ({ ...counts }),
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}
