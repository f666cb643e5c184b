// `npm run bench -- proxy`: what the proxy route adds to a request. The same reads (GET usage,
// read one session) go through the route and straight to the engine, interleaved in one run.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../src/engine/engine.js';
import { toNodeHandler } from '../src/server/adapters/node.js';
import { createProxyRoute, createServiceClient, engineService, type RemoteBrowserService } from '../src/server/index.js';
import { percentile, report } from './stats.js';

const samples = Number(process.env.RBK_BENCH_SAMPLES ?? 2000);
const WARMUP = 200;

type Timed = () => Promise<void>;

async function timed(work: Timed): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** Runs each pair in random order, `samples` times, and keeps both sides' times. */
async function interleave(pairs: Array<{ via: Timed; direct: Timed }>): Promise<{ via: number[]; direct: number[] }> {
  const via: number[] = [];
  const direct: number[] = [];
  for (let i = 0; i < WARMUP + samples; i++) {
    const pair = pairs[i % pairs.length]!;
    const first = Math.random() < 0.5;
    const a = await timed(first ? pair.via : pair.direct);
    const b = await timed(first ? pair.direct : pair.via);
    if (i < WARMUP) continue;
    via.push(first ? a : b);
    direct.push(first ? b : a);
  }
  return { via, direct };
}

function expectOk(response: Response, what: string): Promise<void> {
  if (response.status !== 200) throw new Error(`${what} answered HTTP ${response.status}`);
  return response.arrayBuffer().then(() => undefined);
}

export async function proxyBench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'rbk-proxy-bench-'));
  const engine = await createEngine({
    dataDir: dir,
    port: 0,
    config: {
      plans: [{ id: 'bench', name: 'Bench', running_session_limit: 5, cycle_session_limit: null, residential_cycle_mb_limit: null, location_access: false, programmatic_access: true, max_session_minutes: 60, idle_timeout_minutes: 60 }],
      rateLimit: { requests: 1_000_000_000, perSeconds: 1 },
      shareBase: 'https://share.example.test',
    },
  });
  const { account, apiKey } = await engine.accounts.create({ contact: 'bench@example.com', plans: ['bench'] });
  const key = apiKey.key;
  const secret = 'proxy-bench-secret-0123456789abcdef0123';
  const routeFor = (service: RemoteBrowserService) =>
    createProxyRoute({ service, authorize: () => ({ id: 'bench-user' }), secret, policy: { usage: () => true }, rateLimit: { requests: 1_000_000_000, creates: 10 } });
  const overHttp = routeFor(createServiceClient({ baseUrl: engine.url, apiKey: key }));
  const inProcess = routeFor(engineService(engine, { apiKey: key }));
  const handler = toNodeHandler(overHttp);
  const server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const routeUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/remote-browser`;

  try {
    // One session to read; it is ended at once (reading an ended session is the same work).
    const created = await overHttp(new Request('http://app.test/api/remote-browser/sessions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ browser: 'chromium' }) }));
    const { handle } = (await created.json()) as { handle: string };
    if (created.status !== 200) throw new Error(`create answered HTTP ${created.status}`);
    const sessionId = (await engine.store.sessionsOf(account.id, 0, 1))[0]!.id;
    await overHttp(new Request(`http://app.test/api/remote-browser/sessions/${handle}`, { method: 'DELETE', headers: { 'content-type': 'application/json' } }));

    const auth = { authorization: `Bearer ${key}` };
    const engineGet = (path: string) => () => fetch(`${engine.url}/v8/${path}`, { headers: auth }).then((r) => expectOk(r, path));
    const routeCall = (route: typeof overHttp, path: string) => () => route(new Request(`http://app.test/api/remote-browser/${path}`)).then((r) => expectOk(r, path));
    const engineFetch = (path: string) => () => engine.fetch(new Request(`http://engine/v8/${path}`, { headers: auth })).then((r) => expectOk(r, path));
    const httpRoute = (path: string) => () => fetch(`${routeUrl}/${path}`).then((r) => expectOk(r, path));

    // 1. The route called in-process, its service over HTTP, against a direct HTTP call.
    const handled = await interleave([
      { via: routeCall(overHttp, 'usage'), direct: engineGet('user/quota') },
      { via: routeCall(overHttp, `sessions/${handle}`), direct: engineGet(`vm/data?id=${sessionId}`) },
    ]);
    const overhead = (p: number) => percentile(handled.via, p) - percentile(handled.direct, p);
    report('proxy', 'proxy_overhead_ms_p50', overhead(50), 'ms', { samples, requests: 'GET usage, read session', via: 'route handler, upstream over HTTP', target: '<= 1' });
    report('proxy', 'proxy_overhead_ms_p99', overhead(99), 'ms', { samples });
    report('proxy', 'route_ms_p50', percentile(handled.via, 50), 'ms', { samples });
    report('proxy', 'engine_direct_ms_p50', percentile(handled.direct, 50), 'ms', { samples });

    // 2. As a browser sees it: the route behind node:http against the engine's own HTTP server.
    const served = await interleave([
      { via: httpRoute('usage'), direct: engineGet('user/quota') },
      { via: httpRoute(`sessions/${handle}`), direct: engineGet(`vm/data?id=${sessionId}`) },
    ]);
    report('proxy', 'proxy_http_overhead_ms_p50', percentile(served.via, 50) - percentile(served.direct, 50), 'ms', { samples, via: 'node:http adapter, upstream over HTTP: one more HTTP hop' });
    report('proxy', 'proxy_http_overhead_ms_p99', percentile(served.via, 99) - percentile(served.direct, 99), 'ms', { samples });

    // 3. The engine in this process (engineService): no socket on either side.
    const local = await interleave([
      { via: routeCall(inProcess, 'usage'), direct: engineFetch('user/quota') },
      { via: routeCall(inProcess, `sessions/${handle}`), direct: engineFetch(`vm/data?id=${sessionId}`) },
    ]);
    report('proxy', 'proxy_inprocess_overhead_ms_p50', percentile(local.via, 50) - percentile(local.direct, 50), 'ms', { samples, via: 'route handler, engineService (engine.fetch)' });
    report('proxy', 'proxy_inprocess_overhead_ms_p99', percentile(local.via, 99) - percentile(local.direct, 99), 'ms', { samples });
    report('proxy', 'route_inprocess_ms_p50', percentile(local.via, 50), 'ms', { samples, note: 'the whole request, engine work included, no socket' });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await engine.close();
    await rm(dir, { recursive: true, force: true });
  }
}
