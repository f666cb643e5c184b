// `npm run bench -- viewer` (alone: `RBK_BENCH_VIEWER=embed`): the viewer embedded in another
// site's page (issue 44). First frame: from asking for the page to the first remote pixels shown,
// for a running session's share page opened directly, framed in an `<iframe>` by a page of an
// allowed origin, and through `<remote-browser-viewer>` (that page loading the engine's
// `/element.js`); each try in a fresh browser context (nothing cached), the three ways in turn.
// And the share of the viewer's area the remote display gets with the toolbar a link has by
// default (the one row), the full and the compact toolbar, on a 390x844 phone and a 1280x800
// desktop, with a screenshot of each (`RBK_BENCH_SCREENSHOTS=<dir>`). A real engine (its built
// viewer site: `npm run build` first), Debian Chromium as the viewer, the embedding page on
// `http://localhost:<port>` (another origin than the engine's 127.0.0.1). `RBK_BENCH_SAMPLES`
// tries per way (default 5).
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContextOptions, type Page } from 'playwright-core';
import { createEngine } from '../src/engine/engine.js';
import { waitFor } from '../test/helpers/session.js';
import { percentile, report } from './stats.js';

const SAMPLES = Number(process.env.RBK_BENCH_SAMPLES ?? 5);
const SCREENSHOTS = process.env.RBK_BENCH_SCREENSHOTS;
/** `RBK_BENCH_EMBED=share`: the display's share of the viewer alone (no first-frame tries). */
const shareOnly = process.env.RBK_BENCH_EMBED === 'share';
const REMOTE_PAGE = '<!doctype html><title>embedded</title><body style="margin:0;background:#2f6f4f;color:#fff;font:32px sans-serif"><p style="margin:40px">A remote page, framed.</p>';
/** In every frame: the wall-clock time the live screen first showed a remote pixel (as bench/viewer.ts). */
const FIRST_PIXEL = `(() => {
  const check = () => {
    const live = document.querySelector('.rbk-viewer__live:not([aria-hidden])');
    const canvas = live && live.querySelector('.rbk-viewer__screen canvas');
    if (canvas && canvas.width > 0 && canvas.getContext('2d').getImageData(canvas.width / 2, canvas.height / 2, 1, 1).data[3] !== 0) {
      window.__firstVisiblePixelAt = Date.now();
      return;
    }
    requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
})()`;
/** The display size the engine gives a viewer's area (bench/viewer.ts, the same rule). */
const displaySizeFor = (w: number, h: number): [number, number] => (w > 0 && w < 500 ? [500, Math.round((h * 500) / w)] : [w, h]);

