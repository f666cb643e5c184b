// `RBK_BENCH_HIBERNATION=capacity npm run bench -- hibernation` (issue 46, "Measured"): how many
// sessions one node of this machine holds with ten of them used at a time. Ten confined Chromium
// sessions are in use throughout: a program is connected to each (an attachment: never in standby)
// and asks each page in turn for its clock, about once a second each. Idle sessions are added in
// steps of RBK_BENCH_CAPACITY_STEP (default 10) up to RBK_BENCH_CAPACITY_MAX sessions in all
// (default 40: the machine is shared), left alone (standby after 2 s, hibernation 6 s later).
// After each step, once its idle sessions are hibernated, a 10 s window: sessions held, awake, in
// standby, hibernated; the node's CPU (every process of this engine's groups, and the bench's own
// process: engine and programs) and memory (RSS and PSS of the groups' processes, the host's
// MemAvailable); the used sessions' command times; then one hibernated session resumed by a
// program and another by a viewer. Figures, not tests.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DEFAULT_PLANS } from '../src/engine/config.js';
import { createEngine } from '../src/engine/engine.js';
import { programFirstCommand, viewerFirstFrame, type Call, type Colour } from './first-touch.js';
import { cpuMs, groupOf, groups, memoryMb, procs } from './session-processes.js';
import { percentile, report } from './stats.js';

const USED = 10;
const MAX = Math.max(USED, Number(process.env.RBK_BENCH_CAPACITY_MAX ?? 40));
const STEP = Math.max(1, Number(process.env.RBK_BENCH_CAPACITY_STEP ?? 10));
const STANDBY_SECONDS = 2;
const HIBERNATE_MINUTES = 0.1;
const WINDOW_MS = 10_000;
const GREEN: Colour = [20, 160, 60];
const PAGE = '<!doctype html><title>idle</title><body style="margin:0;background:rgb(20,160,60)"><p id="t"></p><script>setInterval(() => (document.getElementById("t").textContent = new Date().toISOString()), 1000)</script></body>';

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const round = (value: number) => Math.round(value * 10) / 10;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const memAvailableMb = () => Number(/^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) / 1024;

interface Used {
  id: string;
  browser: Browser;
  page: Page;
}

