// `/readyz` and `/healthz` (decisions.md 60), and the operator listener that serves them with
// `/metrics` on an address of its own (loopback by default). /healthz says the process answers;
// /readyz says whether this node can take sessions: its database takes a write now, its runtime
// can start a browser, and it is neither draining nor declared lost. A load balancer stops
// sending work to a node whose /readyz answers 503, and keeps the node's running sessions.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendJson } from './respond.js';
import type { Logger } from '../operations/logger.js';
import type { EngineMetrics } from '../operations/metrics.js';

export interface ReadinessSources {
  nodeId: string;
  /** Resolves when the database takes a write within the time given (store.probeWrite). */
  probeStore(timeoutMs: number): Promise<void>;
  /** Browsers this node can start. */
  browsers(): string[];
  /** This node's state in the store: active, draining, lost (undefined: not registered). */
  nodeState(): Promise<string | undefined>;
  /** Facts /healthz adds: this node's active sessions and warm pool. */
  health(): Promise<Record<string, unknown>>;
}

/** How long /readyz waits for the database: a load balancer's probe times out after a few seconds. */
const STORE_PROBE_MS = 1000;

export interface Readiness {
  ready: boolean;
  checks: { store: string; runtime: string; node: string };
}

export async function readiness(sources: ReadinessSources): Promise<Readiness> {
  const store = await sources.probeStore(STORE_PROBE_MS).then(
    () => 'ok',
    (error: Error) => `the database takes no writes: ${(error as { code?: string }).code ?? error.message}`,
  );
  const browsers = sources.browsers();
  const runtime = browsers.length > 0 ? 'ok' : 'no browser can start on this host (remote-browser-kit doctor)';
  // The node's state is read only when the database answers: otherwise it is the store's failure.
  const state = store === 'ok' ? await sources.nodeState().catch(() => undefined) : undefined;
  const node = store !== 'ok' ? 'unknown' : state === 'active' ? 'ok' : state === undefined ? 'not registered' : state;
  return { ready: store === 'ok' && runtime === 'ok' && node === 'ok', checks: { store, runtime, node } };
}

/** The probes by path: each answer's body and HTTP status. */
const PROBES = new Map<string, (sources: ReadinessSources) => Promise<[body: unknown, status: number]>>([
  ['/healthz', async (sources) => [{ status: 'ok', node: sources.nodeId, ...(await sources.health()) }, 200]],
  ['/readyz', async (sources) => {
    const answer = await readiness(sources);
    return [{ status: answer.ready ? 'ok' : 'error', node: sources.nodeId, checks: answer.checks }, answer.ready ? 200 : 503];
  }],
]);

/** Answers /healthz and /readyz; false for other paths. */
export async function answerProbe(request: IncomingMessage, response: ServerResponse, pathname: string, sources: ReadinessSources): Promise<boolean> {
  const probe = PROBES.get(pathname);
  if (!probe || (request.method !== 'GET' && request.method !== 'HEAD')) return false;
  const [body, status] = await probe(sources);
  sendJson(response, body, status);
  return true;
}

export interface OperatorListener {
  readonly url: string;
  close(): Promise<void>;
}

/** The operator listener: /metrics (Prometheus text), /readyz, /healthz; nothing else. */
export async function startOperatorListener(options: { host: string; port: number; metrics: EngineMetrics; sources: ReadinessSources; logger: Logger }): Promise<OperatorListener> {
  const { metrics, sources, logger } = options;
  const server: Server = createServer((request, response) => {
    const pathname = (request.url ?? '/').split('?')[0]!;
    const answer = async () => {
      if (await answerProbe(request, response, pathname, sources)) return;
      if (request.method === 'GET' && pathname === '/metrics') {
        const text = await metrics.text();
        response.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
        response.end(text);
        return;
      }
      sendJson(response, { status: 'denied', message: 'the operator listener serves GET /metrics, /readyz and /healthz only' }, 404);
    };
    answer().catch((error: unknown) => {
      logger.warn({ err: error, path: pathname }, 'operator listener request failed');
      if (!response.headersSent) sendJson(response, { status: 'error', message: 'the metrics could not be read' }, 500);
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`operator listener: cannot listen on ${options.host}:${options.port} (${error.code ?? error.message}); set operator.port (or operator.metrics: false)`)));
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.address.includes(':') ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
