// The sound encoder's rest while only recordings listen and nothing plays (decisions.md 119). The
// encoder reads the null sink's monitor and encodes whatever comes, silence included: 100 Opus
// frames a second, and PulseAudio waking every 5 ms to hand them over. While no stream plays into
// the sink (none there, or only corked ones) and no person listens, the sink is suspended
// (`pactl suspend-sink out 1`): the monitor then gives nothing, the encoder's read blocks, and
// both sleep. The moment a stream appears or changes (`pactl subscribe`, running in the session
// like the encoder), or a person starts listening, the sink runs again. A stream that starts on
// the suspended sink loses nothing: PulseAudio holds its first buffer and asks for no more until
// the sink runs, so its sound comes a moment late, never cut. The recorder fills the pause with
// silence (recorder.ts), so the recording's sound stays on the session's clock.
import { existsSync } from 'node:fs';
import type { SessionSandbox } from '../sandbox/confinement.js';
import { signalProcess, type SupervisedProcess } from '../sandbox/processes.js';
import { readWithinBudget } from '../sandbox/read-budget.js';

/** Nothing plays (and only recordings listen) this long: the sink is suspended. */
export const SILENT_MS = 1000;
/** The subscriber is started again no sooner than this after it ended on its own. */
const RESTART_MS = 5000;
const PACTL = '/usr/bin/pactl';
/** pactl's event lines are short; a longer run without a newline is not pactl's, and is dropped. */
const MAX_LINE = 1024;
/** What of the event lines is read a second: a stream starting or stopping is one line of ~40 bytes. */
const EVENT_BYTES_PER_SECOND = 16 * 1024;

/** Whether this host has pactl (pulseaudio-utils), which the rest needs; without it the encoder runs as before. */
export function canPauseSound(): boolean {
  return existsSync(PACTL);
}

export class SoundPause {
  private subscriber: SupervisedProcess | null = null;
  /**
   * Whether the subscriber has told anything yet: only then is it known to follow the server (a
   * rest begun before would miss a stream that appears meanwhile). Every pactl run is a client
   * that comes and goes, so the first check's own list makes it speak.
   */
  private heard = false;
  private running = false;
  /** What the sink should be: suspended or not. */
  private wantSuspended = false;
  /** What the last command that finished made it. */
  private suspended = false;
  /** A pactl command is under way (commands run one at a time, in order). */
  private applying = false;
  /** Counts events that may mean sound: a check started before the latest one does not suspend. */
  private generation = 0;
  private timer: NodeJS.Timeout | null = null;
  private endedAt = -Infinity;
  /** When the sink last stopped resting (performance.now()): a rest's end, after which the encoder's output flows again. */
  private restEndedAt = -Infinity;
  /** Times the sink was suspended so far (the recorder fills each pause with silence; figures and tests). */
  pauses = 0;

  constructor(
    private readonly sandbox: SessionSandbox,
    private readonly sink: string,
    /** The sound server's client environment (where pactl finds it). */
    private readonly clientEnv: NodeJS.ProcessEnv,
    /** Whether the encoder may rest now: only recordings listen. */
    private readonly mayPause: () => boolean,
  ) {}

  /** Whether the sink is (or is being) suspended: the encoder gets nothing and the recorder fills with silence. */
  get isPaused(): boolean {
    return this.wantSuspended || this.suspended;
  }

  /** Whether the sink rested at any moment after `time` (performance.now()): a hole in the encoder's output since then is a rest. */
  restedSince(time: number): boolean {
    return this.isPaused || this.restEndedAt > time;
  }

  /** The encoder started: the sink's streams are followed, and it rests once nothing plays. */
  start(): void {
    this.running = true;
    if (!this.subscriber && performance.now() - this.endedAt >= RESTART_MS) this.subscribe();
    this.later();
  }

  /** The encoder stopped: the sink runs (a browser playing into it must never wait for no one). */
  stop(): void {
    this.running = false;
    this.clearTimer();
    const subscriber = this.subscriber;
    this.subscriber = null;
    if (subscriber) signalProcess(subscriber, 'SIGKILL');
    this.wake();
  }

