// Test helper for the replay end-to-end tests (issue 35): an engine whose plan records, serving a
// white first page that goes on to a solid green second one; a recorded session made through a
// proxy route and ended once it showed the green page for a while; and how green a replay's video
// frame is now.
import type { Page } from 'playwright-core';
import { recordedPlan, startEngine, type EngineFixture } from './engine.js';
import { waitFor } from './session.js';

const GREEN = '#00c853';
/** The first page: white with dark text, going on to the second after a while. */
const PAGES: Record<string, string> = {
  '/first': `<!doctype html><title>First</title><body style="margin:0;background:#fff;font:48px sans-serif"><h1>first page</h1><script>setTimeout(function () { location.href = '/second'; }, 4000);</script></body>`,
  '/second': `<!doctype html><title>Second</title><body style="margin:0;background:${GREEN}"></body>`,
};

/** An engine with the account on a plan that records, and the two pages on its site. */
export function startRecordingEngine(name: string, now?: () => number): Promise<EngineFixture> {
  return startEngine({
    name,
    ...(now ? { now } : {}),
    ...recordedPlan(),
    site: (request, response) => {
      const html = PAGES[request.url ?? ''];
      if (!html) return void response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    },
  });
}

/**
 * A recorded session through a proxy route (`api` calls it), from the first page to two seconds
 * and a half on the green one, then ended; answers its handle once the recording is whole.
 */
export async function recordTwoPages(api: (path: string, init?: RequestInit) => Promise<Response>, siteOrigin: string): Promise<string> {
  const created = (await (await api('/sessions', { method: 'POST', body: JSON.stringify({ browser: 'chromium', url: `${siteOrigin}/first`, record: true }) })).json()) as { handle: string };
  const recording = `/sessions/${encodeURIComponent(created.handle)}/recording`;
  const recordingOf = async () => (await (await api(recording)).json()) as { recording?: { state: string; timeline: Array<{ url?: string; time: string }> } };
  const reached = await waitFor(recordingOf, (answer) => answer.recording?.timeline.some((entry) => entry.url === `${siteOrigin}/second`) ?? false, 90_000);
  const second = Date.parse(reached.recording!.timeline.find((entry) => entry.url === `${siteOrigin}/second`)!.time);
  await waitFor(async () => Date.now(), (now) => now > second + 2500, 10_000);
  await api(`/sessions/${encodeURIComponent(created.handle)}`, { method: 'DELETE' });
  await waitFor(recordingOf, (answer) => answer.recording?.state === 'ended', 60_000);
  return created.handle;
}

/** The video's frame now, drawn on a canvas: the share of the page area near the second page's green. */
export function greenShare(page: Page): Promise<number> {
  return page.evaluate(() => {
    const video = document.querySelector('video')!;
    const canvas = document.createElement('canvas');
    canvas.width = video.videoWidth;
    canvas.height = video.videoHeight;
    const context = canvas.getContext('2d')!;
    context.drawImage(video, 0, 0);
    // The page's area: below the browser's own bars, away from the edges.
    const { data } = context.getImageData(Math.round(canvas.width * 0.1), Math.round(canvas.height * 0.3), Math.round(canvas.width * 0.8), Math.round(canvas.height * 0.6));
    let green = 0;
    for (let i = 0; i < data.length; i += 4) if (Math.abs(data[i]! - 0x00) < 40 && Math.abs(data[i + 1]! - 0xc8) < 40 && Math.abs(data[i + 2]! - 0x53) < 40) green++;
    return green / (data.length / 4);
  });
}
