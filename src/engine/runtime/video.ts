// The display's moving picture as video (issue 25): one H.264 encoder per session display, run only
// while someone watches the video channel. ffmpeg grabs the session's own X display (x11grab, X
// shared memory inside the session's IPC namespace) and encodes it with x264 for low delay
// (ultrafast, zerolatency: no frame is held back for later ones; constrained baseline, which every
// WebCodecs decoder takes); each access unit goes to every watcher as it is encoded. The encoder
// runs as the session uid in its namespaces, under the exec guard (it executes nothing) and in its
// cgroup: its CPU is the session's. The first watcher starts it, each later one starts it again
// (a key frame on join), the last one leaving stops it. Its bit rate follows the slowest watcher
// (video-ladder.ts): a watcher losing frames takes it down a rung, a calm period up again, each
// change a restart with a key frame. Nothing here ends the session.
import { EventEmitter } from 'node:events';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Display } from './display.js';
import { FlvAvcReader, type FlvAvcItem } from './flv-avc.js';
import { BitRateLadder } from './video-ladder.js';
import { signalProcess, type SupervisedProcess } from './processes.js';
import { avcCodecString, VIDEO_KEY_FRAME, type VideoFormat } from '../../protocol/video.js';

export interface VideoSettings {
  /** The encoder's ceiling (kbit/s, x264's VBV max rate): motion costs at most this, a still screen far less. */
  bitrateKbps: number;
  /** Frames grabbed per second. */
  fps: number;
  /** A key frame at least this often (s): where a watcher whose frames were dropped starts again. */
  keyFrameSeconds: number;
}

export const DEFAULT_VIDEO: VideoSettings = { bitrateKbps: 2500, fps: 30, keyFrameSeconds: 2 };

const FFMPEG = '/usr/bin/ffmpeg';
/** The bit rate a slow watcher's link allowed is kept this long after everyone left, then the ceiling again. */
const LADDER_MEMORY_MS = 30_000;

let probed: Promise<{ available: boolean; missing: string[] }> | null = null;

/** Whether this host's ffmpeg grabs X displays and encodes H.264 (Debian's does); asked once. */
export function probeVideo(): Promise<{ available: boolean; missing: string[] }> {
  probed ??= new Promise((resolve) => {
    if (!existsSync(FFMPEG)) return resolve({ available: false, missing: ['apt-get install -y ffmpeg'] });
    execFile(FFMPEG, ['-hide_banner', '-encoders'], { timeout: 10_000 }, (_error, encoders) => {
      execFile(FFMPEG, ['-hide_banner', '-devices'], { timeout: 10_000 }, (_e, devices) => {
        const missing = [
          ...(/\blibx264\b/.test(String(encoders)) ? [] : ['an ffmpeg with libx264']),
          ...(/\bx11grab\b/.test(String(devices)) ? [] : ['an ffmpeg with x11grab']),
        ];
        resolve({ available: missing.length === 0, missing });
      });
    });
  });
  return probed;
}

/** One watcher's frames, from the moment it watches until it closes or the video ends. */
export class VideoStream extends EventEmitter<{ format: [VideoFormat]; frame: [Buffer, boolean]; end: [string] }> {
  private ended = false;
  /** The format of the frames now coming, once the encoder said it. */
  format: VideoFormat | null = null;

  constructor(
    private readonly leave: (stream: VideoStream) => void,
    private readonly lose: () => void = () => undefined,
  ) {
    super();
  }

  /** The watcher dropped a frame because its link was behind: the encoder may go down a rung. */
  dropped(): void {
    if (!this.ended) this.lose();
  }

  /** Stops watching; the last watcher to leave stops the encoder. */
  close(): void {
    this.finish('closed by the watcher');
  }

  /** @internal A new format: the frames after it are of it. */
  reformat(format: VideoFormat): void {
    if (this.ended) return;
    this.format = format;
    this.emit('format', format);
  }

  /** @internal One access unit as the wire carries it: flags byte, then AVC. */
  deliver(message: Buffer, key: boolean): void {
    if (!this.ended && this.format) this.emit('frame', message, key);
  }

  /** @internal `end` is emitted once, with the reason. */
  finish(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.leave(this);
    this.emit('end', reason);
    this.removeAllListeners('frame');
    this.removeAllListeners('format');
  }

  get closed(): boolean {
    return this.ended;
  }
}

/** A session display's video: watchers get its picture as H.264 while they watch. */
export class SessionVideo {
  private readonly streams = new Set<VideoStream>();
  private encoder: SupervisedProcess | null = null;
  private stopped = false;
  private readonly ladder: BitRateLadder;
  /** When the last watcher left: a watcher back soon (the viewer left video mode and came back) keeps the rung found. */
  private idleSince = -Infinity;

  constructor(
    private readonly display: Display,
    private readonly settings: VideoSettings,
  ) {
    this.ladder = new BitRateLadder(settings.bitrateKbps);
  }

