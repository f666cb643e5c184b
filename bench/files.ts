// `npm run bench -- files` (issue 23): a 100 MB file through a real engine and a confined Chromium
// session. Upload and download MB/s through the API and through the share link, against a plain
// copy of the same file on this machine (cp); the engine's memory (this process's RSS: the engine
// runs in it, and the client discards what it reads) sampled while 100 MB pass; and the
// input-to-display latency of a viewer (Debian Chromium, the engine's viewer site) while that same
// viewer's browser downloads 100 MB through the share link, against the same viewer at rest.
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { createEngine } from '../src/engine/engine.js';
import { percentile, report } from './stats.js';
import { keyToChangedPixel } from './viewer-input.js';

const MB = 1024 * 1024;
const SIZE = 100 * MB;
const KEYS_PAGE = '<!doctype html><title>keys</title><body style="margin:0;background:#ff0000"><script>let on=false;addEventListener("keydown",()=>{on=!on;document.body.style.background=on?"#0000ff":"#ff0000"})</script>';

/** Key press in the viewer to the remote page's colour change drawn on its canvas, `presses` times (ms). */
async function keyLatencies(page: Page, presses: number): Promise<number[]> {
  const box = (await page.locator('.rbk-viewer__screen canvas').boundingBox())!;
  await page.mouse.click(box.x + box.width / 2, box.y + box.height * 0.8);
  await page.waitForTimeout(300);
  const latencies: number[] = [];
  for (let i = 0; i < presses; i++) {
    latencies.push(await keyToChangedPixel(page));
    await page.waitForTimeout(150);
  }
  return latencies;
}

/** Sends `file` with curl (another process, so the engine's memory is the engine's alone); the size the engine answered. */
function curlUpload(url: string, file: string, key?: string): Promise<number> {
  const args = ['-sS', '-X', 'POST', '-H', 'content-type: application/octet-stream', '--data-binary', `@${file}`, url, ...(key ? ['-H', `authorization: Bearer ${key}`] : [])];
  return new Promise((resolve, reject) =>
    execFile('curl', args, { maxBuffer: 1024 * 1024 }, (error, stdout) => (error ? reject(error) : resolve((JSON.parse(stdout) as { size: number }).size))),
  );
}

export async function filesBench(): Promise<void> {
  const site = createServer((_, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(KEYS_PAGE));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const dir = await mkdtemp(join(tmpdir(), 'rbk-files-bench-'));
  const engine = await createEngine({
    dataDir: join(dir, 'data'),
    port: 0,
    config: { egress: { allow: ['127.0.0.1/32'] }, rateLimit: { requests: 100_000, perSeconds: 1 }, confinement: { diskMb: 1024 }, files: { maxFileMb: 200, maxSessionMb: 400 } },
  });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
  try {
    const key = (await engine.accounts.create({ contact: 'bench@example.com', plans: ['team'] })).apiKey.key;
    const auth = { authorization: `Bearer ${key}` };
    const created = (await (await fetch(`${engine.url}/v8/vm/create`, { method: 'POST', headers: auth, body: JSON.stringify({ browser: 'chromium', url: `http://127.0.0.1:${(site.address() as AddressInfo).port}/` }) })).json()) as { vmId: string; shareUrl: string };
    for (let i = 0; i < 300; i++) {
      const data = (await (await fetch(`${engine.url}/v8/vm/data?id=${created.vmId}`, { headers: auth })).json()) as { data: Array<{ status: string }> };
      if (data.data[0]?.status === 'running') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const linkId = new URL(created.shareUrl).search.slice(1);
    const payload = randomBytes(SIZE);
    const source = join(dir, 'source.bin');
    await writeFile(source, payload);

    // A plain copy of the same file on this machine.
    let started = performance.now();
    execFileSync('cp', [source, join(dir, 'copy.bin')]);
    const copyMBps = SIZE / MB / ((performance.now() - started) / 1000);
    report('files', 'plain_copy_MBps', copyMBps, 'MB/s', { bytes: SIZE, measured: 'cp of the same 100 MB file on this machine' });

    // The engine's memory, sampled every 50 ms while a transfer runs.
    const sampleMemory = () => {
      const base = process.memoryUsage().rss;
      let peak = base;
      const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
      return () => {
        clearInterval(timer);
        return { baseMb: base / MB, peakMb: peak / MB };
      };
    };
    const drain = async (response: Response) => {
      let bytes = 0;
      for await (const chunk of response.body!) bytes += (chunk as Uint8Array).length;
      return bytes;
    };

    const transfers: Array<[string, () => Promise<number>]> = [
      ['api_upload', async () => curlUpload(`${engine.url}/v8/vm/files/upload?id=${created.vmId}&name=big.bin`, source, key)],
      ['api_download', async () => drain(await fetch(`${engine.url}/v8/vm/files/download?id=${created.vmId}&name=big.bin`, { headers: auth }))],
      ['share_upload', async () => curlUpload(`${engine.url}/share/${linkId}/files/upload?name=big2.bin`, source)],
      ['share_download', async () => drain(await fetch(`${engine.url}/share/${linkId}/files/download?name=big2.bin`))],
    ];
    for (const [name, run] of transfers) {
      const memory = sampleMemory();
      started = performance.now();
      const bytes = await run();
      const seconds = (performance.now() - started) / 1000;
      const { baseMb, peakMb } = memory();
      if (bytes !== SIZE) throw new Error(`${name} moved ${bytes} bytes, not ${SIZE}`);
      report('files', `${name}_MBps`, SIZE / MB / seconds, 'MB/s', { bytes, paced: 'files.bytesPerSecond default 32 MiB/s' });
      report('files', `${name}_engine_rss_growth_MB`, peakMb - baseMb, 'MB', { baseMb: Math.round(baseMb), peakMb: Math.round(peakMb), measured: 'RSS of the process the engine runs in, sampled every 50 ms while 100 MB pass (uploads are sent by curl from the file, in another process; downloads are read and discarded here)' });
    }

    // Input-to-display latency of one viewer, at rest and while its own browser downloads 100 MB through the share link.
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(created.shareUrl);
    await page.waitForSelector('.rbk-viewer__live[data-connection="connected"]:not([aria-hidden])', { timeout: 30_000 });
    await page.waitForTimeout(1500);
    const rest = await keyLatencies(page, 20);
    const downloading = page.evaluate(`fetch(${JSON.stringify(`${engine.url}/share/${linkId}/files/download?name=big2.bin`)}).then(async (r) => { const reader = r.body.getReader(); let n = 0; for (;;) { const { done, value } = await reader.read(); if (done) return n; n += value.length; } })`);
    await page.waitForTimeout(300);
    const during = await keyLatencies(page, 20);
    const downloaded = Number(await downloading);
    report('files', 'input_latency_rest_ms_p50', percentile(rest, 50), 'ms', { samples: rest.length });
    report('files', 'input_latency_during_download_ms_p50', percentile(during, 50), 'ms', { samples: during.length, downloadedBytes: downloaded, measured: 'key press in the viewer -> the remote page\'s change drawn on its canvas, while the same viewer\'s browser downloads 100 MB through the share link' });
    report('files', 'input_latency_during_download_ms_p95', percentile(during, 95), 'ms', { restP95: percentile(rest, 95) });
  } finally {
    await browser.close();
    await engine.close();
    site.close();
    await rm(dir, { recursive: true, force: true });
  }
}
