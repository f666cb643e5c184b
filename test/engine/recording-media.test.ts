// A recording's media cannot be held by clients that never read (issue 47, finding 2), with real
// parts: a Chromium session records a page of moving noise (the encoder's full bit rate) until its
// MP4 is larger than a socket's buffers; five keyless requests through its replay link ask for the
// media and never read. Another account's media request still gets its MP4 within seconds, and the
// engine cuts off the five once their bytes have waited MEDIA_STALL_MS for them.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEDIA_STALL_MS } from '../../src/engine/recordings/media.js';
import { recordedPlan, startEngine, type EngineFixture } from '../helpers/engine.js';
import { waitFor } from '../helpers/session.js';

/** Noise in blocks, a new picture every frame: nothing for the encoder to save. */
const NOISE = `<!doctype html><title>Noise</title><body style="margin:0;background:#000">
<canvas id="c" width="320" height="180" style="position:fixed;left:0;top:0;width:100vw;height:100vh;image-rendering:pixelated"></canvas>
<script>
var context = document.getElementById('c').getContext('2d'), image = context.createImageData(320, 180), pixels = new Uint32Array(image.data.buffer);
function draw() { for (var i = 0; i < pixels.length; i++) pixels[i] = (Math.random() * 0x1000000) | 0xff000000; context.putImageData(image, 0, 0); requestAnimationFrame(draw); }
draw();
</script></body>`;
/** Larger than what the loopback's buffers take from a client that does not read, so a stream through them blocks. */
const RECORDED_BYTES = 8 * 1024 * 1024;

let fixture: EngineFixture;

beforeAll(async () => {
  fixture = await startEngine({ name: 'recording-media', ...recordedPlan(), site: NOISE });
}, 120_000);

afterAll(async () => {
  await fixture?.close();
});

/** A GET of `url` whose client reads nothing: the socket is paused before its first byte comes. */
function neverReading(url: string): Socket {
  const { hostname, port, pathname } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.pause();
  socket.write(`GET ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
  return socket;
}

/** What a paused socket holds and still gets once read: its answer's head and how many body bytes came before it closed (or 10 s passed). */
function readRest(socket: Socket): Promise<{ head: string; body: number; closed: boolean }> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    let closed = false;
    const done = () => {
      const split = received.indexOf('\r\n\r\n');
      resolve({ head: received.subarray(0, split).toString('latin1'), body: received.length - split - 4, closed });
    };
    const timer = setTimeout(() => (socket.destroy(), done()), 10_000);
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    socket.once('close', () => ((closed = true), clearTimeout(timer), done()));
    socket.on('error', () => undefined);
    socket.resume();
  });
}

describe('a recording\'s media', () => {
  it('is served to every account while clients that never read hold replay links\' media, and those clients are cut off', async () => {
    const { call, engine, site } = fixture;
    const created = await call('/vm/create', { browser: 'chromium', url: `${site.origin}/noise`, record: true });
    expect(created.status).toBe('ok');
    const id = created.vmId as string;
    // Another account records a session of its own meanwhile.
    const other = await engine.accounts.create({ contact: 'media-other@example.com', plans: ['recorded'] });
    const otherCreate = (await (await fetch(`${engine.url}/v8/vm/create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.apiKey.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ browser: 'chromium', url: `${site.origin}/noise`, record: true }),
    })).json()) as { status: string; vmId: string };
    expect(otherCreate.status).toBe('ok');
    await waitFor(() => call(`/vm/recording?id=${id}`), (answer) => answer.recording?.bytes > RECORDED_BYTES, 150_000);
    expect((await call(`/vm/recording?id=${id}`)).recording.state).toBe('recording');

    const link = await call('/vm/recording/link', { id });
    expect(link.status).toBe('ok');
    const holders = Array.from({ length: 5 }, () => neverReading(`${link.url}/media`));
    // Each of the five is answered first (the socket, paused, still takes in its first bytes).
    await waitFor(async () => holders.filter((socket) => socket.readableLength > 0).length, (answered) => answered === holders.length, 60_000);
    const asked = Date.now();
    const otherMedia = await waitFor(
      () => fetch(`${engine.url}/v8/vm/recording/media?id=${otherCreate.vmId}`, { headers: { authorization: `Bearer ${other.apiKey.key}` } }),
      (response) => response.status !== 503 || Date.now() - asked > 30_000,
      40_000,
    );
    expect(otherMedia.status).toBe(200);
    expect(otherMedia.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await otherMedia.arrayBuffer()).subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect(Date.now() - asked).toBeLessThan(30_000);

    // The five: each answered (a slot for at most two at once, the rest told to try again), and
    // each MP4 cut off once its bytes waited for the client, never sent whole to one that did not read.
    await waitFor(async () => Date.now(), (now) => now > asked + MEDIA_STALL_MS + 5000, MEDIA_STALL_MS + 10_000);
    const answers = await Promise.all(holders.map(readRest));
    const served = answers.filter((answer) => / 200 /.test(answer.head.split('\r\n')[0]!));
    expect(served.length).toBeGreaterThanOrEqual(1);
    expect(served.length).toBeLessThanOrEqual(2);
    for (const answer of answers.filter((a) => !served.includes(a))) expect(answer.head).toMatch(/^HTTP\/1\.1 503/);
    for (const answer of served) {
      const length = Number(/content-length: (\d+)/i.exec(answer.head)?.[1]);
      expect(length).toBeGreaterThan(RECORDED_BYTES / 2);
      expect(answer.closed).toBe(true);
      expect(answer.body).toBeLessThan(length);
    }
    await call('/vm/remove', { id });
    await fetch(`${engine.url}/v8/vm/remove`, { method: 'POST', headers: { authorization: `Bearer ${other.apiKey.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ id: otherCreate.vmId }) });
  }, 300_000);
});
