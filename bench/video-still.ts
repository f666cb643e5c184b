// `npm run bench -- video-still` (issue 35, decisions.md 108): how soon a change on a still page
// reaches a watcher of its video, with unchanged frames dropped before the encoder and with every
// grabbed frame encoded (as before), in one run. A real engine per setting, a confined Chromium
// session on a still page, a watcher (a Node client that receipts as the viewer does); each round
// waits until the picture has settled (its frames tiny), changes a box's colour through DevTools
// and times the first frame that carries the change (a frame of 500 bytes or more). Also the frames
// a second the watcher gets while the page is still.
import { loadavg } from 'node:os';
import { controlOf, waitFor } from '../test/helpers/session.js';
import { v8Caller } from '../test/helpers/site.js';
import { watchVideo } from '../test/helpers/video-client.js';
import { startVideoEngine } from '../test/helpers/video-engine.js';
import { percentile, report } from './stats.js';

const ROUNDS = Number(process.env.RBK_BENCH_VIDEO_STILL_ROUNDS ?? 15);
const CHANGE_BYTES = 500;
const PAGE = `<!doctype html><title>still</title><body style="margin:0;font:20px serif;background:#fff">
<h1>A still page</h1>${'<p>Paragraph of ordinary text to read. Paragraph of ordinary text to read.</p>'.repeat(12)}
<div id="box" style="position:absolute;left:300px;top:200px;width:400px;height:300px;background:#c00"></div>`;

export async function videoStillBench(): Promise<void> {
  for (const dropUnchanged of [true, false]) {
    const fixture = await startVideoEngine(`bench-video-still-${dropUnchanged}`, { '/': PAGE }, { dropUnchanged });
    const api = v8Caller(() => fixture.engine.url, () => fixture.key);
    const created = await api('/vm/create', { browser: 'chromium', url: fixture.site.origin });
    try {
      const control = (await controlOf(fixture.engine, created.vmId))!;
      await waitFor(() => control.evaluate('document.title').catch(() => ''), (title) => title === 'still', 20_000);
      const watcher = await watchVideo(`${fixture.engine.url.replace('http', 'ws')}/share/${new URL(created.shareUrl).search.slice(1)}/video`);
      const since = (at: number) => watcher.frames.filter((frame) => frame.at > at);
      const settled = () => waitFor(() => since(performance.now() - 1000), (frames) => frames.length > 0 && frames.every((frame) => frame.key || frame.bytes < CHANGE_BYTES), 20_000);
      const latencies: number[] = [];
      const stillRates: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        await settled();
        const stillFrom = performance.now();
        await new Promise((r) => setTimeout(r, 1000));
        stillRates.push(since(stillFrom).length);
        const changedAt = performance.now();
        await control.evaluate(`document.getElementById("box").style.background = "${round % 2 ? '#c00' : '#06c'}"`);
        const frame = await waitFor(() => since(changedAt).find((f) => !f.key && f.bytes >= CHANGE_BYTES), (f) => f !== undefined, 10_000);
        if (frame) latencies.push(frame.at - changedAt);
      }
      watcher.close();
      latencies.sort((a, b) => a - b);
      stillRates.sort((a, b) => a - b);
      report('video-still', dropUnchanged ? 'change to watcher, unchanged frames dropped' : 'change to watcher, every frame encoded', percentile(latencies, 50), 'ms', {
        p90: Math.round(percentile(latencies, 90)),
        rounds: latencies.length,
        stillFramesPerSecond: percentile(stillRates, 50),
        load: Math.round(loadavg()[0]! * 10) / 10,
      });
    } finally {
      await api('/vm/remove', { id: created.vmId });
      await fixture.close();
    }
  }
}
