// A recording's media over HTTP (issue 35, decisions.md 96): `GET /v8/vm/recording/media?id=`.
// The recorder keeps Matroska (recordings/recordings.ts); people get MP4 (H.264 and Opus), which
// every browser and player plays without us. ffmpeg copies the streams, encoding nothing, into
// fragmented MP4: a whole recording once into `media.mp4` beside it, then served with ranges; a
// session still recorded as what there is up to now. The bytes came from inside a session, so
// ffmpeg reads them as nobody (uid 65534), from a pipe, and writes to a pipe: it opens no file,
// and the engine alone reads and writes the recording's files. A conversion holds one of a few
// slots, shared fairly between accounts, until its file is written or its deadline passes, never
// while a client reads; a client that stops reading is cut off (decisions.md 128, issue 47).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, statSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream';
import type { RecordingsAccess, Recordings } from './recordings.js';
import { RECORDING_MP4 } from '../runtime/index.js';
import { sendJson } from '../http/respond.js';

const FFMPEG = '/usr/bin/ffmpeg';
const MP4 = 'video/mp4';

/** The user ffmpeg runs as: nobody, with no file of the recording's it could open. */
const NOBODY = 65534;
/** Conversions at once on this engine: one more is answered 503 (try again), so requests cannot pile up processes. */
const MAX_CONVERSIONS = 4;
/** Conversions at once for one account (its replay links' holders included): no account takes every slot. */
const MAX_CONVERSIONS_PER_ACCOUNT = 2;
/** A response whose bytes have waited this long for its client is ended: a client that does not read holds nothing for long. */
export const MEDIA_STALL_MS = 20_000;

/** How long a conversion may take before it is ended: a copy runs at disk speed, so a minute and a second per 20 MB. */
function conversionDeadlineMs(bytes: number): number {
  return 60_000 + bytes / 20_000;
}

/**
 * The engine's conversion slots (decisions.md 128): held only while ffmpeg writes to a file of the
 * engine's, never while a client reads, and shared so one account cannot hold them all.
 */
export class ConversionSlots {
  private held = 0;
  private readonly byAccount = new Map<string, number>();

  /** A slot for the account, or null when the engine or the account has none free; call the answer to give it back. */
  take(accountId: string): (() => void) | null {
    const mine = this.byAccount.get(accountId) ?? 0;
    if (this.held >= MAX_CONVERSIONS || mine >= MAX_CONVERSIONS_PER_ACCOUNT) return null;
    this.held++;
    this.byAccount.set(accountId, mine + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.held--;
      const left = (this.byAccount.get(accountId) ?? 1) - 1;
      if (left > 0) this.byAccount.set(accountId, left);
      else this.byAccount.delete(accountId);
    };
  }
}

/** Runs `work` in one of the slots, or answers that none is free. */
async function inASlot(slots: ConversionSlots, accountId: string, response: ServerResponse, work: () => Promise<void>): Promise<void> {
  const release = slots.take(accountId);
  if (!release) return sendJson(response, { status: 'error', message: 'recordings are being prepared for other requests; try again in a few seconds' }, 503, { 'retry-after': '5' });
  try {
    await work();
  } finally {
    release();
  }
}

