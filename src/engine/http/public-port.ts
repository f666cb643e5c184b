// The engine's public port on node:http: every request and every WebSocket upgrade, each inside a
// catch of its own, so that nothing a client sends reaches the process (decisions.md 78). What
// answers a request (the API, the share API, the viewer site, the probes) and who takes an upgrade
// (the node link, the share API's channels, automation) are engine.ts's to wire.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { requestTargetUrl } from '../../http/request-target.js';
import { observeRequest, type RequestLog } from '../operations/http-observer.js';
import type { Logger } from '../operations/logger.js';
import type { EngineMetrics } from '../operations/metrics.js';
import { databaseFailureKind, serviceFailure } from './failure.js';
import { sendJson } from './respond.js';

/** Answers a request whose target parsed; throws only for the service's own failures. */
export type RequestHandler = (request: IncomingMessage, response: ServerResponse, url: URL, observed: RequestLog) => Promise<void>;

/** Takes an upgrade (true) or leaves it to the next (false). */
export type UpgradeTaker = (request: IncomingMessage, socket: Duplex, head: Buffer, url: URL) => boolean | Promise<boolean>;

export interface PublicPortOptions {
  handle: RequestHandler;
  /** Asked in order; an upgrade none takes is refused with 404. */
  upgrades: UpgradeTaker[];
  logger: Logger;
  metrics: EngineMetrics | null;
}

/** A WebSocket upgrade that no endpoint takes is refused in HTTP, as the share API refuses an unknown link. */
const NO_ENDPOINT = 'HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\nNot Found';

/** A request that failed on the service's side: counted by its database condition, logged under its request id. */
export function requestFailed(error: unknown, log: Logger, metrics: EngineMetrics | null): void {
  const kind = databaseFailureKind(error);
  if (kind) metrics?.storeErrors.inc({ kind });
  log.error({ err: error, ...(kind ? { database: kind } : {}) }, 'request failed');
}

export function createPublicPort(options: PublicPortOptions): Server {
  const { logger, metrics } = options;
  const server = createServer((request, response) => {
    const url = requestTargetUrl(request.url, 'http://engine');
    const observed = observeRequest(request, response, url?.pathname ?? '', logger, metrics, url?.searchParams);
    if (!url) return sendJson(response, { status: 'denied', message: `no endpoint ${request.method} ${String(request.url).slice(0, 100)}` }, 404);
    options.handle(request, response, url, observed).catch((error: unknown) => {
      requestFailed(error, observed.log(), metrics);
      if (!response.headersSent) sendJson(response, serviceFailure(error));
      else response.destroy();
    });
  });
  // Malformed HTTP and request heads over 16 KiB get Node's own answer (400, 431), then the
  // connection closes: no 'clientError' handler of ours drops them unanswered.
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined);
    const upgrade = async () => {
      const url = requestTargetUrl(request.url, 'http://engine');
      if (!url) return void socket.end(NO_ENDPOINT);
      for (const take of options.upgrades) if (await take(request, socket, head, url)) return;
      socket.end(NO_ENDPOINT);
    };
    upgrade().catch((error: unknown) => {
      logger.warn({ err: error, path: String(request.url).slice(0, 100) }, 'upgrade failed');
      socket.destroy();
    });
  });
  return server;
}
