// What every HTTP request of the engine leaves behind (decisions.md 60): a request id (the
// caller's `X-Request-Id` when it is a plain token, else a new one; sent back in the answer),
// a logger bound to it, one count and one time to answer of its route template
// (http-answers.ts), and a debug line.
// Routes are templates (`/v8/vm/data`, `/share/:link/events`): never an id, a link or a query.
import { randomBytes } from 'node:crypto';
import { subscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseShareApiPath } from '../../protocol/index.js';
import type { Logger } from './logger.js';
import type { EngineMetrics } from './metrics.js';

const API_ROUTES = new Set(['image', 'openapi.json', 'vm/create', 'vm/data', 'vm/remove', 'vm/automation', 'user/api', 'user/quota', 'user/webhook']);
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const SHARE_PAGE = /^\/(?:[A-Za-z-]{1,10}\/)?s$/;

/**
 * The route template of a path, for labels and log lines. A held read of a starting session
 * (`vm/data?wait=`, decisions.md 82) is a route of its own: its time is the session's start, and
 * it would otherwise swamp the status reads' latency that operators alert on.
 */
export function routeOf(pathname: string, query?: URLSearchParams): string {
  const api = /^\/(v8|v7)\/(.+)$/.exec(pathname);
  if (api?.[1] === 'v8' && api[2] === 'vm/data' && /^[1-9]\d*$/.test(query?.get('wait') ?? '')) return `${pathname}?wait`;
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

// Made ids: a random prefix per process and a counter (unique per node, cheaper than random bytes per request).
const ID_PREFIX = randomBytes(4).toString('hex');
let made = 0;

/** The caller's request id when it is a plain token, else a new one. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : `${ID_PREFIX}${(++made).toString(16).padStart(8, '0')}`;
}

/** What the handlers get of a request's observation: its id, and its logger (made only when asked for). */
export interface RequestLog {
  readonly reqId: string;
  log(): Logger;
}

/** What an answer carries until it is sent: when its request came, and where to count it. */
interface Observation {
  readonly started: number;
  readonly pathname: string;
  readonly query: URLSearchParams | undefined;
  readonly method: string;
  readonly metrics: EngineMetrics | null;
  readonly debug: boolean;
  readonly observed: RequestLog;
}
const OBSERVATION = Symbol('rbk.observation');
type ObservedResponse = ServerResponse & { [OBSERVATION]?: Observation };

/**
 * Counts, times and (at debug) logs one answer once it is sent. Node publishes every answer's end
 * on its `http.server.response.finish` channel: one subscriber for the process, rather than a
 * 'close' listener on each answer (docs/benchmarks.md, "Metrics and logs on against off"). An
 * answer whose caller left before it was sent is not counted: the metric counts answers.
 */
function answered({ response }: { response: ObservedResponse }): void {
  const observation = response[OBSERVATION];
  if (!observation) return;
  response[OBSERVATION] = undefined;
  const seconds = (performance.now() - observation.started) / 1000;
  const route = routeOf(observation.pathname, observation.query);
  const { method, metrics } = observation;
  metrics?.http.add(route, method, response.statusCode, seconds);
  if (observation.debug) observation.observed.log().debug({ method, route, status: response.statusCode, ms: Math.round(seconds * 10_000) / 10 }, 'request');
}
subscribe('http.server.response.finish', answered as (message: unknown) => void);

/**
 * Starts observing one request: sets `X-Request-Id` on the answer and answers the request's
 * logger; the answer is counted and timed once it has been sent.
 */
export function observeRequest(request: IncomingMessage, response: ServerResponse, pathname: string, logger: Logger, metrics: EngineMetrics | null, query?: URLSearchParams): RequestLog {
  const reqId = requestIdOf(request);
  response.setHeader('x-request-id', reqId);
  let child: Logger | undefined;
  const observed: RequestLog = { reqId, log: () => (child ??= logger.child({ reqId })) };
  const debug = logger.isLevelEnabled('debug');
  if (!metrics && !debug) return observed;
  (response as ObservedResponse)[OBSERVATION] = { started: performance.now(), pathname, query, method: request.method ?? 'GET', metrics, debug, observed };
  return observed;
}
