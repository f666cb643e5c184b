// `npm run bench -- automation`, its Firefox ESR half (issue 45): what a program driving a Firefox
// ESR session over WebDriver BiDi gets, beside the Chromium figures of automation.ts. A real engine
// in this process, confined Firefox ESR sessions created with `automation: true`, Puppeteer
// (`protocol: 'webDriverBiDi'`) as the program:
// - firefox_connect_ms: puppeteer.connect on the session's webDriverBiDiEndpoint until its first
//   page answers an evaluate (the token already fetched; Puppeteer's session.new included);
// - the round trip of one simple command (script.evaluate 1 + 1 in the first tab) through the
//   automation channel (the engine's WebSocket, the BiDi policy, the relay into the session) against
//   a direct connection to the same agent (the session's relay, as the hub connects). Firefox
//   holds one BiDi session at a time, so the two cannot be open together: they take turns in blocks
//   (each a connection, session.new, a warm-up, the block, session.end), the first path swapped
//   each block;
// - the same round trip through the automation channel while a second program, attached at the
//   same time, sends its own without pause (both on the browser's one BiDi session, shared by the
//   node's hub; decisions.md 169);
// - create + connect + go to a page + release, with no warm pool and with a warm display waiting
//   (a session created with `automation: true` launches its Firefox for itself; decisions.md 143),
//   and how many sessions failed to start meanwhile (counted, replaced by another round).
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { WebSocket } from 'ws';
import { createEngine, type Engine } from '../src/engine/engine.js';
import type { EngineOptions } from '../src/engine/engine.js';
import { lifecycles, serveOn, type BenchProgram } from './automation-api.js';
import { percentile, report } from './stats.js';

const samples = Number(process.env.RBK_BENCH_SAMPLES ?? 10);
const roundTrips = Number(process.env.RBK_BENCH_ROUND_TRIPS ?? 500);
/** Round trips per turn of one path. */
const BLOCK = 50;

/** The smallest BiDi client: one command at a time, answered by id. */
class BiDiClient {
  private next = 1;
  private readonly waiting = new Map<number, (message: { type: string; result?: any; message?: string }) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: number; type: string; result?: any; message?: string };
      if (typeof message.id === 'number') this.waiting.get(message.id)?.(message);
    });
  }

  static open(url: string, host?: string): Promise<BiDiClient> {
    const socket = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024, ...(host ? { headers: { host } } : {}) });
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(new BiDiClient(socket)));
      socket.once('error', reject);
    });
  }

  send(method: string, params: Record<string, unknown> = {}): Promise<any> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (message) => {
        this.waiting.delete(id);
        if (message.type === 'error') reject(new Error(`${method}: ${message.message}`));
        else resolve(message.result);
      });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Opens a BiDi session; answers an evaluate of 1 + 1 in the first tab, timed in ms. */
  async evaluator(): Promise<() => Promise<number>> {
    await this.send('session.new', { capabilities: {} });
    const { contexts } = await this.send('browsingContext.getTree', { maxDepth: 0 });
    const target = { context: contexts[0].context as string };
    return async () => {
      const started = performance.now();
      const answer = await this.send('script.evaluate', { expression: '1 + 1', target, awaitPromise: false });
      if (answer.result?.value !== 2) throw new Error(`1 + 1 answered ${JSON.stringify(answer)}`);
      return performance.now() - started;
    };
  }

  async close(): Promise<void> {
    await this.send('session.end');
    this.socket.close();
    await new Promise((resolve) => this.socket.once('close', resolve));
  }
}

/** One turn of a path: `count` round trips after a warm-up, on a connection of its own. */
async function block(open: () => Promise<BiDiClient>, count: number): Promise<number[]> {
  const client = await open();
  try {
    const evaluate = await client.evaluator();
    for (let warmUp = 0; warmUp < 10; warmUp++) await evaluate();
    const times: number[] = [];
    for (let index = 0; index < count; index++) times.push(await evaluate());
    return times;
  } finally {
    await client.close();
  }
}

/** A Puppeteer program over WebDriver BiDi, on a Firefox ESR session created for programs. */
const PUPPETEER: BenchProgram = {
  create: { browser: 'firefox-esr', automation: true },
  async connect(endpoint) {
    const browser = await puppeteer.connect({ browserWSEndpoint: endpoint, protocol: 'webDriverBiDi', defaultViewport: null, protocolTimeout: 30_000 });
    const tab = (await browser.pages())[0] ?? (await browser.newPage());
    return { goto: (url) => tab.goto(url), close: () => browser.disconnect() };
  },
};

