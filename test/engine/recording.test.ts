// Recordings (issue 35) with real parts: a Chromium session created with `record: true` on a plan
// that records plays a 440 Hz tone beside a moving red square and goes from page to page twice;
// its recording is read through the v8 API (the timeline with both navigations in order) and
// downloaded as MP4, which ffprobe and ffmpeg read on the host: its picture and sound streams, its
// length against the session's, the tone's pitch, and a frame from the middle showing the square.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/engine/config.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { waitFor } from '../helpers/session.js';
import { loudestFrequency, TONE_SCRIPT } from '../helpers/sound.js';

/** Each page plays the tone and moves the square; `next` names the page it goes on to after a while. */
function page(title: string, next: string | null): string {
  return `<!doctype html><title>${title}</title><body style="margin:0;background:#fff">
<div id="square" style="position:absolute;top:100px;width:200px;height:200px;background:#f00"></div>
<script>
var x = 0;
setInterval(function () { x = (x + 9) % 900; document.getElementById('square').style.left = x + 'px'; }, 33);
${TONE_SCRIPT}
${next ? `setTimeout(function () { location.href = '${next}'; }, 3000);` : ''}
</script></body>`;
}

const PAGES: Record<string, string> = { '/first': page('First', '/second'), '/second': page('Second', '/third'), '/third': page('Third', null) };

let fixture: EngineFixture;
let scratch: string;
/** Moves the engine's clock (ms ahead of now): retention is tested without waiting days. */
let clockAhead = 0;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'rbk-recording-files-'));
  const pro = DEFAULT_PLANS.find((plan) => plan.id === 'pro')!;
  fixture = await startEngine({
    name: 'recording',
    now: () => Date.now() + clockAhead,
    plans: ['recorded'],
    config: { plans: [...DEFAULT_PLANS, { ...pro, id: 'recorded', name: 'Recorded', recording: true }] },
    site: (request, response) => {
      const html = PAGES[request.url ?? ''];
      if (!html) return void response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    },
  });
}, 120_000);

