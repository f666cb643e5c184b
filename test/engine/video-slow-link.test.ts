// Video on a slow link (issue 25, decisions.md 67-68): a real engine with `video` on, a confined
// Chromium session playing a 1280x720 30 fps clip, and a watcher of its video channel behind a
// 2 Mbit/s link (test/helpers/throttled-link.ts: TCP backpressure, the engine's socket really
// backs up). The encoder steps down to a bit rate the link carries, the frames keep coming (not
// key frames only), and they stay current: once the clip stops, the still picture reaches the
// watcher at once rather than after seconds of queued motion.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { startThrottledLink, type ThrottledLink } from '../helpers/throttled-link.js';
import { controlOf, waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';
import { watchVideo } from '../helpers/video-client.js';
import { startVideoEngine, type VideoEngine } from '../helpers/video-engine.js';
import { clipPlaying, FULL_WINDOW_VIDEO_PAGE, type VideoSite } from '../helpers/video-site.js';

let fixture: VideoEngine | undefined;
let engine: Engine;
let site: VideoSite;
let origin: string;
let key: string;
let link: ThrottledLink;

const api = v8Caller(() => engine.url, () => key);

beforeAll(async () => {
  ({ engine, site, key } = fixture = await startVideoEngine('video-link', { '/': FULL_WINDOW_VIDEO_PAGE }));
  origin = site.origin;
  link = await startThrottledLink({ port: Number(new URL(engine.url).port), kbitPerSecond: 2000 });
}, 120_000);

afterAll(async () => {
  await link?.close();
  await fixture?.close();
});

describe('video on a 2 Mbit/s link', () => {
  it('steps the encoder down to what the link carries, and the watcher keeps getting current frames', async () => {
    const created = await api('/vm/create', { browser: 'chromium', url: origin });
    expect(created.status).toBe('ok');
    const control = await controlOf(engine, created.vmId);
    expect(await clipPlaying(control!)).toBeGreaterThan(0.5);
    const linkId = new URL(created.shareUrl).search.slice(1);
    const watcher = await watchVideo(link.through(`${engine.url.replace('http', 'ws')}/share/${linkId}/video`));
    try {
      // The ceiling (2.5 Mbit/s) is more than the link: the encoder restarts at a lower rung.
      await waitFor(() => watcher.formats.at(-1)?.bitrateKbps ?? 0, (kbps) => kbps > 0 && kbps < 2500, 20_000);
      expect(watcher.formats[0]!.bitrateKbps).toBe(2500);
      const stepped = watcher.formats.at(-1)!;
      expect(stepped.bitrateKbps).toBeLessThan(2500);
      // Frames keep coming at the lower rate: most of the encoder's 30 a second, not key frames alone.
      await new Promise((resolve) => setTimeout(resolve, 4000));
      const since = performance.now() - 3000;
      const recent = watcher.frames.filter((frame) => frame.at >= since);
      expect(recent.length).toBeGreaterThan(30);
      expect(recent.filter((frame) => !frame.key).length).toBeGreaterThan(20);

      // The clip stops: the still picture (a few bytes a frame) arrives behind at most a little of
      // the motion, not behind seconds of it queued in the sockets (a queue of 1 MB there, as the
      // link's buffers hold without the drop rule, takes 4 s at 2 Mbit/s to drain).
      await control!.evaluate('document.querySelector("video").remove()');
      const stoppedAt = performance.now();
      const still = await waitFor(() => watcher.frames.find((frame) => frame.at > stoppedAt && !frame.key && frame.bytes < 1000), Boolean, 15_000);
      expect(still).toBeTruthy();
      const motionAfterStop = watcher.frames.filter((frame) => frame.at > stoppedAt && frame.at < still!.at).reduce((sum, frame) => sum + frame.bytes, 0);
      expect(motionAfterStop).toBeLessThan(250_000);
    } finally {
      watcher.close();
      await api('/vm/remove', { id: created.vmId });
    }
  }, 120_000);
});
