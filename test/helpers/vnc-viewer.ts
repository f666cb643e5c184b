// Test helper: a real VNC client (noVNC, in Debian Chromium driven by playwright-core) that
// connects to a session's RFB unix socket through the engine's bridge, to read the pixels a
// viewer would see.
import { createReadStream, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { WebSocketServer } from 'ws';
import type { Display } from '../../src/engine/runtime/display/display.js';
import { bridgeToDisplay } from '../../src/engine/channels/rfb/rfb-bridge.js';

const NOVNC_ROOT = join(process.cwd(), 'node_modules', '@novnc', 'novnc');
const PAGE = `<!doctype html><meta charset="utf-8"><body style="margin:0"><div id="screen" style="width:1280px;height:720px"></div>
<script type="module">
import RFB from '/novnc/core/rfb.js';
const rfb = new RFB(document.getElementById('screen'), 'ws://' + location.host + '/rfb');
rfb.scaleViewport = false;
window.rfb = rfb;
window.connected = new Promise((resolve, reject) => {
  rfb.addEventListener('connect', () => resolve(true));
  rfb.addEventListener('disconnect', (e) => reject(new Error('disconnected: ' + JSON.stringify(e.detail))));
});
window.pixel = (x, y) => Array.from(document.querySelector('#screen canvas').getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3));
</script>`;

export interface VncViewer {
  page: Page;
  /** RGB at a framebuffer position, as the viewer drew it. */
  pixel(x: number, y: number): Promise<[number, number, number]>;
  /** Waits until the pixel matches within a tolerance; returns the last value seen. */
  waitForPixel(x: number, y: number, rgb: [number, number, number], timeoutMs?: number): Promise<[number, number, number]>;
  close(): Promise<void>;
}

let browser: Browser | undefined;

async function sharedBrowser(): Promise<Browser> {
  browser ??= await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return browser;
}

export async function closeViewerBrowser(): Promise<void> {
  await browser?.close();
  browser = undefined;
}

export async function openVncViewer(display: Display): Promise<VncViewer> {
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    if (url.pathname === '/') {
      response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
      return;
    }
    const file = normalize(join(NOVNC_ROOT, url.pathname.replace(/^\/novnc\//, '')));
    if (!url.pathname.startsWith('/novnc/') || !file.startsWith(NOVNC_ROOT) || !existsSync(file)) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': extname(file) === '.js' ? 'text/javascript' : 'application/octet-stream' });
    createReadStream(file).pipe(response);
  });
  const sockets = new WebSocketServer({ server, path: '/rfb' });
  sockets.on('connection', (socket) => void bridgeToDisplay(socket, () => display.connect()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const page = await (await sharedBrowser()).newPage({ viewport: { width: 1300, height: 740 } });
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.evaluate('window.connected');
  const pixel = (x: number, y: number) => page.evaluate(([px, py]) => (window as any).pixel(px, py), [x, y]) as Promise<[number, number, number]>;
  return {
    page,
    pixel,
    async waitForPixel(x, y, rgb, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      let last: [number, number, number] = [0, 0, 0];
      while (Date.now() < deadline) {
        last = await pixel(x, y).catch(() => last);
        if (last.every((v, i) => Math.abs(v - rgb[i]!) <= 8)) return last;
        await new Promise((r) => setTimeout(r, 50));
      }
      return last;
    },
    async close() {
      await page.close();
      for (const client of sockets.clients) client.terminate();
      sockets.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
