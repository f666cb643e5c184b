// A site on loopback that plays video, for the video tests and benches (issue 25): a real
// 1280x720 30 fps clip made with Debian's ffmpeg (a test card with moving parts, libx264), served
// at /clip.mp4 beside the caller's pages, which loop it with `<video autoplay muted loop>`.
import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from './session.js';

/** In a session's page: how far its clip has played (s), 0 before it plays. */
const CLIP_PLAYED = '(() => { const v = document.querySelector("video"); return v ? v.currentTime : 0 })()';

/** Waits (up to 15 s) until the clip in a session's page has played half a second; answers how far it has (s). */
export async function clipPlaying(control: { evaluate(expression: string): Promise<unknown> }): Promise<number> {
  return Number(await waitFor(() => control.evaluate(CLIP_PLAYED).catch(() => 0), (t) => Number(t) > 0.5, 15_000));
}

/** A page whose whole window is the looping clip. */
export const FULL_WINDOW_VIDEO_PAGE = '<!doctype html><title>video</title><body style="margin:0;background:#000;overflow:hidden"><video src="/clip.mp4" autoplay muted loop style="display:block;width:100vw;height:100vh"></video>';

export interface VideoSite {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  close(): Promise<void>;
}

/**
 * Makes the clip (`seconds` long; pages loop it) and serves it with `pages` by path; any other
 * path gets the page at `/` (the favicon: 404).
 */
export async function startVideoSite(pages: Record<string, string>, seconds = 4): Promise<VideoSite> {
  const dir = await mkdtemp(join(tmpdir(), 'rbk-video-site-'));
  const clip = join(dir, 'clip.mp4');
  await promisify(execFile)('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=1280x720:rate=30:duration=${seconds}`, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', clip], { timeout: 60_000 });
  const clipBytes = (await stat(clip)).size;
  const site = createServer((request, response) => {
    if (request.url === '/clip.mp4') return void createReadStream(clip).pipe(response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': clipBytes }));
    if (request.url === '/favicon.ico') return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(pages[request.url ?? ''] ?? pages['/']);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(site.address() as AddressInfo).port}`,
    async close() {
      site.closeAllConnections();
      await new Promise((resolve) => site.close(resolve));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