/** The Firefox ESR figures, on engines of their own under `root`, opening `page`. */
export async function automationBiDiBench(page: string, root: string, config: NonNullable<EngineOptions['config']>): Promise<void> {
  const cold = await createEngine({ dataDir: join(root, 'firefox-cold'), port: 0, config: { ...config, warm: { memoryMb: 0, displays: 0 } } });
  try {
    const api = await serveOn(cold);
    const created = await api.call('/vm/create', { browser: 'firefox-esr', url: page, automation: true });
    if (created.status !== 'ok') throw new Error(`create: ${JSON.stringify(created)}`);
    await api.running(created.vmId);

    const connectMs: number[] = [];
    for (let round = 0; round < samples; round++) {
      const address = await api.endpoint(created.vmId);
      const started = performance.now();
      const browser = await puppeteer.connect({ browserWSEndpoint: address, protocol: 'webDriverBiDi', defaultViewport: null, protocolTimeout: 30_000 });
      await (await browser.pages())[0]!.evaluate('1');
      connectMs.push(performance.now() - started);
      // Puppeteer ends its BiDi session here, so the next program may open one.
      await browser.disconnect();
    }
    report('automation', 'firefox_connect_ms_p50', percentile(connectMs, 50), 'ms', { samples, what: 'puppeteer.connect(webDriverBiDiEndpoint, webDriverBiDi) to the first page answering' });
    report('automation', 'firefox_connect_ms_p90', percentile(connectMs, 90), 'ms', { samples });

    const bidi = cold.sessions.endsOf(created.vmId)!.bidi!;
    const direct = () => BiDiClient.open(bidi.url, bidi.host);
    const filtered = async () => BiDiClient.open(await api.endpoint(created.vmId));
    const directMs: number[] = [];
    const filteredMs: number[] = [];
    for (let turn = 0; turn < Math.ceil(roundTrips / BLOCK); turn++) {
      const count = Math.min(BLOCK, roundTrips - turn * BLOCK);
      if (turn % 2 === 0) {
        directMs.push(...(await block(direct, count)));
        filteredMs.push(...(await block(filtered, count)));
      } else {
        filteredMs.push(...(await block(filtered, count)));
        directMs.push(...(await block(direct, count)));
      }
    }
    const us = (ms: number) => ms * 1000;
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    report('automation', 'firefox_round_trip_direct_us_p50', us(percentile(directMs, 50)), 'us', { samples: roundTrips, command: 'script.evaluate 1 + 1', block: BLOCK });
    report('automation', 'firefox_round_trip_automation_us_p50', us(percentile(filteredMs, 50)), 'us', { samples: roundTrips });
    report('automation', 'firefox_round_trip_added_us_p50', us(percentile(filteredMs, 50) - percentile(directMs, 50)), 'us', { target: '<= 1000 us' });
    report('automation', 'firefox_round_trip_added_us_mean', us(mean(filteredMs) - mean(directMs)), 'us', {});
    report('automation', 'firefox_round_trip_added_us_p90', us(percentile(filteredMs, 90) - percentile(directMs, 90)), 'us', {});

    // Two programs at once on the browser's one BiDi session (decisions.md 169): the round trip of
    // one while another runs its own round trips without pause, through the same hub.
    const other = await filtered();
    const otherEvaluate = await other.evaluator();
    let busy = true;
    let otherCount = 0;
    const beside = (async () => {
      while (busy) {
        await otherEvaluate();
        otherCount++;
      }
    })();
    const besideMs: number[] = [];
    try {
      for (let turn = 0; turn < Math.ceil(roundTrips / BLOCK); turn++) besideMs.push(...(await block(filtered, Math.min(BLOCK, roundTrips - turn * BLOCK))));
    } finally {
      busy = false;
      await beside;
      await other.close();
    }
    report('automation', 'firefox_round_trip_two_programs_us_p50', us(percentile(besideMs, 50)), 'us', { samples: roundTrips, other: otherCount, what: 'one program\'s script.evaluate 1 + 1 while a second program sends its own without pause' });
    report('automation', 'firefox_round_trip_two_programs_us_p90', us(percentile(besideMs, 90)), 'us', { samples: roundTrips });
    await api.call('/vm/remove', { id: created.vmId });

    await lifecycles(cold, page, 'firefox_lifecycle_cold', false, PUPPETEER);
  } finally {
    await cold.close();
  }
  const warm = await createEngine({ dataDir: join(root, 'firefox-warm'), port: 0, config: { ...config, warm: { memoryMb: 0, displays: 1 } } });
  try {
    await lifecycles(warm, page, 'firefox_lifecycle_warm_display', true, PUPPETEER);
  } finally {
    await warm.close();
  }
}
