// `npm run bench -- automation`: what a program driving a session over DevTools gets (issue 24). A
// real engine in this process, confined Chromium sessions, Playwright as the program:
// - connect_ms: Playwright's connectOverCDP on the session's automation address until its first
//   page answers an evaluate (the token already fetched);
// - the round trip of one simple command (Runtime.evaluate 1 + 1 on an attached page) through the
//   automation channel (the engine's WebSocket, the policy, the relay into the session) against a
//   direct DevTools connection to the same browser (the session's own relay, as the engine's guard
//   connects), interleaved; the difference is what the channel adds;
// - the four steps BrowserArena times (create + connect + go to a page + release), cold (no warm
//   pool) and with a warm browser waiting;
// - the same for Firefox ESR over WebDriver BiDi beside it (automation-bidi.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { WebSocket } from 'ws';
import { createEngine, type Engine } from '../src/engine/engine.js';
import { lifecycles, serveOn, type BenchProgram } from './automation-api.js';
import { automationBiDiBench } from './automation-bidi.js';
import { percentile, report } from './stats.js';

const samples = Number(process.env.RBK_BENCH_SAMPLES ?? 10);
const roundTrips = Number(process.env.RBK_BENCH_ROUND_TRIPS ?? 500);
const PAGE = '<!doctype html><title>bench</title><body><p>A page a program opens.</p></body>';

/** The smallest DevTools client: one command at a time, answered by id. */
class DevToolsClient {
  private next = 1;
  private readonly waiting = new Map<number, (message: { result?: any; error?: { message: string } }) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: number; result?: any; error?: { message: string } };
      if (message.id !== undefined) this.waiting.get(message.id)?.(message);
    });
  }

  static open(url: string): Promise<DevToolsClient> {
    const socket = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(new DevToolsClient(socket)));
      socket.once('error', reject);
    });
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<any> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (message) => {
        this.waiting.delete(id);
        if (message.error) reject(new Error(`${method}: ${message.error.message}`));
        else resolve(message.result);
      });
      this.socket.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });
  }

  /** Attaches to the first page; answers an evaluate of 1 + 1 there, timed in ms. */
  async attachToPage(): Promise<() => Promise<number>> {
    const { targetInfos } = await this.send('Target.getTargets');
    const page = (targetInfos as Array<{ targetId: string; type: string }>).find((t) => t.type === 'page')!;
    const { sessionId } = await this.send('Target.attachToTarget', { targetId: page.targetId, flatten: true });
    return async () => {
      const started = performance.now();
      const { result } = await this.send('Runtime.evaluate', { expression: '1 + 1', returnByValue: true }, sessionId);
      if (result.value !== 2) throw new Error(`1 + 1 answered ${JSON.stringify(result)}`);
      return performance.now() - started;
    };
  }

  close(): void {
    this.socket.close();
  }
}

/** Playwright over DevTools, on a Chromium session. */
const PLAYWRIGHT: BenchProgram = {
  create: { browser: 'chromium' },
  async connect(endpoint) {
    const browser = await chromium.connectOverCDP(endpoint, { timeout: 30_000 });
    const tab = browser.contexts()[0]!.pages()[0] ?? (await browser.contexts()[0]!.newPage());
    return { goto: (url) => tab.goto(url), close: () => browser.close() };
  },
};

export async function automationBench(): Promise<void> {
  const site = createServer((_, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const page = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  const root = await mkdtemp(join(tmpdir(), 'rbk-bench-automation-'));
  const config = { egress: { allow: ['127.0.0.1/32'] }, rateLimit: { requests: 1_000_000, perSeconds: 60 } };
  const cold = await createEngine({ dataDir: join(root, 'cold'), port: 0, config: config });
  try {
    const api = await serveOn(cold);
    const created = await api.call('/vm/create', { browser: 'chromium', url: page });
    await api.running(created.vmId);

    const connectMs: number[] = [];
    for (let round = 0; round < samples; round++) {
      const address = await api.endpoint(created.vmId);
      const started = performance.now();
      const browser = await chromium.connectOverCDP(address, { timeout: 30_000 });
      await browser.contexts()[0]!.pages()[0]!.evaluate('1');
      connectMs.push(performance.now() - started);
      await browser.close();
    }
    report('automation', 'connect_ms_p50', percentile(connectMs, 50), 'ms', { samples, what: 'connectOverCDP to the first page answering' });
    report('automation', 'connect_ms_p90', percentile(connectMs, 90), 'ms', { samples });

    const direct = await DevToolsClient.open(cold.sessions.endsOf(created.vmId)!.devtools!.url);
    const filtered = await DevToolsClient.open(await api.endpoint(created.vmId));
    const [directEvaluate, filteredEvaluate] = [await direct.attachToPage(), await filtered.attachToPage()];
    for (let warmUp = 0; warmUp < 50; warmUp++) await Promise.all([directEvaluate(), filteredEvaluate()]);
    const directMs: number[] = [];
    const filteredMs: number[] = [];
    // Interleaved, the order swapped each time: both see the same load of the machine.
    for (let index = 0; index < roundTrips; index++) {
      if (index % 2 === 0) {
        directMs.push(await directEvaluate());
        filteredMs.push(await filteredEvaluate());
      } else {
        filteredMs.push(await filteredEvaluate());
        directMs.push(await directEvaluate());
      }
    }
    direct.close();
    filtered.close();
    // In microseconds: the figures are well under a millisecond.
    const us = (ms: number) => ms * 1000;
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    report('automation', 'round_trip_direct_us_p50', us(percentile(directMs, 50)), 'us', { samples: roundTrips, command: 'Runtime.evaluate 1 + 1' });
    report('automation', 'round_trip_automation_us_p50', us(percentile(filteredMs, 50)), 'us', { samples: roundTrips });
    report('automation', 'round_trip_added_us_p50', us(percentile(filteredMs, 50) - percentile(directMs, 50)), 'us', { target: '<= 1000 us' });
    report('automation', 'round_trip_added_us_mean', us(mean(filteredMs) - mean(directMs)), 'us', {});
    report('automation', 'round_trip_added_us_p90', us(percentile(filteredMs, 90) - percentile(directMs, 90)), 'us', {});
    await api.call('/vm/remove', { id: created.vmId });

    await lifecycles(cold, page, 'lifecycle_cold', false, PLAYWRIGHT);
  } finally {
    await cold.close();
  }
  const warm = await createEngine({ dataDir: join(root, 'warm'), port: 0, config: { ...config, warm: { browsers: 1 } } });
  try {
    await lifecycles(warm, page, 'lifecycle_warm', true, PLAYWRIGHT);
  } finally {
    await warm.close();
  }
  try {
    await automationBiDiBench(page, root, config);
  } finally {
    site.close();
    await rm(root, { recursive: true, force: true });
  }
}
