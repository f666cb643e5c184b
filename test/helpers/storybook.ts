// Test helper: a fresh `storybook build` served on loopback (with byte ranges), and Debian Chromium (playwright-core)
// to open it, for the end-to-end tests of the stories.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type Browser } from 'playwright-core';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.svg': 'image/svg+xml' };

export interface BuiltStorybook {
  /** Where the build is. */
  dir: string;
  /** `http://127.0.0.1:<port>`, serving the build. */
  origin: string;
  browser: Browser;
  close(): Promise<void>;
}

export async function openStorybook(): Promise<BuiltStorybook> {
  const dir = await mkdtemp(join(tmpdir(), 'rbk-storybook-'));
  await promisify(execFile)(join(projectRoot, 'node_modules/.bin/storybook'), ['build', '--quiet', '-o', dir], { cwd: projectRoot, timeout: 180_000, maxBuffer: 64 * 1024 * 1024 });
  const site = createServer(async (request, response) => {
    const path = normalize(new URL(request.url ?? '/', 'http://site').pathname).replace(/^(\.\.[/\\])+/, '');
    try {
      const body = await readFile(join(dir, path));
      const type = TYPES[extname(path)] ?? 'application/octet-stream';
      // Byte ranges, as any static server answers them: a <video> seeks in an MP4 by asking for them.
      const range = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? '');
      if (range && Number(range[1]) < body.length) {
        const start = Number(range[1]);
        const end = range[2] ? Math.min(Number(range[2]), body.length - 1) : body.length - 1;
        response.writeHead(206, { 'content-type': type, 'accept-ranges': 'bytes', 'content-range': `bytes ${start}-${end}/${body.length}` }).end(body.subarray(start, end + 1));
        return;
      }
      response.writeHead(200, { 'content-type': type, 'accept-ranges': 'bytes' }).end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  return {
    dir,
    origin,
    browser,
    async close() {
      await browser.close();
      await new Promise<void>((resolve) => site.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
