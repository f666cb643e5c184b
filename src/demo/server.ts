// The demo behind `npm start`: the engine with its embedded database, a development account and
// key made on first run (printed once, then kept in the data directory), the proxy route mounted
// with that key, and a page with the launcher, the meters and an embedded viewer.
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEngine, type Engine } from '../engine/engine.js';
import { holdLines } from '../engine/operations/logger.js';
import { SECURITY_HEADERS } from '../http/headers.js';
import { toNodeHandler } from '../server/adapters/node.js';
import { createProxyRoute, engineService } from '../server/index.js';

export const DEMO_PAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'demo-page');

export interface DemoOptions {
  dataDir?: string;
  host?: string;
  /** The demo page and proxy route. Default 8640. */
  port?: number;
  /** The engine (API, share links, viewer site). Default the next port. */
  enginePort?: number;
  /** Prints the start-up facts; default console.log. */
  log?: (line: string) => void;
  /**
   * Where the engine's log lines go; default stderr: readable lines on a terminal, JSON lines
   * otherwise (decisions.md 84). Held until the start-up facts are printed.
   */
  logDestination?: NodeJS.WritableStream;
}

export interface Demo {
  url: string;
  engine: Engine;
  /** Only on the first run: the development API key, shown once. */
  newApiKey: string | null;
  close(): Promise<void>;
}

interface DemoCredentials {
  accountId: string;
  apiKey: string;
  handleSecret: string;
}

// A page the remote browser can open on a machine without internet access.
const WELCOME_PAGE = `<!doctype html><html lang="en"><meta charset="utf-8"><title>Welcome to the remote browser</title>
<body style="margin:0;font:18px system-ui,sans-serif;background:#f4f7ff;color:#1f2328"><main style="max-width:40rem;margin:4rem auto;padding:0 1rem">
<h1>This page runs in the remote browser</h1><p>Everything you see here is a real Chromium on the engine's own display, streamed to your viewer.</p>
<p><label>Type something: <input style="font:inherit" placeholder="Hello"></label></p><p><a href="/welcome?again">Follow a link</a></p></main>`;

const CONTENT_TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

export async function startDemo(options: DemoOptions = {}): Promise<Demo> {
  const log = options.log ?? ((line: string) => console.log(line));
  const dataDir = resolve(options.dataDir ?? '.data');
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 8640;
  // The engine's start-up lines wait for the address: it is what a person running `npm start` looks for.
  const logLines = holdLines(options.logDestination);
  let engine: Engine | undefined;
  try {
    engine = await createEngine({
      dataDir,
      host,
      port: options.enginePort ?? (port === 0 ? 0 : port + 1),
      // The demo's remote browsers may open the demo's own welcome page on loopback (decisions.md 25).
      config: { egress: { allow: ['127.0.0.0/8', '::1/128'] } } as never,
      logDestination: logLines,
    });
    return await serveDemo(engine, { dataDir, host, port, log });
  } catch (error) {
    await engine?.close().catch(() => {});
    throw error;
  } finally {
    logLines.release();
  }
}

/** The account, the proxy route and the page around a started engine; prints where to open it. */
async function serveDemo(
  engine: Engine,
  { dataDir, host, port, log }: { dataDir: string; host: string; port: number; log: (line: string) => void },
): Promise<Demo> {
  // First run: a development account and key, kept (0600) so later runs reuse them.
  const credentialsFile = join(dataDir, 'demo-credentials.json');
  let credentials: DemoCredentials;
  let newApiKey: string | null = null;
  try {
    credentials = JSON.parse(await readFile(credentialsFile, 'utf8')) as DemoCredentials;
    if (!(await engine.accounts.authenticate(credentials.apiKey))) throw new Error('the stored key was revoked');
  } catch {
    const created = await engine.accounts.create({ contact: 'developer@localhost.test', plans: ['pro'] });
    credentials = { accountId: created.account.id, apiKey: created.apiKey.key, handleSecret: randomBytes(32).toString('base64url') };
    await writeFile(credentialsFile, JSON.stringify(credentials), { mode: 0o600 });
    newApiKey = created.apiKey.key;
  }

  const route = createProxyRoute({
    service: engineService(engine, { apiKey: credentials.apiKey }),
    // The demo has one person: a real app returns its signed-in user here.
    authorize: () => ({ id: 'demo-user' }),
    secret: credentials.handleSecret,
    policy: { usage: () => true },
  });
  const proxy = toNodeHandler(route);

  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://demo');
    if (url.pathname.startsWith(route.basePath)) return void proxy(request, response);
    if (url.pathname === '/favicon.ico') return void response.writeHead(204).end();
    if (url.pathname === '/welcome') {
      return void response.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8' }).end(WELCOME_PAGE);
    }
    void servePage(url.pathname, response);
  });

  async function servePage(pathname: string, response: import('node:http').ServerResponse) {
    const file = pathname === '/' ? join(DEMO_PAGE_DIR, 'index.html') : normalize(join(DEMO_PAGE_DIR, pathname));
    const info = file.startsWith(DEMO_PAGE_DIR) ? await stat(file).catch(() => null) : null;
    if (!info?.isFile()) {
      const missing = pathname === '/';
      response.writeHead(missing ? 503 : 404, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
      return void response.end(missing ? 'The demo page is not built: run `npm run build`.' : 'Not found');
    }
    response.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
      'content-length': info.size,
      'referrer-policy': 'no-referrer',
    });
    createReadStream(file).pipe(response);
  }

  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => done());
  });
  const address = server.address() as AddressInfo;
  const url = `http://${host}:${address.port}`;
  log(`remote-browser-kit demo: open ${url}/`);
  log(`  engine (API, share links): ${engine.url}`);
  log(`  proxy route: ${url}${route.basePath}`);
  if (newApiKey) log(`  development API key (shown once; kept in ${credentialsFile}): ${newApiKey}`);
  log(`  the engine's log follows (Ctrl-C stops the demo)`);
  log('');
  return {
    url,
    engine,
    newApiKey,
    async close() {
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
      await engine.close();
    },
  };
}
