// The packed package installed from the registry into throwaway apps, the two ways its users
// install it (README "Installing"): an app with the proxy route and the components only gets no
// native module and none of the engine's parts, yet its Express and Hono servers answer through
// the route; an app that runs the engine adds the parts with the documented command, and
// `remote-browser-kit serve` runs a session. Figures of both installs: docs/benchmarks.md. SQLite's
// binary comes as its users get it, downloaded prebuilt (from loopback here: no internet).
import { spawn, type SpawnOptions } from 'node:child_process';
import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE_PARTS, POSTGRES_PART, installCommand } from '../../src/engine/parts.js';
import { findMarkedProcesses, killMarkedProcesses } from '../../src/engine/runtime/sandbox/processes.js';
import { Api, describeReply, startPageServer, waitForStatus, type PageServer } from '../api/harness.js';
import { startTestEngine, type TestEngine } from '../server/fixtures.js';

const ROOT = process.cwd();
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

/** What the route + components app installs besides the package: the components' peers (README). */
const COMPONENT_PEERS = ['react', 'react-dom', '@tanstack/react-query', 'i18next', 'react-i18next'];
/** What its servers add to mount the route. */
const SERVER_PACKAGES = ['express', 'hono', '@hono/node-server'];
/** Seconds the route + components install may take: seconds, where compiling SQLite took over a minute. */
const CONSUMER_INSTALL_LIMIT_S = 60;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

/**
 * Runs a command without blocking this process (the engine of a test may be serving in it). npm's
 * own variables from an outer `npm test` are left out: the install is the app's, not ours.
 */
function run(command: string, args: string[], options: SpawnOptions & { timeoutMs?: number } = {}): Promise<Run> {
  const env = Object.fromEntries(Object.entries({ ...process.env, ...options.env }).filter(([name]) => !/^npm_/i.test(name)));
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, seconds: (performance.now() - started) / 1000 });
    });
  });
}

async function npmInstall(app: string, specs: string[], timeoutMs: number): Promise<Run> {
  const result = await run('npm', ['install', '--no-audit', '--no-fund', ...specs], { cwd: app, timeoutMs });
  expect(result.code, `npm install ${specs.join(' ')} in ${app} failed:\n${result.stdout}\n${result.stderr}`).toBe(0);
  return result;
}

/**
 * better-sqlite3's install asks GitHub for the binary built for this Node (prebuild-install),
 * which its users get in seconds; this machine has no internet, so without help it compiles
 * SQLite for over a minute. The same download is served here from the binary this repository's
 * own install built, through the mirror setting prebuild-install reads (the app's `.npmrc`), for
 * the version this repository has; any other version is not found and compiles as before.
 */
