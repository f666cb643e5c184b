// Each adapter with a real server of its framework on 127.0.0.1, driven over HTTP: node:http,
// Express, Hono (@hono/node-server) and a real Next.js app (next dev) whose route handler
// imports the adapter. The route behind them talks to a real engine.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, type ServerType } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageListResponseSchema, userQuotaResponseSchema } from '../../src/protocol/index.js';
import { toExpressHandler } from '../../src/server/adapters/express.js';
import { toHonoHandler } from '../../src/server/adapters/hono.js';
import { toNodeHandler } from '../../src/server/adapters/node.js';
import { createProxyRoute, engineService, proxyCreateResponseSchema, proxySessionResponseSchema, type ProxyRoute } from '../../src/server/index.js';
import { BASE_PATH, Exposure, poll, SECRET, startTestEngine, type TestEngine } from './fixtures.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let t: TestEngine;
let key: string;
const exposure = new Exposure();
const reported: unknown[] = [];

/** The end user comes from a cookie, as a host app's session would. */
function userOf(request: Request): { id: string } | null {
  const match = /(?:^|;\s*)user=([^;]+)/.exec(request.headers.get('cookie') ?? '');
  return match ? { id: match[1]! } : null;
}

function makeRoute(): ProxyRoute {
  return createProxyRoute({ service: engineService(t.engine, { apiKey: key }), authorize: userOf, secret: SECRET, policy: { usage: () => true }, onError: (e) => reported.push(e) });
}

async function call(origin: string, method: string, path: string, options: { body?: string; headers?: Record<string, string>; user?: string | null; timeoutMs?: number } = {}) {
  const headers: Record<string, string> = { origin, ...options.headers };
  if (options.user !== null) headers.cookie = `user=${options.user ?? 'alice'}`;
  const response = await fetch(`${origin}${path}`, { method, headers, ...(options.body === undefined ? {} : { body: options.body }), signal: AbortSignal.timeout(options.timeoutMs ?? 30_000) });
  return exposure.record(response);
}

/** What every adapter must carry: list, launch, read, refuse, end, meter. One real session. */
async function exercise(origin: string, base = BASE_PATH): Promise<void> {
  const json = { 'content-type': 'application/json' };
  const images = await call(origin, 'GET', `${base}/images`);
  expect(images.status, images.text).toBe(200);
  expect(imageListResponseSchema.parse(images.json).images.length).toBeGreaterThan(0);
  expect(images.headers['content-type']).toMatch(/^application\/json/);
  expect(images.headers['cache-control']).toBe('no-store');

  const created = await call(origin, 'POST', `${base}/sessions`, { headers: { ...json, 'idempotency-key': `k-${Math.random()}` }, body: JSON.stringify({ browser: 'chromium', url: t.pageUrl }) });
  expect(created.status, created.text).toBe(200);
  const { handle } = proxyCreateResponseSchema.parse(created.json);
  const read = await poll(() => call(origin, 'GET', `${base}/sessions/${handle}`), (seen) => seen.json?.session?.status !== 'starting');
  expect(proxySessionResponseSchema.parse(read.json).session.status).toBe('running');

  expect((await call(origin, 'GET', `${base}/sessions/${handle}`, { user: 'mallory' })).status).toBe(404);
  const crossSite = await call(origin, 'DELETE', `${base}/sessions/${handle}`, { headers: { ...json, origin: 'https://evil.example' } });
  expect(crossSite.status).toBe(403);
  expect(crossSite.json.reason).toBe('cross_site');
  expect((await call(origin, 'POST', `${base}/sessions`, { headers: { 'content-type': 'text/plain' }, body: '{"browser":"chromium"}' })).status).toBe(415);
  expect((await call(origin, 'GET', `${base}/usage`, { user: null })).status).toBe(401);

  const ended = await call(origin, 'DELETE', `${base}/sessions/${handle}`, { headers: json });
  expect(ended.status, ended.text).toBe(200);
  const gone = await poll(() => call(origin, 'GET', `${base}/sessions/${handle}`), (seen) => seen.json?.session?.status === 'deleted');
  expect(gone.json.session.status).toBe('deleted');
  const usage = await call(origin, 'GET', `${base}/usage`);
  expect(userQuotaResponseSchema.parse(usage.json).status).toBe('ok');
}

function listen(server: Server | ServerType): Promise<string> {
  return new Promise((resolve) => {
    const ready = () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    if (server.listening) ready();
    else server.once('listening', ready);
  });
}

