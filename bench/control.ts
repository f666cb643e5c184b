// `npm run bench -- control` (issue 36): in a session with one driver, the time from the driver
// pressing "give control" (its `give` sent on the people socket) to the new driver's first key
// reaching the page (the page's keydown, read back through DevTools): the engine tells the new
// driver, which types at once. A real engine, Chromium and Xvnc; raw RFB viewers.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../src/engine/engine.js';
import { connectPeople } from '../test/helpers/people-client.js';
import { connectRfb } from '../test/helpers/rfb-client.js';
import { percentile, report } from './stats.js';

const samples = Number(process.env.RBK_BENCH_SAMPLES ?? 20);
const PAGE = '<!doctype html><title>keys</title><body><input autofocus style="width:300px;height:40px"><script>window.keys=[];addEventListener("keydown",(e)=>keys.push([e.key,performance.timeOrigin+performance.now()]))</script>';

export async function controlBench(): Promise<void> {
  const site = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const root = await mkdtemp(join(tmpdir(), 'rbk-bench-control-'));
  let viewers: Array<{ people: Awaited<ReturnType<typeof connectPeople>>; rfb: Awaited<ReturnType<typeof connectRfb>>; id: string }> = [];
  const engine = await createEngine({ dataDir: root, port: 0, config: { egress: { allow: ['127.0.0.1/32'] }, rateLimit: { requests: 1_000_000, perSeconds: 60 } } });
  try {
    const key = (await engine.accounts.create({ contact: `bench-${Date.now()}@example.com`, plans: ['unlimited'] })).apiKey.key;
    const call = async (path: string, body?: unknown) =>
      (await (await fetch(`${engine.url}/v8${path}`, { method: body === undefined ? 'GET' : 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })).json()) as Record<string, any>;
    const created = await call('/vm/create', { browser: 'chromium', url: `http://127.0.0.1:${(site.address() as AddressInfo).port}/`, control: 'one' });
    while ((await call(`/vm/data?id=${created.vmId}`)).data?.[0]?.status !== 'running') await new Promise((resolve) => setTimeout(resolve, 50));
    const control = engine.runtime.get((await engine.store.session(created.vmId))!.runtime_id!)!.control!;
    while ((await control.evaluate('document.title').catch(() => '')) !== 'keys') await new Promise((resolve) => setTimeout(resolve, 50));
    const linkId = new URL(created.shareUrl).search.slice(1);
    const ws = engine.url.replace(/^http/, 'ws');
    viewers = await Promise.all([0, 1].map(async () => {
      const people = await connectPeople(`${ws}/share/${linkId}/people`);
      const rfb = await connectRfb(`${ws}/share/${linkId}/rfb?viewer=${people.viewerKey}`);
      return { people, rfb, id: (await people.until((p) => p.you !== '')).you };
    }));
    // A press on the page (below the browser's own bar) makes the first viewer drive and focuses the page.
    const chromeHeight = Number(await control.evaluate('outerHeight - innerHeight'));
    await viewers[0]!.rfb.click(100, chromeHeight + 20);
    await viewers[0]!.people.until((p) => p.driver?.id === viewers[0]!.id);
    const giveToKeyMs: number[] = [];
    for (let round = 0; round < samples; round++) {
      const [from, to] = round % 2 === 0 ? [viewers[0]!, viewers[1]!] : [viewers[1]!, viewers[0]!];
      await control.evaluate('window.keys = []');
      // The new driver types the moment it hears it drives.
      const typed = to.people.until((p) => p.driver?.id === to.id).then(() => to.rfb.key(0x61));
      const gaveAt = performance.timeOrigin + performance.now();
      from.people.send({ type: 'give', to: to.id });
      await typed;
      let seen: Array<[string, number]> = [];
      const deadline = Date.now() + 10_000;
      while (seen.length === 0) {
        if (Date.now() > deadline) throw new Error('the new driver\'s key did not reach the page within 10 s');
        seen = (await control.evaluate('window.keys')) as Array<[string, number]>;
        if (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      giveToKeyMs.push(seen[0]![1] - gaveAt);
    }
    report('control', 'give_to_first_key_p50', percentile(giveToKeyMs, 50), 'ms', { samples });
    report('control', 'give_to_first_key_p95', percentile(giveToKeyMs, 95), 'ms', { samples });
  } finally {
    for (const viewer of viewers) {
      viewer.rfb.close();
      viewer.people.close();
    }
    await engine.close();
    site.close();
    await rm(root, { recursive: true, force: true });
  }
}