  /** The sink runs now (a person listens, a stream appeared); it may rest again after SILENT_MS of nothing playing. */
  wake(): void {
    this.generation++;
    this.want(false);
    if (this.running) this.later();
  }

  /** Someone left: the sink may rest once nothing plays. */
  recheck(): void {
    if (this.running) this.later();
  }

  private subscribe(): void {
    const subscriber = this.sandbox.spawn('sound-events', PACTL, ['subscribe'], {
      env: this.env(),
      stdio: ['ignore', 'pipe', 'pipe'],
      mayRun: [],
    });
    this.subscriber = subscriber;
    this.heard = false;
    subscriber.child.once('error', () => undefined);
    let partial = '';
    // The session's sound server writes these lines: a bounded pace and a bounded line.
    readWithinBudget(subscriber.child.stdout!, EVENT_BYTES_PER_SECOND, (chunk) => {
      const lines = (partial + chunk.toString('latin1')).split('\n');
      partial = lines.pop()!.slice(-MAX_LINE);
      if (lines.length > 0) this.heard = true;
      for (const line of lines) {
        // "Event 'new' on sink-input #3": a stream may start playing (new, or uncorked: change).
        const event = /^Event '(\w+)' on sink-input #/.exec(line)?.[1];
        if (event === 'new' || event === 'change') this.wake();
        else if (event === 'remove') this.recheck();
      }
    });
    void subscriber.exited.then(() => {
      if (this.subscriber !== subscriber) return;
      // No more word of new streams: the sink runs until the subscriber is started again.
      this.subscriber = null;
      this.endedAt = performance.now();
      this.wake();
      if (this.running) setTimeout(() => this.running && !this.subscriber && this.start(), RESTART_MS).unref();
    });
  }

  /** After SILENT_MS, whether anything plays is asked; nothing does: the sink is suspended. */
  private later(): void {
    this.clearTimer();
    this.timer = setTimeout(() => void this.check(), SILENT_MS);
    this.timer.unref();
  }

  private async check(): Promise<void> {
    this.timer = null;
    if (!this.running || !this.subscriber || this.isPaused || !this.mayPause()) return;
    const generation = this.generation;
    let list: string;
    try {
      list = await this.sandbox.run(PACTL, ['list', 'sink-inputs'], this.env());
    } catch {
      return this.recheck();
    }
    if (generation !== this.generation || !this.running || !this.subscriber || !this.mayPause()) return;
    if (!this.heard) return this.recheck();
    // Every stream's "Corked:" line (LC_ALL=C); a stream not corked plays, even silence. Nothing
    // more is asked until the subscriber tells a stream changed (corked) or went.
    if (/^\s*Corked: no\s*$/m.test(list)) return;
    this.pauses++;
    this.want(true);
  }

  private want(suspended: boolean): void {
    const wasPaused = this.isPaused;
    this.wantSuspended = suspended;
    this.ended(wasPaused);
    void this.apply();
  }

  /** The sink was resting (or about to) and is no longer: when, for `restedSince`. */
  private ended(wasPaused: boolean): void {
    if (wasPaused && !this.isPaused) this.restEndedAt = performance.now();
  }

  /** Runs `pactl suspend-sink` until the sink is as wanted, one command at a time. */
  private async apply(): Promise<void> {
    if (this.applying) return;
    this.applying = true;
    let failures = 0;
    try {
      while (this.suspended !== this.wantSuspended) {
        const target = this.wantSuspended;
        try {
          await this.sandbox.run(PACTL, ['suspend-sink', this.sink, target ? '1' : '0'], this.env());
          const wasPaused = this.isPaused;
          this.suspended = target;
          this.ended(wasPaused);
        } catch {
          // Not suspended: it stays running. (The sound server may be gone: its end is told elsewhere.)
          if (target) {
            const wasPaused = this.isPaused;
            this.wantSuspended = false;
            this.ended(wasPaused);
          }
          else if (this.sandbox.ended() || ++failures >= 3) break;
          else await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    } finally {
      this.applying = false;
    }
  }

  private env(): NodeJS.ProcessEnv {
    // pactl's words are translated: LC_ALL=C keeps the ones read here.
    return { ...this.sandbox.env, ...this.clientEnv, LC_ALL: 'C' };
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