async function close(server: Server | ServerType | undefined): Promise<void> {
  if (!server) return;
  (server as Server).closeAllConnections?.();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

beforeAll(async () => {
  t = await startTestEngine();
  key = (await t.key('std')).key;
});
afterAll(async () => {
  await t?.close();
});

describe('node:http', () => {
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    const handler = toNodeHandler(makeRoute());
    server = createServer((req, res) => void handler(req, res));
    server.listen(0, '127.0.0.1');
    origin = await listen(server);
  });
  afterAll(() => close(server));

  it('carries the whole flow', async () => {
    await exercise(origin);
  });

  it('caps the body, declared or streamed', async () => {
    const big = JSON.stringify({ browser: 'chromium', url: `https://example.com/${'a'.repeat(100_000)}` });
    const declared = await call(origin, 'POST', `${BASE_PATH}/sessions`, { headers: { 'content-type': 'application/json' }, body: big });
    expect(declared.status).toBe(413);
    expect(declared.json).toMatchObject({ status: 'denied', message: expect.stringMatching(/larger than 64 KiB/) });
    const streamed = await exposure.record(await fetch(`${origin}${BASE_PATH}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: 'user=alice' },
      body: new Blob([big]).stream(),
      duplex: 'half',
    } as RequestInit));
    expect(streamed.status).toBe(413);
  });

  it('uses the scheme and host a proxy in front reports for the origin check', async () => {
    const headers = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.example.com' };
    const viaProxy = await exposure.record(await fetch(`${origin}${BASE_PATH}/images`, { headers: { ...headers, origin: 'https://app.example.com', cookie: 'user=alice' } }));
    expect(viaProxy.status).toBe(200);
    const direct = await exposure.record(await fetch(`${origin}${BASE_PATH}/images`, { headers: { origin: 'https://app.example.com', cookie: 'user=alice' } }));
    expect(direct.status).toBe(403);
  });

  it('aborts the route when the client goes away, streams with back-pressure and keeps every Set-Cookie', async () => {
    let aborted = false;
    let pulled = 0;
    const CHUNK = 1 << 20;
    const TOTAL = 64;
    const probe = Object.assign(async (request: Request) => {
      const path = new URL(request.url).pathname;
      if (path === '/probe/wait') {
        await new Promise<void>((resolve) => request.signal.addEventListener('abort', () => resolve()));
        aborted = true;
        return new Response('late');
      }
      const headers = new Headers({ 'content-type': 'application/octet-stream' });
      headers.append('set-cookie', 'a=1; Path=/');
      headers.append('set-cookie', 'b=2; Path=/');
      return new Response(new ReadableStream({
        pull(controller) {
          if (pulled === TOTAL) return controller.close();
          pulled++;
          controller.enqueue(new Uint8Array(CHUNK).fill(pulled));
        },
      }, { highWaterMark: 0 }), { headers });
    }, { basePath: '/probe' }) as ProxyRoute;
    const handler = toNodeHandler(probe);
    const probeServer = createServer((req, res) => void handler(req, res));
    probeServer.listen(0, '127.0.0.1');
    const probeOrigin = await listen(probeServer);
    try {
      const waiting = httpRequest(`${probeOrigin}/probe/wait`);
      waiting.on('error', () => undefined);
      waiting.end();
      await new Promise((resolve) => setTimeout(resolve, 200));
      waiting.destroy();
      expect(await poll(async () => aborted, (a) => a, 5_000)).toBe(true);

      const { received, cookies, pulledWhilePaused } = await new Promise<{ received: number; cookies: string[]; pulledWhilePaused: number }>((resolve, reject) => {
        httpRequest(`${probeOrigin}/probe/stream`, (response) => {
          response.pause();
          setTimeout(() => {
            const pulledWhilePaused = pulled;
            let received = 0;
            response.on('data', (chunk: Buffer) => (received += chunk.length));
            response.on('end', () => resolve({ received, cookies: response.headers['set-cookie'] ?? [], pulledWhilePaused }));
            response.resume();
          }, 500);
        }).on('error', reject).end();
      });
      expect(received).toBe(CHUNK * TOTAL);
      // While the client read nothing, the adapter stopped pulling: socket buffers hold a few MiB, not 64.
      expect(pulledWhilePaused).toBeLessThan(TOTAL / 2);
      expect(cookies).toEqual(['a=1; Path=/', 'b=2; Path=/']);
    } finally {
      await close(probeServer);
    }
  });
});

describe('Express', () => {
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    const app = express();
    app.use(express.json());
    app.use(express.urlencoded({ extended: false }));
    app.use(toExpressHandler(makeRoute()));
    app.get('/other', (_, res) => void res.send('other'));
    // Mounted under its base path too: Express strips the prefix from req.url, not from originalUrl.
    const mounted = express();
    mounted.use(express.json());
    mounted.use(BASE_PATH, toExpressHandler(makeRoute()));
    server = createServer(app);
    server.listen(0, '127.0.0.1');
    origin = await listen(server);
    mountedServer = createServer(mounted);
    mountedServer.listen(0, '127.0.0.1');
    mountedOrigin = await listen(mountedServer);
  });
  let mountedServer: Server;
  let mountedOrigin: string;
  afterAll(async () => {
    await close(server);
    await close(mountedServer);
  });

  it('carries the whole flow with bodies express.json() already parsed', async () => {
    await exercise(origin);
  });

  it('passes other paths on, and refuses a form that express.urlencoded() parsed', async () => {
    const other = await call(origin, 'GET', '/other');
    expect(other.text).toBe('other');
    const form = await call(origin, 'POST', `${BASE_PATH}/sessions`, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'browser=chromium' });
    expect(form.status).toBe(415);
    expect(form.json.reason).toBe('content_type');
  });

  it('works mounted under its base path', async () => {
    const images = await call(mountedOrigin, 'GET', `${BASE_PATH}/images`);
    expect(images.status, images.text).toBe(200);
    const invalid = await call(mountedOrigin, 'POST', `${BASE_PATH}/sessions`, { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ browser: 'chromium', url: 'file:///etc/passwd' }) });
    expect(invalid.status).toBe(400);
    expect(invalid.json.message).toMatch(/^url: /);
  });
});

describe('Hono', () => {
  let server: ServerType;
  let origin: string;
  let middlewareServer: ServerType;
  let middlewareOrigin: string;
  beforeAll(async () => {
    const app = new Hono();
    app.all(`${BASE_PATH}/*`, toHonoHandler(makeRoute()));
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    origin = await listen(server);
    const withMiddleware = new Hono();
    withMiddleware.use(toHonoHandler(makeRoute()));
    withMiddleware.get('/other', (c) => c.text('other'));
    middlewareServer = serve({ fetch: withMiddleware.fetch, port: 0, hostname: '127.0.0.1' });
    middlewareOrigin = await listen(middlewareServer);
  });
  afterAll(async () => {
    await close(server);
    await close(middlewareServer);
  });

  it('carries the whole flow as a handler', async () => {
    await exercise(origin);
  });

  it('as middleware, answers its paths and passes the others on', async () => {
    expect((await call(middlewareOrigin, 'GET', `${BASE_PATH}/images`)).status).toBe(200);
    expect((await call(middlewareOrigin, 'GET', '/other')).text).toBe('other');
  });
});

describe('Next.js App Router (next dev)', () => {
  let dir: string;
  let next: ChildProcess | undefined;
  let origin: string;
  let output = '';

  beforeAll(async () => {
    // Inside the package so the app resolves `next` and the sources; removed afterwards.
    dir = join(ROOT, `.next-adapter-test-${process.pid}`);
    const routeDir = join(dir, 'app', 'api', 'remote-browser', '[...path]');
    await mkdir(routeDir, { recursive: true });
    await writeFile(join(routeDir, 'route.ts'), `// The proxy route as a customer mounts it in a Next.js app.
import { toNextHandler } from '../../../../../src/server/adapters/next.js';
import { createProxyRoute, createServiceClient } from '../../../../../src/server/index.js';

const route = createProxyRoute({
  // The key and the secret come from the environment (REMOTE_BROWSER_API_KEY, REMOTE_BROWSER_SECRET).
  service: createServiceClient({ baseUrl: process.env.RBK_TEST_ENGINE_URL! }),
  authorize: (request) => {
    const match = /(?:^|;\\s*)user=([^;]+)/.exec(request.headers.get('cookie') ?? '');
    return match ? { id: match[1]! } : null;
  },
  policy: { usage: () => true },
});

export const { GET, POST, DELETE } = toNextHandler(route);
`);
    await writeFile(join(dir, 'app', 'layout.tsx'), 'export default function Layout({ children }: { children: React.ReactNode }) {\n  return <html><body>{children}</body></html>;\n}\n');
    // Turbopack does not map NodeNext-style \`.js\` specifiers onto the \`.ts\` sources; webpack does.
    await writeFile(join(dir, 'next.config.mjs'), "export default { webpack: (config) => { config.resolve.extensionAlias = { '.js': ['.ts', '.js'] }; return config; } };\n");
    next = spawn(process.execPath, [join(ROOT, 'node_modules/next/dist/bin/next'), 'dev', '--webpack', '-p', '0', '-H', '127.0.0.1'], {
      cwd: dir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', RBK_TEST_ENGINE_URL: t.engine.url, REMOTE_BROWSER_API_KEY: key, REMOTE_BROWSER_SECRET: SECRET },
    });
    origin = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`next dev did not start within 60 s:\n${output}`)), 60_000);
      const read = (chunk: Buffer) => {
        output = (output + chunk.toString()).slice(-20_000);
        const match = /Local:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      };
      next!.stdout!.on('data', read);
      next!.stderr!.on('data', read);
      next!.once('exit', (code) => reject(new Error(`next dev exited (${code}):\n${output}`)));
    });
  }, 90_000);

  afterAll(async () => {
    if (next?.pid && next.exitCode === null) {
      const exited = new Promise((resolve) => next!.once('exit', resolve));
      process.kill(-next.pid, 'SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      if (next.exitCode === null) process.kill(-next.pid, 'SIGKILL');
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('carries the whole flow through a real route handler', async () => {
    // The first request compiles the route: on a busy machine, that alone can take most of a minute.
    const first = await call(origin, 'GET', `${BASE_PATH}/images`, { timeoutMs: 100_000 }).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${output}`);
    });
    expect(first.status, `${first.text.slice(0, 500)}\n${output.slice(-3000)}`).toBe(200);
    await exercise(origin);
  }, 180_000);
});

describe('what the browser saw through every adapter', () => {
  it('holds no API key, secret, engine address or stack trace, and nothing went wrong unseen', () => {
    exposure.expectClean([key, SECRET], [new URL(t.engine.url).host]);
    expect(reported).toEqual([]);
  });
});
