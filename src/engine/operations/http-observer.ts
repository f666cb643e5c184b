// What every HTTP request of the engine leaves behind (decisions.md 60): a request id (the
// caller's `X-Request-Id` when it is a plain token, else a new one; sent back in the answer),
// a logger bound to it, one count and one latency of its route template, and a debug line.
// Routes are templates (`/v8/vm/data`, `/share/:link/events`): never an id, a link or a query.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseShareApiPath } from '../../protocol/index.js';
import type { Logger } from './logger.js';
import type { EngineMetrics } from './metrics.js';

const API_ROUTES = new Set(['image', 'openapi.json', 'vm/create', 'vm/data', 'vm/remove', 'vm/automation', 'user/api', 'user/quota', 'user/webhook']);
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const SHARE_PAGE = /^\/(?:[A-Za-z-]{1,10}\/)?s$/;

/** The route template of a path, for labels and log lines. */
export function routeOf(pathname: string): string {
  const api = /^\/(v8|v7)\/(.+)$/.exec(pathname);
  if (api) return API_ROUTES.has(api[2]!) ? pathname : `/${api[1]}/unknown`;
  if (pathname.startsWith('/api/v6/')) return `/api/v6/${pathname.slice(8).split('/')[0]!.replace(/[^a-z]/gi, '').slice(0, 20) || 'unknown'}`;
  if (pathname === '/b') return '/b';
  const share = parseShareApiPath(pathname);
  if (share) return share.route === 'state' ? '/share/:link' : `/share/:link/${share.route}`;
  if (pathname.startsWith('/internal/v1/')) return '/internal/v1/sessions';
  if (pathname.startsWith('/automation/')) return '/automation/:token';
  if (SHARE_PAGE.test(pathname)) return '/:lang/s';
  if (pathname.startsWith('/assets/')) return '/assets';
  if (pathname === '/' || pathname === '/healthz' || pathname === '/readyz' || pathname === '/metrics' || pathname === '/favicon.ico') return pathname;
  return 'unmatched';
}

/** The caller's request id when it is a plain token, else a new one. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomBytes(8).toString('hex');
}

/**
 * Starts observing one request: sets `X-Request-Id` on the answer and answers the request's
 * logger; counts and times the request when its answer ends.
 */
export function observeRequest(request: IncomingMessage, response: ServerResponse, pathname: string, logger: Logger, metrics: EngineMetrics | null): Logger {
  const reqId = requestIdOf(request);
  response.setHeader('x-request-id', reqId);
  const log = logger.child({ reqId });
  const started = process.hrtime.bigint();
  response.once('close', () => {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const route = routeOf(pathname);
    const method = request.method ?? 'GET';
    const status = response.headersSent ? response.statusCode : 0;
    if (metrics) {
      metrics.httpRequests.inc({ route, method, status: String(status) });
      metrics.httpSeconds.observe({ route, method }, seconds);
    }
    if (log.isLevelEnabled('debug')) log.debug({ method, route, status, ms: Math.round(seconds * 10_000) / 10 }, 'request');
  });
  return log;
}