/** The first frame's time in whichever frame of the page shows the viewer. */
async function firstPixelAt(page: Page, timeoutMs = 60_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      const at = await frame.evaluate(() => (window as { __firstVisiblePixelAt?: number }).__firstVisiblePixelAt ?? 0).catch(() => 0);
      if (at > 0) return at;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no remote pixel within ${timeoutMs} ms at ${page.url()}`);
}

/** The share of the viewer's area the remote picture covers, once the display follows the viewer's area. */
async function displayShare(page: Page): Promise<{ share: number; toolbarPx: number }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    // A string: tsx's helpers (__name) do not exist in the page.
    const seen = (await page.evaluate(`(() => {
      const viewer = document.querySelector('.rbk-viewer').getBoundingClientRect();
      const area = document.querySelector('.rbk-viewer__screen').getBoundingClientRect();
      const canvas = document.querySelector('.rbk-viewer__screen canvas');
      const shown = canvas && canvas.getBoundingClientRect();
      const clip = (r) => Math.max(0, Math.min(r.right, viewer.right) - Math.max(r.left, viewer.left)) * Math.max(0, Math.min(r.bottom, viewer.bottom) - Math.max(r.top, viewer.top));
      return {
        area: [Math.floor(area.width), Math.floor(area.height)],
        canvas: canvas ? [canvas.width, canvas.height] : [0, 0],
        share: shown ? clip(shown) / (viewer.width * viewer.height) : 0,
        // Chrome that takes room from the remote picture's area: the toolbar, the tab strip and the
        // people row wherever they sit (the compact phone toolbar floats over it: none).
        toolbarPx: viewer.height - area.height,
      };
    })()`)) as { area: number[]; canvas: number[]; share: number; toolbarPx: number };
    const [w, h] = displaySizeFor(seen.area[0]!, seen.area[1]!);
    if (seen.canvas[0] === w && seen.canvas[1] === h) return { share: seen.share, toolbarPx: seen.toolbarPx };
    if (Date.now() > deadline) throw new Error(`the display did not follow the viewer's area: ${JSON.stringify(seen)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function embedBench(): Promise<void> {
  const site = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(REMOTE_PAGE));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const remote = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  let elementUrl = '';
  // The embedding page, on another origin: an iframe of the link, or the element.
  const host = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const link = url.searchParams.get('link') ?? '';
    const style = '<style>html,body{margin:0;height:100%}iframe,remote-browser-viewer{display:block;width:100%;height:100%;border:0}</style>';
    const body =
      url.pathname === '/element'
        ? `<script type="module" src="${elementUrl}"></script><remote-browser-viewer src="${link}"></remote-browser-viewer>`
        : `<iframe src="${link}" allow="clipboard-read; clipboard-write; autoplay; fullscreen"></iframe>`;
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>host</title>${style}${body}`);
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  const hostOrigin = `http://localhost:${(host.address() as AddressInfo).port}`;
  const dir = await mkdtemp(join(tmpdir(), 'rbk-embed-bench-'));
  const engine = await createEngine({ dataDir: dir, port: 0, config: { egress: { allow: ['127.0.0.1/32'] }, rateLimit: { requests: 100_000, perSeconds: 1 } } });
  elementUrl = `${engine.url}/element.js`;
  const key = (await engine.accounts.create({ contact: 'bench@example.com', plans: ['team'] })).apiKey.key;
  const call = async (path: string, body: unknown) =>
    (await (await fetch(`${engine.url}/v8${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: JSON.stringify(body) })).json()) as Record<string, any>;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'] });
  let vmId = '';
  try {
    const allowed = await call('/user/embed', { origins: [hostOrigin] });
    if (allowed.status !== 'ok') throw new Error(`embed origins: ${JSON.stringify(allowed)}`);
    const created = await call('/vm/create', { browser: 'chromium', url: remote });
    if (created.status !== 'ok') throw new Error(`create: ${JSON.stringify(created)}`);
    vmId = created.vmId;
    const row = await waitFor(() => engine.store.session(vmId), (found) => found?.status === 'running' || found?.status === 'error', 90_000);
    if (row?.status !== 'running') throw new Error(`the session did not run (${row?.end_reason})`);
    const shareUrl = String(created.shareUrl);

    /** One try: a fresh context, the page asked for, the first remote pixel in whichever frame shows it. */
    const firstFrame = async (url: string, options: BrowserContextOptions = { viewport: { width: 1280, height: 800 } }) => {
      const context = await browser.newContext(options);
      try {
        const page = await context.newPage();
        await page.addInitScript(FIRST_PIXEL);
        const asked = Date.now();
        await page.goto(url);
        return (await firstPixelAt(page)) - asked;
      } finally {
        await context.close();
      }
    };
    const ways = {
      direct: shareUrl,
      iframe: `${hostOrigin}/frame?link=${encodeURIComponent(shareUrl)}`,
      element: `${hostOrigin}/element?link=${encodeURIComponent(shareUrl)}`,
    };
    const times: Record<keyof typeof ways, number[]> = { direct: [], iframe: [], element: [] };
    // One unmeasured try first: the engine's and Chromium's own first-use costs.
    if (!shareOnly) await firstFrame(ways.direct);
    for (let i = 0; i < (shareOnly ? 0 : SAMPLES); i++) for (const way of Object.keys(ways) as (keyof typeof ways)[]) times[way].push(await firstFrame(ways[way]));
    const extra = { samples: SAMPLES, load: loadavg().map((n) => Math.round(n * 100) / 100).join(' ') };
    for (const way of shareOnly ? [] : (Object.keys(ways) as (keyof typeof ways)[])) {
      report('viewer', `embed_first_frame_${way}_ms_p50`, percentile(times[way], 50), 'ms', { ...extra, measured: `a running session: page asked for -> first remote pixel shown (${way === 'direct' ? 'the share page itself' : way === 'iframe' ? 'the share page in an iframe of an allowed origin' : "<remote-browser-viewer>, the host page loading the engine's /element.js"}), a fresh browser context each try` });
      report('viewer', `embed_first_frame_${way}_ms_p90`, percentile(times[way], 90), 'ms', extra);
    }

    // The remote display's share of the viewer's area, the default, full and compact toolbar, phone and desktop.
    const screens = [
      { name: 'phone', options: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 1 } },
      { name: 'desktop', options: { viewport: { width: 1280, height: 800 } } },
    ];
    for (const { name, options } of screens) {
      // `default`: the share link as it is handed out (the one row since decisions.md 180).
      for (const toolbar of ['default', 'full', 'compact'] as const) {
        const context = await browser.newContext(options);
        try {
          const page = await context.newPage();
          await page.addInitScript(FIRST_PIXEL);
          await page.goto(toolbar === 'default' ? shareUrl : `${shareUrl}&toolbar=${toolbar}`);
          await firstPixelAt(page);
          const { share, toolbarPx } = await displayShare(page);
          // For the picture: the remote page redrawn at the new size (its colour low in the canvas).
          if (SCREENSHOTS) await page.waitForFunction(() => {
            const canvas = document.querySelector('.rbk-viewer__screen canvas') as HTMLCanvasElement;
            const [r, g, b] = canvas.getContext('2d')!.getImageData(canvas.width / 2, canvas.height * 0.9, 1, 1).data;
            return r === 0x2f && g === 0x6f && b === 0x4f;
          }, undefined, { timeout: 20_000 }).catch(() => undefined);
          if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, `viewer-${name}-${toolbar}.png`) });
          const size = `${options.viewport.width}x${options.viewport.height}`;
          report('viewer', `display_share_${name}_${toolbar}_pct`, share * 100, '%', { viewport: size, toolbar, chromePx: Math.round(toolbarPx), measured: "the remote picture's area over the viewer's (the share page filling the window), once the display follows the viewer's area" });
        } finally {
          await context.close();
        }
      }
    }
  } finally {
    await browser.close();
    if (vmId) await call('/vm/remove', { id: vmId }).catch(() => undefined);
    await engine.close();
    site.close();
    host.close();
    await rm(dir, { recursive: true, force: true });
  }
}
