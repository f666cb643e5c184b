// createEngine(): the session service in one object: the session runtime (displays, browsers,
// egress routes) behind the HTTP interface. `remote-browser-kit serve` runs the same thing.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { ImageListResponse } from '../protocol/index.js';
import { sendJson } from './http/respond.js';
import { SessionRuntime, type ReapReport, type WarmPoolOptions } from './runtime/runtime.js';

export interface EngineOptions {
  /** Data directory: session directories (and, later, the database) live here. Default `.data`. */
  dataDir?: string;
  host?: string;
  /** 0 picks a free port. Default 8640. */
  port?: number;
  /** CIDR ranges the remote browsers may reach although private (decisions.md 25). Default none. */
  egressAllow?: string[];
  warm?: WarmPoolOptions;
}

export interface Engine {
  readonly url: string;
  readonly runtime: SessionRuntime;
  readonly reaped: ReapReport;
  close(): Promise<void>;
}

export async function createEngine(options: EngineOptions = {}): Promise<Engine> {
  const dataDir = resolve(options.dataDir ?? '.data');
  const { runtime, reaped } = await SessionRuntime.open({
    root: join(dataDir, 'sessions'),
    egress: { allow: options.egressAllow ?? [] },
    ...(options.warm ? { warm: options.warm } : {}),
  });

  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://engine');
    if (request.method === 'GET' && url.pathname === '/v8/image') {
      const body: ImageListResponse = {
        status: 'ok',
        images: runtime.images.map((image) => ({ id: image.id, name: image.name, enabled: image.enabled })),
        vpnLocations: [],
        residential: { configured: false, countries: null },
      };
      return sendJson(response, body);
    }
    if (request.method === 'GET' && url.pathname === '/healthz') {
      return sendJson(response, { status: 'ok', sessions: runtime.list().length, warm: runtime.warmCount() });
    }
    sendJson(response, { status: 'denied', message: `no endpoint ${request.method} ${url.pathname}` }, 404);
  };

  const server = createServer((request, response) => {
    try {
      handle(request, response);
    } catch {
      if (!response.headersSent) sendJson(response, { status: 'error', message: 'the service failed; try again later' });
    }
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8640, options.host ?? '127.0.0.1', () => resolveListen());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    runtime,
    reaped,
    async close() {
      await new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
      await runtime.close();
    },
  };
}
