// The display's moving picture as video (issue 25): one H.264 encoder per session display, run only
// while someone watches the video channel. ffmpeg grabs the session's own X display (x11grab, X
// shared memory inside the session's IPC namespace) and encodes it with x264 for low delay
// (ultrafast, zerolatency: no frame is held back for later ones; constrained baseline, which every
// WebCodecs decoder takes); a frame the same as the last is not encoded (a still screen costs next
// to nothing, decisions.md 108), and while only recordings watch a still screen the grab itself
// pauses (grab-pause.ts, decisions.md 118); each access unit goes to every watcher as it is encoded. The encoder
// runs as the session uid in its namespaces, under the exec guard (it executes nothing) and in its
// cgroup: its CPU is the session's. The first watcher starts it, the last one leaving stops it.
// ffmpeg cannot be asked for a key frame while it runs, so where one is needed sooner than the
// encoder's own (every 2 s of motion) a replacement encoder starts and takes over at its first key frame,
// the old one serving every watcher meanwhile (decisions.md 72): for a new watcher, for a watcher
// whose frames were dropped (its picture stands still until a key frame), and for each change of
// bit rate, which follows the slowest watcher (video-ladder.ts: a watcher losing frames takes it
// down a rung, a calm period up again). Nothing here ends the session.
import { EventEmitter } from 'node:events';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Display } from '../display/display.js';
import { Audience } from './audience.js';
import { FlvAvcReader, type FlvAvcItem } from './flv-avc.js';
import { BitRateLadder } from './video-ladder.js';
import { GrabPause } from './grab-pause.js';
import { signalProcess, type SupervisedProcess } from '../sandbox/processes.js';
import { avcCodecString, VIDEO_KEY_FRAME, type VideoFormat } from '../../../protocol/video.js';

export interface VideoSettings {
  /** The encoder's ceiling (kbit/s, x264's VBV max rate): motion costs at most this, a still screen far less. */
  bitrateKbps: number;
  /** Frames grabbed per second. */
  fps: number;
  /**
   * A key frame after this long of frames at the full rate (s): every `fps` x `keyFrameSeconds`
   * frames encoded, so a still screen, whose unchanged frames are not encoded, has them further apart.
   */
  keyFrameSeconds: number;
  /**
   * Frames the same as the last one encoded are dropped before the encoder (decisions.md 108): a
   * still screen costs next to nothing; one frame still goes out every STILL_FRAME_MS.
   */
  dropUnchanged: boolean;
  /**
   * While only recordings watch and the display is still, the grab itself pauses until the next
   * change (grab-pause.ts, decisions.md 118). Takes effect with `dropUnchanged`.
   */
  pauseWhenStill: boolean;
}

export const DEFAULT_VIDEO: VideoSettings = { bitrateKbps: 2500, fps: 30, keyFrameSeconds: 2, dropUnchanged: true, pauseWhenStill: true };

const FFMPEG = '/usr/bin/ffmpeg';
/** The bit rate a slow watcher's link allowed is kept this long after everyone left, then the ceiling again. */
const LADDER_MEMORY_MS = 30_000;
/** About how long a new encoder takes to its first frame (266 ms measured here, docs/benchmarks.md). */
const REPLACEMENT_MS = 300;
/** A replacement for a watcher that lost frames is started at most this often. */
const RECOVERY_INTERVAL_MS = 500;
/**
 * On a still screen a frame still goes out this often (decisions.md 108): the viewer judges
 * stillness at each frame's arrival (a second with none would read as a hole, not stillness), x264
 * sharpens a still picture over its next frames, and the recording's picture runs to its end.
 */
