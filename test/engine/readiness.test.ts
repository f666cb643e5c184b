// /readyz against /healthz (issue 27, decisions.md 60) on `remote-browser-kit serve`: readiness
// fails while another process holds the database's write lock and while the node drains, and the
// health answer goes on; the operator listener answers the same. And its log, on a stderr that is
// no terminal, stays JSON lines (decisions.md 84).
import { spawn } from 'node:child_process';
import { get as httpGet } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, removeWorkspace, runCli, startEngine, testConfig, type EngineProcess } from '../api/harness.js';

/** Holds the SQLite file's write lock until its stdin closes; prints a line once it holds it. */
const HOLD_LOCK = "const db = new (require('better-sqlite3'))(process.argv[1]); db.exec('BEGIN IMMEDIATE'); process.stdout.write('held\\n'); process.stdin.resume(); process.stdin.on('end', () => { db.exec('ROLLBACK'); db.close(); });";

let engine: EngineProcess;

/** One connection per probe: the engine waits synchronously on a held SQLite lock, and a kept-alive connection may be closed under a request meanwhile. */
const probe = (base: string, path: string) =>
  new Promise<{ http: number; json: Record<string, any> }>((resolve, reject) => {
    httpGet(`${base}${path}`, { agent: false, timeout: 40_000 }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      response.on('end', () => resolve({ http: response.statusCode ?? 0, json: JSON.parse(text) as Record<string, any> }));
    }).on('error', reject);
  });

beforeAll(async () => {
  engine = await startEngine({ config: { ...testConfig(), database: null } });
});

afterAll(async () => {
  await engine?.stop();
  await removeWorkspace(engine?.workspace);
});

describe('/readyz', () => {
  it('answers ready on the public and the operator listener', async () => {
    const operator = engine.facts.operatorUrl as string;
    expect(operator).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await probe(engine.url, '/readyz')).toMatchObject({ http: 200, json: { status: 'ok', checks: { store: 'ok', runtime: 'ok', node: 'ok' } } });
    expect((await probe(operator, '/readyz')).http).toBe(200);
  });

  it('fails while another process holds the database, and /healthz still answers', async () => {
    const holder = spawn(process.execPath, ['-e', HOLD_LOCK, join(engine.workspace.dataDir, 'engine.sqlite')], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout!.once('data', () => resolve());
        holder.once('exit', (code) => reject(new Error(`the lock holder exited (${code})`)));
      });
      const locked = await probe(engine.url, '/readyz');
      expect(locked.http).toBe(503);
      expect(locked.json).toMatchObject({ status: 'error', checks: { store: expect.stringMatching(/takes no writes: SQLITE_BUSY/) } });
      expect(await probe(engine.url, '/healthz')).toMatchObject({ http: 200, json: { status: 'ok' } });
    } finally {
      holder.stdin!.end();
      await new Promise((resolve) => holder.once('exit', resolve));
    }
    expect((await probe(engine.url, '/readyz')).http).toBe(200);
  }, 120_000);

  it('fails while the node drains, and /healthz still answers', async () => {
    await runCli(engine.workspace, ['nodes', 'drain', engine.facts.node as string]);
    expect(await probe(engine.url, '/readyz')).toMatchObject({ http: 503, json: { status: 'error', checks: { store: 'ok', node: 'draining' } } });
    expect((await probe(engine.facts.operatorUrl as string, '/readyz')).http).toBe(503);
    expect((await probe(engine.url, '/healthz')).http).toBe(200);
  });
});

describe('the log of `serve --json`', () => {
  it('is JSON lines on a stderr that is no terminal, beside the ready line on stdout', () => {
    // The harness keeps the last 20,000 characters: a first line cut short, and the last one unfinished.
    const output = engine.output();
    const lines = output.split('\n').slice(output.length >= 20_000 ? 1 : 0, -1).filter(Boolean);
    const listening = lines.find((line) => line.includes('"msg":"engine listening"'));
    expect(listening, engine.output().slice(-2000)).toBeDefined();
    expect(JSON.parse(listening!)).toMatchObject({ level: 30, levelName: 'info', node: engine.facts.node, address: engine.url });
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
  });
});
