// The video encoder's grab, paused while only recordings watch a still display (decisions.md 118).
// On a still screen the encoder drops every unchanged frame before x264 (decisions.md 108), but
// x11grab still grabs 30 frames a second and converts each to 4:2:0 to compare it: about a tenth
// of a core for a recording of a page where nothing moves. Xvnc knows when the screen changes
// (display-changes.ts): once the encoder's frames come only at the still screen's pace, Xvnc is
// asked to tell the next change; a request unanswered for QUIET_MS, with the encoder having shown
// the screen since, means nothing changed, and the encoder's process group is stopped (SIGSTOP)
// until the next change (SIGCONT): x11grab then grabs at its own pace from that moment (no burst
// of catch-up frames), and the first frame it grabs is the change. Once the screen has moved for
// a few seconds, the engine leaves Xvnc until it looks still again (a connected client makes Xvnc
// compare every change with its copy of the screen, and each answer carries the changed pixels):
// the encoder's own frames say whether it moves.
// Never while a person watches: a viewer judges stillness by the frames it gets (decisions.md 66),
// so it goes on getting a frame every STILL_FRAME_MS and leaves video mode after a still second,
// and then only recordings are left.
import type { Display } from '../display/display.js';
import { DisplayChanges } from './display-changes.js';
import { signalProcess, type SupervisedProcess } from '../sandbox/processes.js';

/** The display unchanged this long, and the encoder has shown it since: the grab pauses. */
export const QUIET_MS = 1000;
/** Frames in a row at the still screen's pace before Xvnc is asked: the screen looks still. */
const STILL_FRAMES_BEFORE_ASKING = 3;
/** After Xvnc told a change, it is asked again no sooner than this (if the frames still look still). */
const ASK_AGAIN_MS = 250;
/**
 * Frames the encoder must have put out since Xvnc was asked: the second was grabbed after Xvnc's
 * last answer, so the picture the encoder stops on is the screen's.
 */
const FRAMES_BEFORE_PAUSE = 2;
/** How often a quiet display is looked at again when it could not pause yet. */
const RECHECK_MS = 200;
/**
 * The engine leaves Xvnc once the screen has moved this long (a moment's motion, a page loading,
 * keeps the connection: each connection is a relay process started in the session).
 */
const LEAVE_AFTER_MOTION_MS = 3000;
/** The connection to the display is opened again no sooner than this after it ended. */
const RECONNECT_MS = 5000;

export class GrabPause {
  private changes: DisplayChanges | null = null;
  /** Frames put out since Xvnc was last asked, by the encoder `counted` (a replacement's count from its first). */
  private framesSince = 0;
  private counted: SupervisedProcess | null = null;
  /** The last frame's arrival, and how many frames in a row came at the still screen's pace. */
  private lastFrameAt = -Infinity;
  private stillFrames = 0;
  /** Since when the frames have said the screen moves (null: they say it is still). */
  private movingSince: number | null = null;
  private paused: SupervisedProcess | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private closedAt = -Infinity;
  /** Times the grab paused so far, and times Xvnc was asked to tell a change (figures and tests). */
  pauses = 0;
  asks = 0;

  constructor(
    private readonly display: Display,
    /** The encoder whose frames go out now, if one runs. */
    private readonly encoder: () => SupervisedProcess | null,
    /** Whether the grab may pause now: only recordings watch, and no encoder is starting. */
    private readonly mayPause: () => boolean,
    /** A gap between frames at least this long is the still screen's pace (a frame every STILL_FRAME_MS), not motion's. */
    private readonly stillGapMs: number,
  ) {}

  /** Whether the grab is paused now. */
  get isPaused(): boolean {
    return this.paused !== null;
  }

  /** The encoder runs for a recording: the grab pauses when the display is still. */
  start(): void {
    this.running = true;
  }

  /** The frames look still: the engine connects to Xvnc to be told the next change. */
  private connect(): void {
    if (this.changes || !this.running || performance.now() - this.closedAt < RECONNECT_MS) return;
    const changes = (this.changes = new DisplayChanges(this.display.connect()));
    changes.on('ready', () => this.askIfStill());
    changes.on('change', () => {
      this.unpause();
      this.later(() => this.askIfStill(), ASK_AGAIN_MS);
    });
    changes.once('closed', () => {
      if (this.changes !== changes) return;
      // No more word of changes: the grab runs (and the connection is tried again later).
      this.changes = null;
      this.closedAt = performance.now();
      this.unpause();
      this.clearTimer();
    });
  }

  /** No recording watches any more, or the encoder stopped: the grab runs, the display is no longer listened to. */
  stop(): void {
    this.running = false;
    this.unpause();
    this.clearTimer();
    [this.lastFrameAt, this.stillFrames, this.movingSince] = [-Infinity, 0, null];
    this.disconnect();
  }

  private disconnect(): void {
    const changes = this.changes;
    this.changes = null;
    changes?.close();
  }

  /** The encoder `process` put out a frame. */
  frame(process: SupervisedProcess): void {
    if (process !== this.encoder()) return;
    if (process !== this.counted) [this.counted, this.framesSince] = [process, 0];
    this.framesSince++;
    const now = performance.now();
    this.stillFrames = now - this.lastFrameAt >= this.stillGapMs ? this.stillFrames + 1 : 0;
    this.lastFrameAt = now;
    if (!this.timer) this.askIfStill();
  }

  /**
   * The grab runs again though the display is still (a person started watching, the recording
   * ends): it may pause again once it may and has shown the screen since.
   */
  resume(): void {
    this.unpause();
    if (this.changes?.listening && this.running) this.later(() => this.quiet(), RECHECK_MS);
  }

  private unpause(): void {
    const paused = this.paused;
    this.paused = null;
    if (paused) signalProcess(paused, 'SIGCONT');
  }

  /** The frames say the screen is still: Xvnc is asked to tell the next change. They say it moves: the engine leaves Xvnc. */
  private askIfStill(): void {
    this.clearTimer();
    if (!this.running) return;
    if (this.stillFrames < STILL_FRAMES_BEFORE_ASKING) {
      const now = performance.now();
      this.movingSince ??= now;
      if (!this.paused && now - this.movingSince >= LEAVE_AFTER_MOTION_MS) this.disconnect();
      return;
    }
    this.movingSince = null;
    const changes = this.changes;
    if (!changes) return this.connect();
    if (!changes.ready || changes.listening) return;
    changes.listen();
    this.asks++;
    this.framesSince = 0;
    this.later(() => this.quiet(), QUIET_MS);
  }

  /** No answer from Xvnc for QUIET_MS: the display is still; the grab pauses once it may. */
  private quiet(): void {
    if (!this.changes?.listening || this.paused || !this.running) return void this.clearTimer();
    const process = this.encoder();
    if (!process || !this.mayPause() || this.framesSince < FRAMES_BEFORE_PAUSE) return this.later(() => this.quiet(), RECHECK_MS);
    this.clearTimer();
    this.paused = process;
    this.pauses++;
    this.framesSince = 0;
    signalProcess(process, 'SIGSTOP');
  }

  private later(run: () => void, ms: number): void {
    this.clearTimer();
    this.timer = setTimeout(run, ms);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
