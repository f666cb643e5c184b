// End to end in Debian Chromium: the viewer site's <ShareViewer> (dist/viewer-site, as built) on
// http://127.0.0.1 (a secure context, so WebCodecs exists) against a stand-in share API that serves
// the sound channel's contract with real Opus packets of a 440 Hz tone (made here by Debian's
// ffmpeg). An AnalyserNode tapped on the player's output hears 440 Hz; Mute makes it silent.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { heardNow, SPEAKER_TAP } from '../helpers/hearing.js';

const SITE = fileURLToPath(new URL('../../dist/viewer-site', import.meta.url));
const LINK_ID = 'c291bmQtZTJlLWxpbmstaWQ';
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
const STATE = { status: 'ok', state: 'running', language: 'en', browserName: 'Chromium', leaveUrl: null, control: true, viewers: 1, sound: true };

let server: Server;
let origin: string;
let browser: Browser;
let packets: Buffer[];

/** Ten seconds of a 440 Hz tone as Opus packets of 20 ms, the way the engine's encoder makes them. */
async function tonePackets(): Promise<Buffer[]> {
  const ogg = await new Promise<Buffer>((resolve, reject) =>
    execFile(
      'ffmpeg',
      ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-t', '10', '-ac', '2', '-c:a', 'libopus', '-frame_duration', '20', '-application', 'lowdelay', '-f', 'ogg', '-'],
      { encoding: 'buffer', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    ),
  );
  return oggPackets(ogg).slice(2); // OpusHead and OpusTags are not audio
}

/** The packets of an Ogg stream: each page's segments joined, a 255-byte segment continuing the packet. */
function oggPackets(ogg: Buffer): Buffer[] {
  const found: Buffer[] = [];
  let pending: Buffer[] = [];
  for (let at = 0; at + 27 <= ogg.length; ) {
    if (ogg.toString('latin1', at, at + 4) !== 'OggS') throw new Error(`no Ogg page at ${at}`);
    const segments = ogg[at + 26]!;
    let body = at + 27 + segments;
    for (let i = 0; i < segments; i++) {
      const size = ogg[at + 27 + i]!;
      pending.push(ogg.subarray(body, body + size));
      body += size;
      if (size < 255) {
        found.push(Buffer.concat(pending));
        pending = [];
      }
    }
    at = body;
  }
  return found;
}

/** The sound channel as the engine serves it: the format, then one packet every 20 ms of wall time, looping. */
function serveSound(socket: WebSocket): void {
  socket.send(JSON.stringify({ codec: 'opus', sampleRate: 48000, channels: 2, frameMs: 20 }));
  const started = Date.now();
  let sent = 0;
  const timer = setInterval(() => {
    while (sent <= (Date.now() - started) / 20) socket.send(packets[sent++ % packets.length]!);
  }, 5);
  socket.on('close', () => clearInterval(timer));
}

beforeAll(async () => {
  packets = await tonePackets();
  const sockets = new WebSocketServer({ noServer: true });
  server = createServer(async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://site').pathname;
    if (path === `/share/${LINK_ID}`) return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(STATE));
    if (path === `/share/${LINK_ID}/ping`) return void response.writeHead(204).end();
    if (path === `/share/${LINK_ID}/events`) {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      return void response.write(`event: state\ndata: ${JSON.stringify(STATE)}\n\n`);
    }
    const file = path === '/en/s' ? 'index.html' : normalize(path).replace(/^(\.\.[/\\])+/, '');
    try {
      const body = await readFile(join(SITE, file));
      response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  server.on('upgrade', (request, socket, head) => {
    const path = new URL(request.url ?? '/', 'http://site').pathname;
    sockets.handleUpgrade(request, socket, head, (ws) => {
      // No display stands behind this share API: the picture's connection is refused, as for a session whose display is not up.
      if (path === `/share/${LINK_ID}/sound`) serveSound(ws);
      else ws.close(4001, 'no display');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    // Playwright mutes Chromium by default; sound must reach the page's audio graph unmuted, and
    // start without a click (a person's first click is covered by "Tap to hear").
    ignoreDefaultArgs: ['--mute-audio'],
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  server?.close();
});



describe('the viewer plays the session\'s sound', () => {
  it('plays the remote browser\'s 440 Hz tone, and Mute silences it', async () => {
    const page = await browser.newPage();
    try {
      await page.addInitScript(SPEAKER_TAP);
      await page.goto(`${origin}/en/s?${LINK_ID}`);
      const mute = page.getByRole('button', { name: 'Mute', exact: true });
      await mute.waitFor({ timeout: 20_000 });
      await expect.poll(() => page.locator('.rbk-viewer__sound').getAttribute('data-sound'), { timeout: 10_000 }).toBe('playing');

      await expect.poll(async () => (await heardNow(page)).level, { timeout: 10_000 }).toBeGreaterThan(0.05);
      // One bin is 48000 / 8192 ≈ 5.9 Hz wide. Read until the tone is what is heard: on a loaded
      // CI machine this test's own packet server once fell behind while the player was still
      // settling its lead, and the spectrum of that moment peaked elsewhere (762 Hz).
      await expect.poll(async () => Math.abs((await heardNow(page)).peakHz - 440), { timeout: 10_000 }).toBeLessThan(12);

      await mute.click();
      await expect.poll(() => mute.getAttribute('aria-pressed')).toBe('true');
      await expect.poll(async () => (await heardNow(page)).level, { timeout: 2000 }).toBeLessThan(1e-4);

      await mute.click();
      await expect.poll(async () => (await heardNow(page)).level, { timeout: 2000 }).toBeGreaterThan(0.05);
      expect(Math.abs((await heardNow(page)).peakHz - 440)).toBeLessThan(12);
    } finally {
      await page.close();
    }
  }, 60_000);
});