export const STILL_FRAME_MS = 200;

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
  /** Whether this watcher's frames were dropped and, its link clear again, it waits for a key frame to draw again. */
  wantsKey = false;

  constructor(
    private readonly leave: (stream: VideoStream) => void,
    private readonly lose: () => void = () => undefined,
    /** Whether a recording watches through this stream, not a person (a recording's grab may pause while the display is still). */
    readonly forRecording = false,
  ) {
    super();
  }

  /** The watcher dropped a frame because its link was behind: the encoder may go down a rung. */
  dropped(): void {
    if (this.ended) return;
    // A key frame now would be dropped too.
    this.wantsKey = false;
    this.lose();
  }

  /** The watcher skipped a frame, its link clear, because its last drop left it without a key frame. */
  waiting(): void {
    if (!this.ended) this.wantsKey = true;
  }

  /** Stops watching; the last watcher to leave stops the encoder. */
  close(): void {
    this.finish('closed by the watcher');
  }

  /** @internal A new format: the frames after it are of it, beginning with a key frame. */
  reformat(format: VideoFormat): void {
    if (this.ended) return;
    this.format = format;
    this.emit('format', format);
  }

  /** @internal One access unit as the wire carries it: flags byte, then AVC. */
  deliver(message: Buffer, key: boolean): void {
    if (this.ended || !this.format) return;
    if (key) this.wantsKey = false;
    this.emit('frame', message, key);
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

/** One encoder process, with its format once it said it and how far it is from its last key frame. */
interface Encoder {
  readonly process: SupervisedProcess;
  format: VideoFormat | null;
  /** Frames since its last key frame: its own next one comes after a GOP of them. */
  sinceKey: number;
}

/** A session display's video: watchers get its picture as H.264 while they watch. */
export class SessionVideo {
  /**
   * Who watches (audience.ts): the first one starts the encoder, and every one that joins gets a
   * replacement encoder for its key frame (unless one is starting); the last one out stops both.
   */
  private readonly audience = new Audience<VideoStream>({
    start: () => {
      if (performance.now() - this.idleSince > LADDER_MEMORY_MS) this.ladder.reset();
    },
    joined: (stream) => {
      if (stream.forRecording) this.grabPause?.start();
      else this.grabPause?.resume();
      if (!this.next) this.replaceEncoder();
    },
    stop: () => {
      this.grabPause?.stop();
      this.stopEncoders();
      this.idleSince = performance.now();
    },
  });
  /** The encoder whose frames the watchers get. */
  private current: Encoder | null = null;
  /** Its replacement while it starts: it takes over at its first key frame (decisions.md 72). */
  private next: Encoder | null = null;
  /** When the last replacement was started. */
  private replacedAt = -Infinity;
  private readonly ladder: BitRateLadder;
  /** When the last watcher left: a watcher back soon (the viewer left video mode and came back) keeps the rung found. */
  private idleSince = -Infinity;
  /** Pauses the grab while only recordings watch a still display (null when the settings keep it running). */
  private readonly grabPause: GrabPause | null;
  /** Waiting for the next frame of the encoder in use (`catchUp`). */
  private frameWaiters: (() => void)[] = [];

  constructor(
    private readonly display: Display,
    private readonly settings: VideoSettings,
  ) {
    this.ladder = new BitRateLadder(settings.bitrateKbps);
    this.grabPause =
      settings.dropUnchanged && settings.pauseWhenStill
        ? new GrabPause(
            display,
            () => this.current?.process ?? null,
            () => !this.next && [...this.audience].every((stream) => stream.forRecording),
            // A still screen's frames come every STILL_FRAME_MS; motion's every grab (1.5 grabs apart at most).
            Math.max(0.75 * STILL_FRAME_MS, 1500 / settings.fps),
          )
        : null;
  }

  /** Whether the grab is paused now (only recordings watch and the display is still), how often it paused, and how often Xvnc was asked about changes. */
  get grabPauses(): { paused: boolean; pauses: number; asks: number } {
    return { paused: this.grabPause?.isPaused ?? false, pauses: this.grabPause?.pauses ?? 0, asks: this.grabPause?.asks ?? 0 };
  }

  /** The encoder's bit rate now (kbit/s): the configured ceiling, or a rung under it for a slow watcher. */
  get bitrateKbps(): number {
    return this.ladder.kbps;
  }

  get watching(): number {
    return this.audience.size;
  }

  /** The encoder process while someone watches (the one starting, before the first frames), else null. */
  get encoderProcess(): SupervisedProcess | null {
    return (this.current ?? this.next)?.process ?? null;
  }

  /** A new watcher: a fresh encoder starts (unless one already is), and its first frame, a key frame, is the watcher's first. */
  watch(options: { forRecording?: boolean } = {}): VideoStream {
    return this.audience.join(new VideoStream((leaving) => this.audience.leave(leaving), () => this.lose(), options.forRecording ?? false));
  }

  /**
   * A recording ends: where the grab is paused it runs again until the encoder's next frame (a
   * frame every STILL_FRAME_MS on a still screen, waited for at most `timeoutMs`), so the
   * recording's picture runs to its end.
   */
  async catchUp(timeoutMs = 3 * STILL_FRAME_MS): Promise<void> {
    if (!this.grabPause?.isPaused) return;
    this.grabPause.resume();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.frameWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** The session is ending (or its display went): every watcher is told, the encoder stops. */
  close(): void {
    this.audience.close('the session has ended');
  }

  /** A watcher lost a frame to its link: a rung down (a replacement) unless one was just taken. */
  private lose(): void {
    if (this.ladder.dropped(performance.now()) !== null && (this.current || this.next)) this.replaceEncoder();
  }

  /**
   * A watcher whose frames were dropped draws again at the next key frame: when the encoder's own
   * comes later than a replacement's would (judged in frames: on a still screen they come slower
   * than the full rate, and its own comes later still), and none was started within the last half
   * second, a replacement starts now (ffmpeg cannot be asked for a key frame while it runs).
   */
  private recover(encoder: Encoder, now: number): void {
    if (this.next || now - this.replacedAt < RECOVERY_INTERVAL_MS) return;
    // The encoder's own key frame comes after a GOP of frames; the last REPLACEMENT_MS of them at the full rate is too soon to replace it.
    if (gopFrames(this.settings) - encoder.sinceKey < (this.settings.fps * REPLACEMENT_MS) / 1000) return;
    if ([...this.audience].some((stream) => stream.wantsKey)) this.replaceEncoder();
  }

  /**
   * Starts an encoder at the ladder's rate. The running one goes on serving every watcher until
   * the new one's first key frame, which every watcher then gets after its format: no one sees
   * the picture stop while the new one starts.
   */
  private replaceEncoder(): void {
    if (this.next) signalProcess(this.next.process, 'SIGKILL');
    const settings = { ...this.settings, bitrateKbps: this.ladder.kbps };
    const encoder: Encoder = {
      process: this.display.spawnClient('video-encoder', FFMPEG, encoderArguments(String(this.display.env.DISPLAY), settings)),
      format: null,
      sinceKey: 0,
    };
    this.next = encoder;
    this.replacedAt = performance.now();
    const reader = new FlvAvcReader();
    encoder.process.child.stdout!.on('data', (chunk: Buffer) => {
      if (encoder !== this.current && encoder !== this.next) return;
      let items: FlvAvcItem[];
      try {
        items = reader.push(chunk);
      } catch (error) {
        this.audience.endAll((error as Error).message);
        return;
      }
      const now = performance.now();
      for (const item of items) {
        if (item.kind === 'config') {
          encoder.format = { codec: avcCodecString(item.avcC), description: item.avcC.toString('base64'), bitrateKbps: settings.bitrateKbps };
          continue;
        }
        if (encoder === this.next) {
          if (!item.key || !encoder.format) continue;
          this.takeOver(encoder);
        }
        encoder.sinceKey = item.key ? 0 : encoder.sinceKey + 1;
        const message = Buffer.concat([Buffer.from([item.key ? VIDEO_KEY_FRAME : 0]), item.data]);
        for (const stream of this.audience) stream.deliver(message, item.key);
        this.grabPause?.frame(encoder.process);
        const waiters = this.frameWaiters;
        this.frameWaiters = [];
        for (const waiter of waiters) waiter();
      }
      if (encoder !== this.current || this.next) return;
      // Frames flowing and no watcher losing any for a while: a rung up.
      if (this.ladder.calm(now) !== null) this.replaceEncoder();
      else this.recover(encoder, now);
    });
    encoder.process.child.once('error', () => undefined);
    void encoder.process.exited.then(({ code, signal }) => {
      if (encoder !== this.current && encoder !== this.next) return;
      this.audience.endAll(`the video encoder exited (${signal ?? `code ${code}`})${encoder.process.stderrTail() ? `: ${encoder.process.stderrTail()}` : ''}`);
    });
  }

  /** The new encoder's first key frame: the old one stops, every watcher gets the new format. */
  private takeOver(encoder: Encoder): void {
    if (this.current) signalProcess(this.current.process, 'SIGKILL');
    this.current = encoder;
    this.next = null;
    for (const stream of this.audience) stream.reformat(encoder.format!);
  }

  private stopEncoders(): void {
    for (const encoder of [this.current, this.next]) if (encoder) signalProcess(encoder.process, 'SIGKILL');
    this.current = this.next = null;
  }
}

/** Frames from one key frame to the next: `keyFrameSeconds` at the full rate. */
function gopFrames(settings: VideoSettings): number {
  return Math.max(1, Math.round(settings.fps * settings.keyFrameSeconds));
}

/**
 * ffmpeg grabbing the whole display (without the pointer: the viewer draws its own) at `fps`, the
 * size rounded up to even numbers (4:2:0), into x264 for the least delay: ultrafast, zerolatency
 * (no look-ahead, no B-frames, sliced threads), constrained baseline; CRF keeps a still screen
 * nearly free and the VBV caps motion at `bitrateKbps` over a quarter of a second. FLV out, each
 * frame flushed at once (flv-avc.ts reads it).
 *
 * Unchanged frames dropped (decisions.md 108): mpdecimate passes a frame that differs from the last
 * one passed anywhere at all (thresholds 0) and, on a still screen, one every STILL_FRAME_MS; the
 * frames keep their grab times (variable frame rate). x264 goes on taking them as `fps` (zerolatency's
 * force-cfr: reading their times would hold each frame until the next one came, up to 200 ms on a
 * still screen), and its key frames come by frames encoded, so a still picture sharpens over the
 * frames after a change instead of starting again every 2 s. mpdecimate never compares the
 * leftmost 8 columns of a plane, so the picture is padded 16 pixels on the left for it and
 * cropped back after (a crop only moves the planes' pointers).
 */
function encoderArguments(display: string, settings: VideoSettings): string[] {
  const gop = gopFrames(settings);
  const stillFrames = Math.max(1, Math.round((settings.fps * STILL_FRAME_MS) / 1000) - 1);
  const filters = settings.dropUnchanged
    ? ['format=yuv420p', 'pad=ceil(iw/2)*2+16:ceil(ih/2)*2:16:0', `mpdecimate=hi=0:lo=0:frac=0:max=${stillFrames}`, 'crop=iw-16:ih:16:0']
    : ['pad=ceil(iw/2)*2:ceil(ih/2)*2', 'format=yuv420p'];
  return [
    '-hide_banner', '-loglevel', 'error', '-nostdin',
    '-fflags', 'nobuffer', '-probesize', '32', '-analyzeduration', '0',
    '-f', 'x11grab', '-draw_mouse', '0', '-framerate', String(settings.fps), '-i', display,
    '-vf', filters.join(','),
    ...(settings.dropUnchanged ? ['-fps_mode', 'vfr'] : []),
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-profile:v', 'baseline',
    '-crf', '26', '-maxrate', `${settings.bitrateKbps}k`, '-bufsize', `${Math.round(settings.bitrateKbps / 4)}k`,
    '-g', String(gop), '-keyint_min', String(gop), '-sc_threshold', '0',
    '-f', 'flv', '-flush_packets', '1',
    'pipe:1',
  ];
}
