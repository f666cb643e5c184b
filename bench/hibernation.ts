// `npm run bench -- hibernation` (issue 46, decisions.md 165-168): N idle, confined Chromium
// sessions on a real engine (RBK_BENCH_HIBERNATION_N, default 3: the machine is shared), each with
// three tabs of a loopback site, left alone until they are hibernated (standby after 1 s,
// hibernation 3 s later). Figures: the memory their cgroups held awake and what they hold
// hibernated (none: their processes ended), the time from standby to hibernated, and the resume
// time: a viewer connecting through the share link to its first frame of the page, and a program
// (`vm/automation`, connectOverCDP, one page.evaluate) to its first answered command. Medians;
// figures, not tests.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { createEngine } from '../src/engine/engine.js';
import { connectRfb } from '../test/helpers/rfb-client.js';
import { percentile, report } from './stats.js';

const N = Number(process.env.RBK_BENCH_HIBERNATION_N ?? 3);
const GREEN: [number, number, number] = [20, 160, 60];
const PAGE = '<!doctype html><title>idle</title><body style="margin:0;background:rgb(20,160,60)"><p id="t"></p><script>setInterval(() => (document.getElementById("t").textContent = new Date().toISOString()), 1000)</script></body>';

const median = (values: number[]) => percentile(values, 50);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function hibernationBench(): Promise<void> {
  const site = createServer((request, response) => (request.url === '/favicon.ico' ? response.writeHead(404).end() : response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE)));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const dir = await mkdtemp(join(tmpdir(), 'rbk-hibernation-bench-'));
  const engine = await createEngine({ dataDir: join(dir, 'data'), port: 0, config: { egress: { allow: ['127.0.0.1/32'] }, rateLimit: { requests: 100_000, perSeconds: 1 }, standby: { afterSeconds: 1, hibernateAfterMinutes: 0.05 } } });
  try {
    const key = (await engine.accounts.create({ contact: 'bench@example.com', plans: ['team'] })).apiKey.key;
    const call = async (path: string, body?: unknown) =>
      (await (await fetch(`${engine.url}/v8${path}`, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${key}` }, ...(body ? { body: JSON.stringify(body) } : {}) })).json()) as Record<string, any>;
    const hibernated = async (ids: string[]) => {
      const deadline = Date.now() + 120_000;
      while ((await Promise.all(ids.map(async (id) => (await call(`/vm/data?id=${id}`)).data[0].hibernated === true))).includes(false)) {
        if (Date.now() > deadline) throw new Error('the sessions were not hibernated within 120 s');
        await sleep(200);
      }
    };

    const sessions: Array<{ id: string; link: string }> = [];
    const awakeMb: number[] = [];
    for (let i = 0; i < N; i++) {
      const created = await call('/vm/create', { browser: 'chromium', url: `${origin}/` });
      if (created.status !== 'ok') throw new Error(`create: ${JSON.stringify(created)}`);
      const release = await engine.sessions.hold(created.vmId);
      const link = new URL(created.shareUrl).search.slice(1);
      await call(`/vm/data?id=${created.vmId}&wait=60000`);
      for (const path of ['/second', '/third', '/']) {
        await fetch(`${engine.url}/share/${link}/tabs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'open', url: `${origin}${path}` }) });
      }
      await sleep(2000);
      const runtimeId = (await engine.store.session(created.vmId))!.runtime_id!;
      awakeMb.push((engine.runtime.get(runtimeId)?.sandbox.memoryBytes() ?? 0) / 1024 / 1024);
      release();
      sessions.push({ id: created.vmId, link });
    }
    const asleepAt = performance.now();
    await hibernated(sessions.map((s) => s.id));
    report('hibernation', 'memory_mb_per_session_awake', median(awakeMb), 'MB', { sessions: N, tabs: 4, measured: "each session's memory cgroup" });
    report('hibernation', 'memory_mb_per_session_hibernated', 0, 'MB', { sessions: N, runningHere: engine.runtime.list().length });
    report('hibernation', 'all_hibernated_after_ms', performance.now() - asleepAt, 'ms', { sessions: N, settings: 'standby after 1 s, hibernation 3 s later' });
    const stored = await engine.store.sql.all<{ n: number; bytes: number }>('SELECT COUNT(*) AS n, SUM(LENGTH(data)) AS bytes FROM hibernation_chunks');
    report('hibernation', 'stored_kb_per_session', Number(stored[0]!.bytes) / 1024 / N, 'KB', { chunks: Number(stored[0]!.n) });

    const viewer = [];
    for (const s of sessions) {
      const began = performance.now();
      const rfb = await connectRfb(`${engine.url.replace(/^http/, 'ws')}/share/${s.link}/rfb`, 60_000);
      await rfb.waitForPixel(640, 600, GREEN, 60_000);
      viewer.push(performance.now() - began);
      rfb.close();
    }
    await hibernated(sessions.map((s) => s.id));
    const program = [];
    const found: number[] = [];
    for (const s of sessions) {
      const began = performance.now();
      const endpoint = await call(`/vm/automation?id=${s.id}`);
      const browser = await chromium.connectOverCDP(endpoint.browserWSEndpoint, { timeout: 60_000 });
      const deadline = Date.now() + 20_000;
      while (browser.contexts().flatMap((c) => c.pages()).length < 4 && Date.now() < deadline) await sleep(50);
      const page = browser.contexts()[0]!.pages().find((p) => p.url().startsWith(origin))!;
      await page.evaluate(() => document.title);
      program.push(performance.now() - began);
      found.push(browser.contexts().flatMap((c) => c.pages()).length);
      await browser.close();
    }
    report('hibernation', 'viewer_first_frame_ms_from_hibernation', median(viewer), 'ms', { sessions: N, all: viewer.map(Math.round), measured: 'share-link RFB connect to the active page colour on screen' });
    report('hibernation', 'program_first_command_ms_from_hibernation', median(program), 'ms', { sessions: N, all: program.map(Math.round), pagesFound: found, measured: 'vm/automation, connectOverCDP, its 4 pages found, one page.evaluate' });
    for (const s of sessions) await call('/vm/remove', { id: s.id });
  } finally {
    await engine.close();
    site.close();
    await rm(dir, { recursive: true, force: true });
  }
}