async function servePrebuiltSqlite(app: string): Promise<Server> {
  const own = join(ROOT, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(own, 'package.json'), 'utf8')) as { version: string };
  const stage = join(work, 'prebuilt');
  await mkdir(join(stage, 'build', 'Release'), { recursive: true });
  await copyFile(join(own, 'build', 'Release', 'better_sqlite3.node'), join(stage, 'build', 'Release', 'better_sqlite3.node'));
  const tarball = join(work, 'better-sqlite3-prebuilt.tar.gz');
  expect((await run('tar', ['czf', tarball, '-C', stage, 'build'])).code).toBe(0);
  const path = `/v${version}/better-sqlite3-v${version}-node-v${process.versions.modules}-linux-${process.arch}.tar.gz`;
  const server = createServer((request, response) => {
    if (request.url !== path) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'application/gzip' });
    createReadStream(tarball).pipe(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  await writeFile(join(app, '.npmrc'), `better_sqlite3_binary_host_mirror=http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  return server;
}

async function newApp(name: string): Promise<string> {
  const app = join(work, name);
  await mkdir(app);
  await writeFile(join(app, 'package.json'), `${JSON.stringify({ name, private: true, type: 'module' }, null, 2)}\n`);
  return app;
}

/** Every installed package's name, at any depth of node_modules. */
function installedPackages(nodeModules: string): Set<string> {
  const names = new Set<string>();
  const visit = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      if (entry.name.startsWith('@')) {
        for (const scoped of readdirSync(join(dir, entry.name), { withFileTypes: true })) {
          if (scoped.isDirectory()) {
            names.add(`${entry.name}/${scoped.name}`);
            visit(join(dir, entry.name, scoped.name, 'node_modules'));
          }
        }
        continue;
      }
      names.add(entry.name);
      visit(join(dir, entry.name, 'node_modules'));
    }
  };
  visit(nodeModules);
  return names;
}

/** Files anywhere under `dir` whose name ends in `.node`: native modules. */
function nativeModules(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).filter((path) => path.endsWith('.node'));
}

/** Bytes of the files under `dir`. */
function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

const megabytes = (bytes: number) => (bytes / 1_000_000).toFixed(1);

let work = '';
let tarball = '';

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rbk-consumer-'));
  // --ignore-scripts: the tarball of what dist/ holds now (`npm test` has just built it).
  const packed = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT });
  expect(packed.code, packed.stderr).toBe(0);
  tarball = join(work, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
}, 60_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true, maxRetries: 3 });
});

describe("the engine's parts", () => {
  const parts = [...ENGINE_PARTS, POSTGRES_PART];

  it('are optional peers of the package, development dependencies of this repository, and no dependency', () => {
    for (const part of parts) {
      const range = pkg.peerDependencies[part.name];
      expect(range, `${part.name} is a peer dependency`).toBeDefined();
      expect(pkg.peerDependenciesMeta[part.name]?.optional, `${part.name} is an optional peer`).toBe(true);
      expect(pkg.devDependencies[part.name], `${part.name}: the same range in devDependencies (npm start and npm test install it)`).toBe(range);
      expect(pkg.dependencies[part.name], `${part.name} is not a dependency`).toBeUndefined();
      // The install command names the major version (or 0.minor) the peer range allows.
      const wanted = part.install.slice(part.name.length + 1);
      expect(range, `${part.install} matches the peer range`).toMatch(new RegExp(`^\\^${wanted.replace('.', '\\.')}\\.`));
    }
  });

  it('are installed with the command the README gives', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(installCommand(ENGINE_PARTS).replace('npm install ', 'npm install remote-browser-kit '));
    expect(readme).toContain(installCommand([POSTGRES_PART]));
  });
});

describe('an app with the proxy route and the components only', () => {
  let app = '';
  let engine: TestEngine | undefined;
  let server: ReturnType<typeof spawn> | undefined;

  beforeAll(async () => {
    app = await newApp('route-and-components');
  });

  afterAll(async () => {
    server?.kill('SIGTERM');
    await engine?.close();
  });

  it('installs in seconds, with no native module and none of the engine parts', async () => {
    const install = await npmInstall(app, [tarball, ...COMPONENT_PEERS], 120_000);
    const nodeModules = join(app, 'node_modules');
    const installed = installedPackages(nodeModules);
    console.log(`route + components install: ${install.seconds.toFixed(1)} s, ${installed.size} packages, ${megabytes(bytesUnder(nodeModules))} MB`);
    expect(installed).toContain('remote-browser-kit');
    expect(nativeModules(nodeModules), 'native modules in the route + components app').toEqual([]);
    const engineParts = [...ENGINE_PARTS, POSTGRES_PART].map((part) => part.name).filter((name) => installed.has(name));
    expect(engineParts, "engine parts in the route + components app's tree").toEqual([]);
    expect(install.seconds, `npm install took ${install.seconds.toFixed(1)} s`).toBeLessThan(CONSUMER_INSTALL_LIMIT_S);
  }, 150_000);

  it('says what to install when the engine is started or imported there', async () => {
    const command = installCommand(ENGINE_PARTS);
    const serve = await run('npx', ['--no', 'remote-browser-kit', 'serve'], { cwd: app, timeoutMs: 30_000 });
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain(`The remote-browser-kit command (the engine and its operator tools) needs packages this app has not installed: ${ENGINE_PARTS.map((part) => part.name).join(', ')}`);
    expect(serve.stderr).toContain(`\n  ${command}\n`);

    const script = "import('remote-browser-kit/engine').then(() => console.log('loaded'), (error) => console.log(JSON.stringify({ name: error.name, code: error.code, message: error.message })))";
    const imported = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: app, timeoutMs: 30_000 });
    const error = JSON.parse(imported.stdout) as { name: string; code: string; message: string };
    expect(error).toMatchObject({ name: 'EnginePartsMissingError', code: 'RBK_ENGINE_PARTS_MISSING' });
    expect(error.message).toContain('remote-browser-kit/engine needs packages this app has not installed: better-sqlite3');
    expect(error.message).toContain(command);
  });

  it('answers through the proxy route from a real Express server and a real Hono server', async () => {
    // The servers come after the check above: Express brings ipaddr.js 1 of its own (proxy-addr),
    // a package of the app's choosing, not of ours.
    await npmInstall(app, SERVER_PACKAGES, 120_000);
    expect(nativeModules(join(app, 'node_modules')), 'native modules after adding the servers').toEqual([]);
    engine = await startTestEngine({}, 'real');
    const { key } = await engine.key();
    await writeFile(
      join(app, 'server.mjs'),
      `// The README's proxy route, mounted in Express and in Hono, against the engine at ENGINE_URL.
import express from 'express';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import { createProxyRoute, createServiceClient } from 'remote-browser-kit/server';
import { toExpressHandler } from 'remote-browser-kit/express';
import { toHonoHandler } from 'remote-browser-kit/hono';

const route = createProxyRoute({
  service: createServiceClient({ baseUrl: process.env.ENGINE_URL }),
  authorize: async (request) => (request.headers.get('x-user') ? { id: request.headers.get('x-user') } : null),
});
const app = express();
app.use(express.json());
app.use(toExpressHandler(route));
const hono = new Hono();
hono.all('/api/remote-browser/*', toHonoHandler(route));
const listening = app.listen(0, '127.0.0.1', () => {
  serve({ fetch: hono.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
    console.log(JSON.stringify({ express: listening.address().port, hono: info.port }));
  });
});
`,
    );
    const env = { ...process.env, ENGINE_URL: engine.engine.url, REMOTE_BROWSER_API_KEY: key, REMOTE_BROWSER_SECRET: 'consumer-install-test-secret-0123456789' };
    server = spawn(process.execPath, ['server.mjs'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    server.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
    const ports = await new Promise<{ express: number; hono: number }>((resolve, reject) => {
      let out = '';
      server!.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!) as { express: number; hono: number });
      });
      server!.once('exit', (code) => reject(new Error(`the app's server exited (${code}):\n${log}`)));
      setTimeout(() => reject(new Error(`the app's server did not start within 20 s:\n${log}`)), 20_000);
    });
    const json = { 'content-type': 'application/json', 'x-user': 'alice' };
    const call = async (port: number, method: string, path: string, body?: unknown) => {
      const response = await fetch(`http://127.0.0.1:${port}/api/remote-browser${path}`, {
        method,
        headers: json,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
      return { http: response.status, body: (await response.json()) as Record<string, any> };
    };

    for (const port of [ports.express, ports.hono]) {
      const images = await call(port, 'GET', '/images');
      expect(images.http, JSON.stringify(images.body)).toBe(200);
      expect(images.body.images.map((image: { id: string }) => image.id)).toContain('chromium');
    }
    // A session launched through Express, followed and ended through Hono: one route, one secret.
    const created = await call(ports.express, 'POST', '/sessions', { browser: 'chromium', url: engine.pageUrl });
    expect(created.http, JSON.stringify(created.body)).toBe(200);
    const handle = created.body.handle as string;
    let status = '';
    for (const deadline = Date.now() + 30_000; Date.now() < deadline && status !== 'running'; await new Promise((resolve) => setTimeout(resolve, 250))) {
      const session = await call(ports.hono, 'GET', `/sessions/${handle}`);
      expect(session.http, JSON.stringify(session.body)).toBe(200);
      status = session.body.session.status as string;
      if (status === 'error') break;
    }
    expect(status).toBe('running');
    expect((await call(ports.hono, 'DELETE', `/sessions/${handle}`)).http).toBe(200);
  }, 180_000);
});