afterAll(async () => {
  await fixture?.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('a recorded session', () => {
  it('is refused on a plan that does not record, with a clear denied naming the field', async () => {
    const other = await fixture.engine.accounts.create({ contact: 'no-recording@example.com', plans: ['pro'] });
    const response = await fetch(`${fixture.engine.url}/v8/vm/create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.apiKey.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ browser: 'chromium', record: true }),
    });
    const body = (await response.json()) as { status: string; message: string };
    expect(body.status).toBe('denied');
    expect(body.message).toMatch(/^record: recording sessions is not included in your plan/);
  });

  it('keeps its picture, sound and timeline, and hands them out as MP4 once it has ended', async () => {
    const { call, site, engine } = fixture;
    const created = await call('/vm/create', { browser: 'chromium', url: `${site.origin}/first`, record: true });
    expect(created.status).toBe('ok');
    const id = created.vmId as string;
    const linkId = new URL(created.shareUrl as string).search.slice(1);
    expect(await (await fetch(`${engine.url}/share/${linkId}`)).json()).toMatchObject({ recording: true });

    // Both navigations are on the timeline as they happen.
    const during = await waitFor(
      () => call(`/vm/recording?id=${id}`),
      (answer) => answer.recording?.timeline.some((entry: { url?: string }) => entry.url === `${site.origin}/third`),
      60_000,
    );
    expect(during.recording.state).toBe('recording');
    // A moment on the last page, then the session ends.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await call('/vm/remove', { id })).status).toBe('ok');
    const ended = await waitFor(() => call(`/vm/recording?id=${id}`), (answer) => answer.recording?.state === 'ended', 30_000);
    const { recording } = ended;
    const navigations = recording.timeline.filter((entry: { type: string }) => entry.type === 'navigation');
    expect(navigations.map((entry: { url: string }) => entry.url)).toEqual([`${site.origin}/first`, `${site.origin}/second`, `${site.origin}/third`]);
    expect(navigations.map((entry: { title: string }) => entry.title)).toEqual(['First', 'Second', 'Third']);
    const times = recording.timeline.map((entry: { time: string }) => Date.parse(entry.time));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(recording.timeline.at(-1)).toMatchObject({ type: 'ended', reason: 'removed' });
    expect(recording.timeline.filter((entry: { type: string }) => entry.type === 'ended')).toHaveLength(1);
    expect(recording.bytes).toBeGreaterThan(10_000);

    const media = await fetch(`${engine.url}/v8/vm/recording/media?id=${id}`, { headers: { authorization: `Bearer ${fixture.account.key}` } });
    expect(media.status).toBe(200);
    expect(media.headers.get('content-type')).toBe('video/mp4');
    const file = join(scratch, 'recording.mp4');
    writeFileSync(file, Buffer.from(await media.arrayBuffer()));
    const probe = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_type,codec_name,width,height', '-of', 'json', file], { encoding: 'utf8' })) as {
      format: { duration: string };
      streams: Array<{ codec_type: string; codec_name: string; width?: number; height?: number }>;
    };
    expect(probe.streams.map((stream) => `${stream.codec_type} ${stream.codec_name}`).sort()).toEqual(['audio opus', 'video h264']);
    const seconds = Number(probe.format.duration);
    // The recording lasts as long as the session did, within a second: its time 0 is its first
    // picture or sound, after the session was created and by the time its browser was on screen
    // (an encoder starting on a busy machine may take a moment longer), and it runs to the end.
    const row = (await engine.store.session(id))!;
    const started = Date.parse(recording.started);
    expect(started).toBeGreaterThanOrEqual(row.created_at);
    expect(started).toBeLessThanOrEqual(row.running_at! + 2000);
    expect(Math.abs(started + seconds * 1000 - row.ended_at!)).toBeLessThan(1000);
    expect(Math.abs(seconds * 1000 - recording.duration_ms)).toBeLessThan(1000);

    // The tone, from the last two seconds of sound.
    const pcm = execFileSync('ffmpeg', ['-v', 'error', '-sseof', '-2.5', '-i', file, '-t', '2', '-map', '0:a', '-ac', '1', '-ar', '48000', '-f', 's16le', 'pipe:1'], { maxBuffer: 16 * 1024 * 1024 });
    expect(loudestFrequency(new Int16Array(pcm.buffer, pcm.byteOffset, Math.floor(pcm.length / 2)))).toBe(440);
    // A frame from the middle: the red square is in it.
    const rgb = execFileSync('ffmpeg', ['-v', 'error', '-ss', String(seconds / 2), '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], { maxBuffer: 16 * 1024 * 1024 });
    let red = 0;
    for (let i = 0; i < rgb.length; i += 3) if (rgb[i]! > 200 && rgb[i + 1]! < 60 && rgb[i + 2]! < 60) red++;
    expect(red).toBeGreaterThan(200 * 200 * 0.8);

    // Kept until its days are over (the service's 30), counted on the account's meters meanwhile.
    expect((await call('/user/quota')).recording_mb_kept).toBeGreaterThan(0);
    clockAhead = 29 * 86_400_000;
    expect(await engine.recordings.forgetOld()).toBe(0);
    expect((await call(`/vm/recording?id=${id}`)).status).toBe('ok');
    clockAhead = 31 * 86_400_000;
    expect(await engine.recordings.forgetOld()).toBe(1);
    expect((await call(`/vm/recording?id=${id}`)).message).toMatch(/removed/);
    expect((await call('/user/quota')).recording_mb_kept).toBe(0);
    clockAhead = 0;
  }, 180_000);

  it('is removed on request once its session has ended, not before', async () => {
    const { call, site } = fixture;
    const created = await call('/vm/create', { browser: 'chromium', url: `${site.origin}/third`, record: true });
    const id = created.vmId as string;
    await waitFor(() => call(`/vm/data?id=${id}&wait=30000`), (answer) => answer.data?.[0]?.status !== 'starting', 60_000);
    expect(await call('/vm/recording/remove', { id })).toMatchObject({ status: 'denied', message: expect.stringMatching(/still running/) });
    await call('/vm/remove', { id });
    await waitFor(() => call(`/vm/recording?id=${id}`), (answer) => answer.recording?.state === 'ended', 30_000);
    expect(await call('/vm/recording/remove', { id })).toEqual({ status: 'ok' });
    expect((await call(`/vm/recording?id=${id}`)).status).toBe('denied');
    const media = await fetch(`${fixture.engine.url}/v8/vm/recording/media?id=${id}`, { headers: { authorization: `Bearer ${fixture.account.key}` } });
    expect(media.status).toBe(404);
    expect(((await media.json()) as { status: string }).status).toBe('denied');
  }, 120_000);
});
