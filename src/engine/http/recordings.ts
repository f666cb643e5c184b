// A recording's media over HTTP (issue 35, decisions.md 96): `GET /v8/vm/recording/media?id=`.
// The recorder keeps Matroska (recordings/recordings.ts); people get MP4 (H.264 and Opus), which
// every browser and player plays without us. ffmpeg copies the streams, encoding nothing, into
// fragmented MP4: a whole recording once into `media.mp4` beside it, then served with ranges; a
// session still recorded as what there is up to now. The bytes came from inside a session, so
// ffmpeg reads them as nobody (uid 65534), from a pipe, and writes to a pipe: it opens no file,
// and the engine alone reads and writes the recording's files.
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, statSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream';
import type { RecordingsAccess, Recordings } from '../recordings/recordings.js';
import { sendJson } from './respond.js';

const FFMPEG = '/usr/bin/ffmpeg';
const MP4 = 'video/mp4';

/** The user ffmpeg runs as: nobody, with no file of the recording's it could open. */
const NOBODY = 65534;
/** Copies at once on this engine: one more is answered 503 (try again), so requests cannot pile up processes. */
const MAX_REMUXES = 4;
let remuxing = 0;

/** Runs `work` as one of the engine's copies at once, or answers that it is busy. */
async function asOneCopy(response: ServerResponse, work: () => Promise<void>): Promise<void> {
  if (remuxing >= MAX_REMUXES) return sendJson(response, { status: 'error', message: 'recordings are being prepared for other requests; try again in a few seconds' }, 503, { 'retry-after': '5' });
  remuxing++;
  try {
    await work();
  } finally {
    remuxing--;
  }
}

/** ffmpeg copying the Matroska file (fed through its stdin) into fragmented MP4 on its stdout. */
function remux(mkv: string): ReturnType<typeof spawn> {
  const child = spawn(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-f', 'matroska', '-i', 'pipe:0', '-map', '0', '-c', 'copy', '-movflags', 'frag_keyframe+empty_moov+default_base_moof', '-f', 'mp4', 'pipe:1'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(process.getuid?.() === 0 ? { uid: NOBODY, gid: NOBODY } : {}),
  });
  pipeline(createReadStream(mkv), child.stdin!, () => undefined);
  return child;
}

/** Whether `mp4` was made from the Matroska file as it is now. */
function isCurrent(mp4: string, mkv: string): boolean {
  return existsSync(mp4) && statSync(mp4).mtimeMs >= statSync(mkv).mtimeMs;
}

/** The whole recording as `media.mp4`, made once (and again if the Matroska file is newer). */
async function wholeMp4(mkv: string): Promise<string> {
  const mp4 = join(dirname(mkv), 'media.mp4');
  if (isCurrent(mp4, mkv)) return mp4;
  const partial = `${mp4}.part`;
  const child = remux(mkv);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-400)));
  const written = new Promise<void>((resolve, reject) => pipeline(child.stdout!, createWriteStream(partial, { mode: 0o600 }), (error) => (error ? reject(error) : resolve())));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve).once('error', () => resolve(-1)));
  await written.catch(() => undefined);
  if (code !== 0) {
    await rm(partial, { force: true });
    throw new Error(`the recording could not be made into MP4: ${stderr.trim() || `ffmpeg exited with ${code}`}`);
  }
  await rename(partial, mp4);
  return mp4;
}

/** Answers the media request (its `Range` header, if any): the whole recording with ranges, or a running one as it is now. */
export async function sendRecordingMedia(rangeHeader: string | undefined, response: ServerResponse, media: { path: string; whole: boolean }): Promise<void> {
  if (!media.whole) {
    return asOneCopy(response, () => new Promise<void>((resolve) => {
      const child = remux(media.path);
      response.writeHead(200, { 'content-type': MP4, 'cache-control': 'no-store' });
      response.once('close', () => child.kill('SIGKILL'));
      child.once('close', () => resolve());
      pipeline(child.stdout!, response, () => child.kill('SIGKILL'));
    }));
  }
  let file = join(dirname(media.path), 'media.mp4');
  if (!isCurrent(file, media.path)) {
    let failure: Error | null = null;
    await asOneCopy(response, async () => {
      file = await wholeMp4(media.path).catch((error: Error) => ((failure = error), file));
    });
    if (response.headersSent) return;
    if (failure) return sendJson(response, { status: 'error', message: (failure as Error).message }, 500);
  }
  const size = statSync(file).size;
  const range = /^bytes=(\d*)-(\d*)$/.exec(rangeHeader ?? '');
  let start = 0;
  let end = size - 1;
  if (range && (range[1] || range[2])) {
    start = range[1] ? Number(range[1]) : Math.max(0, size - Number(range[2]));
    end = range[1] && range[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
    if (start > end || start >= size) {
      response.writeHead(416, { 'content-range': `bytes */${size}` });
      return void response.end();
    }
  }
  const partial = range !== null && (range[1] !== '' || range[2] !== '');
  response.writeHead(partial ? 206 : 200, {
    'content-type': MP4,
    'accept-ranges': 'bytes',
    'content-length': String(end - start + 1),
    ...(partial ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
  });
  pipeline(createReadStream(file, { start, end }), response, () => undefined);
}

/** The recordings this engine keeps, as the API reaches them (a cluster's node link wraps it: cluster/recordings-link.ts). */
export function recordingsHere(recordings: Recordings): RecordingsAccess {
  return {
    read: (row) => recordings.read(row),
    remove: (row) => recordings.remove(row),
    meters: (accountId) => recordings.meters(accountId),
    async sendMedia(range, response, row) {
      const media = await recordings.mediaOf(row);
      if ('message' in media) return sendJson(response, media, 404);
      await sendRecordingMedia(range, response, media);
    },
  };
}