export async function hibernationCapacityBench(): Promise<void> {
  const site = createServer((request, response) => (request.url === '/favicon.ico' ? response.writeHead(404).end() : response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE)));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const dir = await mkdtemp(join(tmpdir(), 'rbk-capacity-bench-'));
  const team = DEFAULT_PLANS.find((plan) => plan.id === 'team')!;
  const engine = await createEngine({
    dataDir: join(dir, 'data'),
    port: 0,
    config: {
      egress: { allow: ['127.0.0.1/32'] },
      rateLimit: { requests: 100_000, perSeconds: 1 },
      standby: { afterSeconds: STANDBY_SECONDS, hibernateAfterMinutes: HIBERNATE_MINUTES },
      // The account's running limit is not what is measured here.
      plans: [...DEFAULT_PLANS, { ...team, id: 'capacity', name: 'Capacity', running_session_limit: 1000 }],
    },
  });
  const used: Used[] = [];
  const idle: Array<{ id: string; link: string }> = [];
  let driving = true;
  let driver: Promise<void> = Promise.resolve();
  try {
    const key = (await engine.accounts.create({ contact: 'bench@example.com', plans: ['capacity'] })).apiKey.key;
    const call: Call = async (path, body) =>
      (await (await fetch(`${engine.url}/v8${path}`, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${key}` }, ...(body ? { body: JSON.stringify(body) } : {}) })).json()) as Record<string, any>;
    const create = async () => {
      const created = await call('/vm/create', { browser: 'chromium', url: `${origin}/` });
      if (created.status !== 'ok') throw new Error(`create: ${JSON.stringify(created)}`);
      const running = await call(`/vm/data?id=${created.vmId}&wait=60000`);
      if (running.data[0].status !== 'running') throw new Error(`session ${created.vmId} is ${running.data[0].status}`);
      return { id: created.vmId as string, link: new URL(created.shareUrl).search.slice(1) };
    };
    const isHibernated = async (id: string) => (await engine.store.session(id))?.hibernated === true;
    const allHibernated = async (ids: string[], timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while ((await Promise.all(ids.map(isHibernated))).includes(false)) {
        if (Date.now() > deadline) return false;
        await sleep(250);
      }
      return true;
    };

    // The ten in use: a program on each, a command to each in turn.
    for (let i = 0; i < USED; i++) {
      const { id } = await create();
      const browser = await chromium.connectOverCDP((await call(`/vm/automation?id=${id}`)).browserWSEndpoint, { timeout: 60_000 });
      const page = browser.contexts().flatMap((context) => context.pages()).find((p) => p.url().startsWith(origin));
      if (!page) throw new Error(`session ${id}: no page of the site`);
      used.push({ id, browser, page });
    }
    const commandMs: number[] = [];
    let commandErrors = 0;
    driver = (async () => {
      while (driving) {
        for (const session of used) {
          if (!driving) break;
          const began = performance.now();
          try {
            await session.page.evaluate(() => document.getElementById('t')?.textContent);
            commandMs.push(performance.now() - began);
          } catch {
            commandErrors++;
          }
          await sleep(100);
        }
      }
    })();
    const runtimeId = (await engine.store.session(used[0]!.id))!.runtime_id!;
    const group = groupOf(runtimeId)!;
    const prefix = group.slice(0, group.length - runtimeId.length);

    while (used.length + idle.length < MAX) {
      const adding = Math.min(STEP, MAX - used.length - idle.length);
      const stepBegan = performance.now();
      for (let i = 0; i < adding; i++) idle.push(await create());
      const settled = await allHibernated(idle.map((s) => s.id), 300_000);
      const settledMs = performance.now() - stepBegan;

      // The window: the node as it holds them.
      const ids = [...used.map((s) => s.id), ...idle.map((s) => s.id)];
      const nodePids = groups(prefix).map(procs);
      const cpuBefore = nodePids.map(cpuMs);
      const ownBefore = process.cpuUsage();
      commandMs.length = 0;
      const errorsBefore = commandErrors;
      const loadBefore = loadavg()[0]!;
      const began = performance.now();
      await sleep(WINDOW_MS);
      const seconds = (performance.now() - began) / 1000;
      const sessionsCpu = sum(nodePids.map((p, i) => cpuMs(p) - cpuBefore[i]!)) / seconds / 10;
      const own = process.cpuUsage(ownBefore);
      const ownCpu = (own.user + own.system) / 1000 / seconds / 10;
      const windowCommands = [...commandMs];
      const hibernatedNow = (await Promise.all(ids.map(isHibernated))).filter(Boolean).length;
      const standbyNow = ids.filter((id) => engine.sessions.standby.isFrozen(id)).length;
      const pidsNow = groups(prefix).map(procs);
      report('hibernation-capacity', 'node_holds', ids.length, 'sessions', {
        used: USED,
        awake: ids.length - hibernatedNow - standbyNow,
        standby: standbyNow,
        hibernated: hibernatedNow,
        allIdleHibernated: settled,
        stepSettledMs: Math.round(settledMs),
        cpuPercentOfOneCore: { sessionsAndWarmPool: round(sessionsCpu), engineAndPrograms: round(ownCpu) },
        memoryMb: { rss: Math.round(sum(pidsNow.map((p) => memoryMb(p, 'Rss')))), pss: Math.round(sum(pidsNow.map((p) => memoryMb(p)))), hostAvailable: Math.round(memAvailableMb()) },
        groups: pidsNow.length,
        processes: sum(pidsNow.map((p) => p.length)),
        usedCommandMs: { count: windowCommands.length, p50: round(percentile(windowCommands, 50)), p90: round(percentile(windowCommands, 90)), errors: commandErrors - errorsBefore },
        load: `${loadBefore.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)}`,
      });

      // A touched hibernated session resumes: one by a program, another by a viewer.
      const asleep = [];
      for (const s of idle) if (asleep.length < 2 && (await isHibernated(s.id))) asleep.push(s);
      if (asleep.length === 2) {
        const program = await programFirstCommand(call, asleep[0]!.id, origin);
        const viewer = await viewerFirstFrame(engine.url, asleep[1]!.link, GREEN);
        report('hibernation-capacity', 'resume_ms', round(program.ms), 'ms', { held: ids.length, program: round(program.ms), viewerFirstFrame: round(viewer), measured: "a program's vm/automation + connectOverCDP + one page.evaluate; a share-link viewer to the page's colour on screen" });
      }
    }
  } finally {
    driving = false;
    await driver;
    for (const session of used) await session.browser.close().catch(() => undefined);
    await engine.close();
    site.close();
    await rm(dir, { recursive: true, force: true });
  }
}
