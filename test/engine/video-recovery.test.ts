// A watcher whose frames were dropped draws again soon, and the others keep getting frames (issue 25,
// decisions.md 72): a real engine with key frames only every 10 s, a confined Chromium session
// playing a 720p clip, and two watchers of its video channel. One stops receipting for a while,
// as a viewer whose link or page stalls: the engine drops its frames. Once it answers again it
// gets a key frame within a few seconds, not at the encoder's next own key frame, and the other
// watcher's frames go on throughout, each new format followed by a key frame.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { controlOf, waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';
import { watchVideo, type VideoClient } from '../helpers/video-client.js';
import { startVideoEngine, type VideoEngine } from '../helpers/video-engine.js';
import { clipPlaying, FULL_WINDOW_VIDEO_PAGE, type VideoSite } from '../helpers/video-site.js';

const KEY_FRAME_SECONDS = 10;

let fixture: VideoEngine | undefined;
let engine: Engine;
let site: VideoSite;
let key: string;

const api = v8Caller(() => engine.url, () => key);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  ({ engine, site, key } = fixture = await startVideoEngine('video-recovery', { '/': FULL_WINDOW_VIDEO_PAGE }, { keyFrameSeconds: KEY_FRAME_SECONDS }));
}, 120_000);

afterAll(async () => {
  await fixture?.close();
});

/** Each format message is followed by a key frame: a frame after a new format can always be drawn. */
function everyFormatStartsWithAKeyFrame(watcher: VideoClient): boolean[] {
  return watcher.formats.map((format) => watcher.frames.find((frame) => frame.at >= format.at)?.key ?? true);
}

describe('a watcher whose frames were dropped', () => {
  it('gets a key frame soon after its link clears, while another watcher keeps getting frames', async () => {
    const created = await api('/vm/create', { browser: 'chromium', url: site.origin });
    expect(created.status).toBe('ok');
    const control = await controlOf(engine, created.vmId);
    expect(await clipPlaying(control!)).toBeGreaterThan(0.5);
    const url = `${engine.url.replace('http', 'ws')}/share/${new URL(created.shareUrl).search.slice(1)}/video`;
    const steady = await watchVideo(url);
    let stalling: VideoClient | undefined;
    try {
      await waitFor(() => steady.frames.length, (n) => n >= 15, 15_000);
      stalling = await watchVideo(url);
      await waitFor(() => stalling!.frames.length, (n) => n >= 15, 15_000);
      expect(stalling.frames[0]!.key).toBe(true);

      // Its page stalls for 1.5 s: no receipts. The engine stops sending it frames.
      stalling.pauseReceipts();
      const pausedAt = performance.now();
      await pause(1500);
      const duringStall = stalling.frames.filter((frame) => frame.at > pausedAt + 700);
      expect(duringStall, 'frames sent to a watcher whose receipts stopped (they would queue)').toEqual([]);
      const steadyDuringStall = steady.frames.filter((frame) => frame.at > pausedAt && frame.at <= pausedAt + 1500);
      expect(steadyDuringStall.length, 'the other watcher kept getting frames').toBeGreaterThan(20);

      // It answers again: a key frame comes within seconds, long before the encoder's own (every 10 s).
      const resumedAt = performance.now();
      stalling.resumeReceipts();
      const recovered = await waitFor(() => stalling!.frames.find((frame) => frame.at > resumedAt), (frame) => frame !== undefined, 8_000);
      expect(recovered, 'a frame after the stall').toBeDefined();
      expect(recovered!.key).toBe(true);
      expect(recovered!.at - resumedAt).toBeLessThan(4000);
      await pause(1000);
      expect(stalling.frames.filter((frame) => frame.at > recovered!.at && !frame.key).length, 'frames after the key frame').toBeGreaterThan(15);

      // The other watcher got every new encoder's format and, right after it, its key frame.
      expect(steady.formats.length).toBeGreaterThanOrEqual(3);
      expect(everyFormatStartsWithAKeyFrame(steady)).not.toContain(false);
      expect(everyFormatStartsWithAKeyFrame(stalling)).not.toContain(false);
    } finally {
      steady.close();
      stalling?.close();
      await api('/vm/remove', { id: created.vmId });
    }
  }, 120_000);
});
