// A still screen costs next to nothing to watch or record (issue 35, decisions.md 108): a real
// engine and a confined Chromium session on a page that stands still until the test changes it.
// Its watcher gets a frame every fraction of a second (so the viewer can judge stillness and the
// recording's picture runs on), far fewer than the encoder grabs; when the page changes, the
// change reaches the watcher as a larger frame; and the frames that follow a change are all sent,
// not just the changed one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { DEFAULT_VIDEO } from '../../src/engine/runtime/capture/video.js';
import { controlOf, waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';
import { watchVideo } from '../helpers/video-client.js';
import { startVideoEngine, type VideoEngine } from '../helpers/video-engine.js';

const STILL_PAGE = `<!doctype html><title>still</title><body style="margin:0;font:20px serif;background:#fff">
<h1>A still page</h1>${'<p>Paragraph of ordinary text to read. Paragraph of ordinary text to read.</p>'.repeat(12)}
<div id="box" style="position:absolute;left:300px;top:200px;width:400px;height:300px"></div>`;

let fixture: VideoEngine | undefined;
let engine: Engine;
let key: string;

const api = v8Caller(() => engine.url, () => key);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  ({ engine, key } = fixture = await startVideoEngine('video-still', { '/': STILL_PAGE }));
}, 120_000);

afterAll(async () => {
  await fixture?.close();
});

describe('a still page', () => {
  it('sends a few frames a second while still, and a change at once', async () => {
    const created = await api('/vm/create', { browser: 'chromium', url: fixture!.site.origin });
    expect(created.status).toBe('ok');
    const control = (await controlOf(engine, created.vmId))!;
    await waitFor(() => control.evaluate('document.title').catch(() => ''), (title) => title === 'still', 15_000);
    const watcher = await watchVideo(`${engine.url.replace('http', 'ws')}/share/${new URL(created.shareUrl).search.slice(1)}/video`);
    try {
      // Still: once x264 has sharpened the picture (its frames are then tiny), far fewer frames
      // come than are grabbed.
      const since = (at: number) => watcher.frames.filter((frame) => frame.at > at);
      const settled = await waitFor(
        () => since(performance.now() - 1000),
        (frames) => frames.length >= 2 && frames.every((frame) => frame.bytes < 1000),
        30_000,
      );
      expect(settled.every((frame) => frame.bytes < 1000), 'a still picture settles to tiny frames').toBe(true);
      const from = performance.now();
      await pause(3000);
      const still = since(from);
      expect(still.length, 'frames in 3 s of a still page').toBeLessThan(DEFAULT_VIDEO.fps);
      // ... but some: the viewer reads stillness from frames, and the recording's picture runs on.
      expect(still.length, 'frames in 3 s of a still page').toBeGreaterThanOrEqual(3);

      // A change: a frame carrying it comes, larger than the still ones.
      const changedAt = performance.now();
      await control.evaluate('document.getElementById("box").style.background = "#c00"');
      const changed = await waitFor(() => since(changedAt).find((frame) => frame.bytes >= 1000), (frame) => frame !== undefined, 10_000);
      expect(changed, 'a frame with the change').toBeDefined();

      // Motion: every frame grabbed is sent (the box moves each animation frame for 2 s).
      await control.evaluate(`(() => { const box = document.getElementById("box"); const end = performance.now() + 2000;
        const step = (t) => { box.style.left = (300 + Math.round(t) % 500) + "px"; if (t < end) requestAnimationFrame(step); };
        requestAnimationFrame(step); })()`);
      const movingFrom = performance.now() + 300;
      await pause(1800);
      // A frame rate above the still one (half of what 3 s gave in 1.5 s).
      expect(since(movingFrom).length, 'frames in 1.5 s of motion').toBeGreaterThan(still.length / 2);
    } finally {
      watcher.close();
      await api('/vm/remove', { id: created.vmId });
    }
  }, 120_000);
});