  /** The encoder's bit rate now (kbit/s): the configured ceiling, or a rung under it for a slow watcher. */
  get bitrateKbps(): number {
    return this.ladder.kbps;
  }

  get watching(): number {
    return this.streams.size;
  }

  /** The encoder process while someone watches, else null. */
  get encoderProcess(): SupervisedProcess | null {
    return this.encoder;
  }

  /** A new watcher: the encoder starts (again), so every watcher's next frame is a key frame. */
  watch(): VideoStream {
    const stream = new VideoStream(
      (leaving) => this.leave(leaving),
      () => this.lose(),
    );
    if (this.stopped) {
      process.nextTick(() => stream.finish('the session has ended'));
      return stream;
    }
    if (this.streams.size === 0 && performance.now() - this.idleSince > LADDER_MEMORY_MS) this.ladder.reset();
    this.streams.add(stream);
    this.startEncoder();
    return stream;
  }

  /** The session is ending (or its display went): every watcher is told, the encoder stops. */
  close(): void {
    this.stopped = true;
    for (const stream of [...this.streams]) stream.finish('the session has ended');
    this.stopEncoder();
  }

  private leave(stream: VideoStream): void {
    this.streams.delete(stream);
    if (this.streams.size > 0) return;
    this.stopEncoder();
    this.idleSince = performance.now();
  }

  /** A watcher lost a frame to its link: a rung down (a restart, so a key frame) unless one was just taken. */
  private lose(): void {
    if (this.ladder.dropped(performance.now()) !== null && this.encoder) this.startEncoder();
  }

  private startEncoder(): void {
    this.stopEncoder();
    const settings = { ...this.settings, bitrateKbps: this.ladder.kbps };
    const encoder = this.display.spawnClient('video-encoder', FFMPEG, encoderArguments(String(this.display.env.DISPLAY), settings));
    this.encoder = encoder;
    const reader = new FlvAvcReader();
    encoder.child.stdout!.on('data', (chunk: Buffer) => {
      if (this.encoder !== encoder) return;
      let items: FlvAvcItem[];
      try {
        items = reader.push(chunk);
      } catch (error) {
        this.endAll((error as Error).message);
        return;
      }
      for (const item of items) {
        if (item.kind === 'config') {
          const format = { codec: avcCodecString(item.avcC), description: item.avcC.toString('base64'), bitrateKbps: settings.bitrateKbps };
          for (const stream of this.streams) stream.reformat(format);
        } else {
          const message = Buffer.concat([Buffer.from([item.key ? VIDEO_KEY_FRAME : 0]), item.data]);
          for (const stream of this.streams) stream.deliver(message, item.key);
        }
      }
      // Frames flowing and no watcher losing any for a while: a rung up.
      if (this.encoder === encoder && this.ladder.calm(performance.now()) !== null) this.startEncoder();
    });
    encoder.child.once('error', () => undefined);
    void encoder.exited.then(({ code, signal }) => {
      if (this.encoder !== encoder) return;
      this.encoder = null;
      this.endAll(`the video encoder exited (${signal ?? `code ${code}`})${encoder.stderrTail() ? `: ${encoder.stderrTail()}` : ''}`);
    });
  }

  private endAll(reason: string): void {
    for (const stream of [...this.streams]) stream.finish(reason);
    this.stopEncoder();
  }

  private stopEncoder(): void {
    const encoder = this.encoder;
    if (!encoder) return;
    this.encoder = null;
    signalProcess(encoder, 'SIGKILL');
  }
}

/**
 * ffmpeg grabbing the whole display (without the pointer: the viewer draws its own) at `fps`, the
 * size rounded up to even numbers (4:2:0), into x264 for the least delay: ultrafast, zerolatency
 * (no look-ahead, no B-frames, sliced threads), constrained baseline; CRF keeps a still screen
 * nearly free and the VBV caps motion at `bitrateKbps` over a quarter of a second. FLV out, each
 * frame flushed at once (flv-avc.ts reads it).
 */
function encoderArguments(display: string, settings: VideoSettings): string[] {
  const gop = Math.max(1, Math.round(settings.fps * settings.keyFrameSeconds));
  return [
    '-hide_banner', '-loglevel', 'error', '-nostdin',
    '-fflags', 'nobuffer', '-probesize', '32', '-analyzeduration', '0',
    '-f', 'x11grab', '-draw_mouse', '0', '-framerate', String(settings.fps), '-i', display,
    '-vf', 'pad=ceil(iw/2)*2:ceil(ih/2)*2,format=yuv420p',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-profile:v', 'baseline',
    '-crf', '26', '-maxrate', `${settings.bitrateKbps}k`, '-bufsize', `${Math.round(settings.bitrateKbps / 4)}k`,
    '-g', String(gop), '-keyint_min', String(gop), '-sc_threshold', '0',
    '-f', 'flv', '-flush_packets', '1',
    'pipe:1',
  ];
}