describe('an app that runs the engine', () => {
  let app = '';
  let serve: ReturnType<typeof spawn> | undefined;
  let pages: PageServer | undefined;

  let prebuilt: Server | undefined;

  beforeAll(async () => {
    app = await newApp('engine');
    prebuilt = await servePrebuiltSqlite(app);
  });

  afterAll(async () => {
    prebuilt?.close();
    if (serve?.pid && serve.exitCode === null) {
      const exited = new Promise((resolve) => serve!.once('exit', resolve));
      process.kill(-serve.pid, 'SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
    }
    await pages?.close();
    // Nothing of a session outlives the engine; whatever would is ended here, and the test says so.
    const root = join(app, 'data', 'sessions');
    if (existsSync(root) && (await findMarkedProcesses({ root })).some((process) => !process.zombie)) await killMarkedProcesses({ root });
  });

  it('installs the package and its parts with the documented command, and serves a session', async () => {
    // The README's engine command, with this build's tarball for the package.
    const install = await npmInstall(app, [tarball, ...ENGINE_PARTS.map((part) => part.install)], 240_000);
    const nodeModules = join(app, 'node_modules');
    console.log(`engine install: ${install.seconds.toFixed(1)} s, ${installedPackages(nodeModules).size} packages, ${megabytes(bytesUnder(nodeModules))} MB`);
    // Postgres is one more part, asked for only when a postgres:// database is configured.
    expect(installedPackages(nodeModules)).not.toContain('pg');
    const postgres = await run('npx', ['--no', 'remote-browser-kit', 'accounts', 'list', '--data', 'data', '--database', 'postgres://127.0.0.1:9/none'], { cwd: app, timeoutMs: 30_000 });
    expect(postgres.code).toBe(1);
    expect(postgres.stderr).toContain(`A postgres:// database needs a package this app has not installed: pg. Install it next to remote-browser-kit with:\n  ${installCommand([POSTGRES_PART])}\n`);

    pages = await startPageServer();
    await writeFile(join(app, 'config.json'), JSON.stringify({ egress: { allow: ['127.0.0.0/8'] }, warm: { browsers: 0 } }));
    const paths = ['--data', 'data', '--config', 'config.json', '--json'];
    const created = await run('npx', ['--no', 'remote-browser-kit', 'accounts', 'create', '--contact', 'ops@example.com', '--plan', 'pro', ...paths], { cwd: app, timeoutMs: 30_000 });
    expect(created.code, created.stderr).toBe(0);
    const { apiKey } = JSON.parse(created.stdout) as { apiKey: { key: string } };

    // Its own process group: npx and the engine under it stop together.
    serve = spawn('npx', ['--no', 'remote-browser-kit', 'serve', '--port', '0', ...paths], { cwd: app, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    serve.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
    const facts = await new Promise<{ url: string; database: string; browsers: string[] }>((resolve, reject) => {
      let out = '';
      serve!.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        const line = out.split('\n').find((text) => text.startsWith('{"url"'));
        if (line) resolve(JSON.parse(line) as { url: string; database: string; browsers: string[] });
      });
      serve!.once('exit', (code) => reject(new Error(`remote-browser-kit serve exited (${code}):\n${out}\n${log}`)));
      setTimeout(() => reject(new Error(`remote-browser-kit serve printed no ready line within 30 s:\n${out}\n${log}`)), 30_000);
    });
    expect(facts.database).toBe('sqlite');
    expect(facts.browsers).toContain('chromium');

    const api = new Api(facts.url, apiKey.key);
    const reply = await api.create({ browser: 'chromium', url: pages.page });
    expect(reply.json?.status, describeReply(reply)).toBe('ok');
    const vmId = reply.json.vmId as string;
    expect(await waitForStatus(api, vmId, ['running', 'error', 'suspended'], 30_000)).toBe('running');
    await api.remove(vmId);
    expect(await waitForStatus(api, vmId, ['deleted'], 15_000)).toBe('deleted');
  }, 330_000);
});
