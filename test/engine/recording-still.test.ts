// A recorded still page (issue 35, decisions.md 118) with real parts: a confined Chromium session
// recorded on a page that stands still until the test changes it. While only the recording watches
// and nothing moves, the session's video encoder is stopped (an operator sees it in `ps` as state
// T); a change made then is in the recording at the moment it happened; a person who starts
// watching the video meanwhile gets frames at once and keeps getting them while the page is still
// (the viewer judges stillness from them); and the recording's picture runs to the session's end.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findMarkedProcesses } from '../../src/engine/runtime/sandbox/processes.js';
import { recordedPlan, startEngine, type EngineFixture } from '../helpers/engine.js';
import { controlOf, waitFor } from '../helpers/session.js';
import { watchVideo } from '../helpers/video-client.js';

const STILL_PAGE = `<!doctype html><title>still</title><body style="margin:0;font:20px serif;background:#fff">
<h1>A still page</h1>${'<p>Paragraph of ordinary text to read.</p>'.repeat(8)}`;

let fixture: EngineFixture;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'rbk-recording-still-'));
  fixture = await startEngine({ name: 'recording-still', site: STILL_PAGE, ...recordedPlan() });
}, 120_000);

afterAll(async () => {
  await fixture?.close();
  await rm(scratch, { recursive: true, force: true });
});

/** The state letter (/proc/<pid>/stat) of the session's video encoder, or null while none runs. */
async function encoderState(dir: string): Promise<string | null> {
  for (const process of await findMarkedProcesses({ dir })) {
    try {
      if (!readFileSync(`/proc/${process.pid}/cmdline`, 'utf8').includes('x11grab')) continue;
      return readFileSync(`/proc/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[0]!;
    } catch {
      // Gone meanwhile.
    }
  }
  return null;
}

/** Each video frame of an MP4, decoded to 16x9 RGB, with its time (s) as ffmpeg's showinfo tells it. */
function framesOf(file: string): { time: number; rgb: Buffer }[] {
  const decoded = spawnSync('ffmpeg', ['-hide_banner', '-i', file, '-map', '0:v', '-fps_mode', 'passthrough', '-vf', 'scale=16:9,showinfo', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], { maxBuffer: 64 * 1024 * 1024 });
  const times = [...String(decoded.stderr).matchAll(/\] n: *\d+ pts: *-?\d+ pts_time:(-?[\d.]+)/g)].map((match) => Number(match[1]));
  const size = 16 * 9 * 3;
  expect(decoded.stdout.length, 'one picture per frame ffmpeg told').toBe(times.length * size);
  return times.map((time, i) => ({ time, rgb: decoded.stdout.subarray(i * size, (i + 1) * size) }));
}

/** Whether a small frame is mostly green (the page after the change), by its middle pixel. */
const green = (rgb: Buffer) => {
  const at = (4 * 16 + 8) * 3;
  return rgb[at]! < 80 && rgb[at + 1]! > 120 && rgb[at + 2]! < 80;
};

describe('a recorded still page', () => {
  it('stops grabbing while nothing moves, and the recording still shows a change when it happened', async () => {
    const { call, engine } = fixture;
    const created = await call('/vm/create', { browser: 'chromium', url: fixture.site.origin, record: true });
    expect(created.status).toBe('ok');
    const id = created.vmId as string;
    const control = (await controlOf(engine, id))!;
    const session = engine.runtime.get((await engine.store.session(id))!.runtime_id!)!;
    await waitFor(() => control.evaluate('document.title').catch(() => ''), (title) => title === 'still', 30_000);

    // Still, and only the recording watches: the encoder stops.
    expect(await waitFor(() => encoderState(session.dir), (state) => state === 'T', 30_000), 'the video encoder stopped on a still page').toBe('T');

    // A person starts watching the video: frames come at once, and keep coming while the page stays still.
    const watcher = await watchVideo(`${engine.url.replace('http', 'ws')}/share/${new URL(created.shareUrl as string).search.slice(1)}/video`);
    try {
      const first = await waitFor(() => watcher.frames[0], Boolean, 15_000);
      expect(first?.key, 'a watcher joining a stopped encoder gets a key frame').toBe(true);
      const from = first!.at;
      await waitFor(() => watcher.frames.filter((frame) => frame.at > from + 2000).length, (count) => count > 0, 15_000);
      const gaps = watcher.frames.filter((frame) => frame.at >= from).map((frame, i, all) => (i === 0 ? 0 : frame.at - all[i - 1]!.at));
      // A frame every 200 ms on a still screen; a second without one would read as a hole to the viewer.
      expect(Math.max(...gaps), 'the longest wait between a watcher\'s frames (ms)').toBeLessThan(1000);
    } finally {
      watcher.close();
    }

    // The person left: the encoder stops again; then the page changes.
    expect(await waitFor(() => encoderState(session.dir), (state) => state === 'T', 30_000)).toBe('T');
    const changedAt = Date.now();
    await control.evaluate('document.body.style.background = "#0a0"');
    await waitFor(() => encoderState(session.dir), (state) => state === 'T', 30_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await call('/vm/remove', { id })).status).toBe('ok');

    const { recording } = await waitFor(() => call(`/vm/recording?id=${id}`), (answer) => answer.recording?.state === 'ended', 30_000);
    const media = await fetch(`${engine.url}/v8/vm/recording/media?id=${id}`, { headers: { authorization: `Bearer ${fixture.account.key}` } });
    expect(media.status).toBe(200);
    const file = join(scratch, 'still.mp4');
    writeFileSync(file, Buffer.from(await media.arrayBuffer()));
    const frames = framesOf(file);
    const firstGreen = frames.find((frame) => green(frame.rgb));
    expect(firstGreen, 'the change is in the recording').toBeDefined();
    expect(frames.slice(0, frames.indexOf(firstGreen!)).some((frame) => green(frame.rgb))).toBe(false);
    // At the time it happened (a frame's time is when the engine got it: a grab and an encode later).
    const shownAt = Date.parse(recording.started) + firstGreen!.time * 1000;
    expect(shownAt - changedAt, 'from the change to its frame in the recording (ms)').toBeGreaterThan(-100);
    expect(shownAt - changedAt, 'from the change to its frame in the recording (ms)').toBeLessThan(1000);
    // The picture runs to the end: its last frame is within a second of the session's end.
    const row = (await engine.store.session(id))!;
    expect(row.ended_at! - (Date.parse(recording.started) + frames.at(-1)!.time * 1000), 'from the last frame to the session\'s end (ms)').toBeLessThan(1000);
    expect(green(frames.at(-1)!.rgb)).toBe(true);
  }, 180_000);
});