/** Ends the response once what it wrote has waited MEDIA_STALL_MS for its client (no `drain`): the file it reads is closed with it. */
function endIfStalled(response: ServerResponse): void {
  let waitingSince: number | null = null;
  const timer = setInterval(() => {
    if (!response.writableNeedDrain) return void (waitingSince = null);
    waitingSince ??= Date.now();
    if (Date.now() - waitingSince >= MEDIA_STALL_MS) response.destroy();
  }, Math.min(1000, MEDIA_STALL_MS / 4));
  timer.unref();
  response.on('drain', () => (waitingSince = null));
  response.once('close', () => clearInterval(timer));
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

/**
 * The Matroska file as it is now, copied into fragmented MP4 at `mp4` (through a partial file of
 * this call's own), under the conversion's deadline.
 */
async function convert(mkv: string, mp4: string): Promise<void> {
  const partial = `${mp4}.${randomBytes(6).toString('hex')}.part`;
  const child = remux(mkv);
  const deadline = setTimeout(() => child.kill('SIGKILL'), conversionDeadlineMs(statSync(mkv).size));
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-400)));
  const written = new Promise<void>((resolve, reject) => pipeline(child.stdout!, createWriteStream(partial, { mode: 0o600 }), (error) => (error ? reject(error) : resolve())));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve).once('error', () => resolve(-1)));
  clearTimeout(deadline);
  await written.catch(() => undefined);
  if (code !== 0) {
    await rm(partial, { force: true });
    throw new Error(`the recording could not be made into MP4: ${stderr.trim() || (code === null ? 'it took longer than its deadline' : `ffmpeg exited with ${code}`)}`);
  }
  await rename(partial, mp4);
}

/** Whether `mp4` was made from the Matroska file as it is now. */
function isCurrent(mp4: string, mkv: string): boolean {
  return existsSync(mp4) && statSync(mp4).mtimeMs >= statSync(mkv).mtimeMs;
}

/** The whole recording as `media.mp4`, made once (and again if the Matroska file is newer). */
async function wholeMp4(mkv: string): Promise<string> {
  const mp4 = join(dirname(mkv), RECORDING_MP4);
  if (!isCurrent(mp4, mkv)) await convert(mkv, mp4);
  return mp4;
}

/**
 * A running recording as it is now, copied to a file of this request's own (the slot is held for
 * the copy only), opened and unlinked at once: it is gone with the response, however that ends.
 */
async function snapshotMp4(mkv: string): Promise<Awaited<ReturnType<typeof open>>> {
  const mp4 = join(dirname(mkv), `media.now-${randomBytes(6).toString('hex')}.mp4`);
  await convert(mkv, mp4);
  try {
    return await open(mp4, 'r');
  } finally {
    await rm(mp4, { force: true });
  }
}

/** Answers the media request (its `Range` header, if any): the whole recording with ranges, or a running one as it is now. */
export async function sendRecordingMedia(rangeHeader: string | undefined, response: ServerResponse, media: { path: string; whole: boolean }, slot: { slots: ConversionSlots; accountId: string }): Promise<void> {
  let failure: Error | null = null;
  if (!media.whole) {
    let snapshot: Awaited<ReturnType<typeof open>> | null = null;
    await inASlot(slot.slots, slot.accountId, response, async () => {
      snapshot = await snapshotMp4(media.path).catch((error: Error) => ((failure = error), null));
    });
    if (response.headersSent) return;
    if (failure || !snapshot) return sendJson(response, { status: 'error', message: (failure as Error | null)?.message ?? 'the recording could not be made into MP4' }, 500);
    const file = snapshot as Awaited<ReturnType<typeof open>>;
    response.writeHead(200, { 'content-type': MP4, 'cache-control': 'no-store', 'content-length': String((await file.stat()).size) });
    endIfStalled(response);
    pipeline(file.createReadStream(), response, () => void file.close().catch(() => undefined));
    return;
  }
  let file = join(dirname(media.path), RECORDING_MP4);
  if (!isCurrent(file, media.path)) {
    await inASlot(slot.slots, slot.accountId, response, async () => {
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
  endIfStalled(response);
  pipeline(createReadStream(file, { start, end }), response, () => undefined);
}

/** The recordings this engine keeps, as the API reaches them (a cluster's node link wraps it: recordings-link.ts); call it once, for one set of slots. */
export function recordingsHere(recordings: Recordings): RecordingsAccess {
  const slots = new ConversionSlots();
  return {
    read: (row) => recordings.read(row),
    remove: (row) => recordings.remove(row),
    meters: (accountId) => recordings.meters(accountId),
    async sendMedia(range, response, row) {
      const media = await recordings.mediaOf(row);
      if ('message' in media) return sendJson(response, media, 404);
      await sendRecordingMedia(range, response, media, { slots, accountId: row.account_id });
    },
  };
}
