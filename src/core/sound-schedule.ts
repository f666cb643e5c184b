// The sound player's jitter buffer as pure timing decisions (no Web Audio, testable alone): where on
// the AudioContext's clock each decoded frame plays, when a frame is dropped because too much is
// buffered, when silence is put in because too little is, and where the schedule starts again after
// the buffer ran dry. src/core/sound-player.ts carries them out.
//
// Times are the AudioContext's own clock (its currentTime, in seconds): the clock the sound card
// plays by, so scheduling on it never drifts from what is heard. What can drift is the engine's
// clock against it (a sender 0.1 % fast brings 3.6 s more sound an hour than is played): the
// buffered lead is watched over a window and a frame is dropped, or silence put in, to bring it back.

export interface SoundScheduleOptions {
  /** Sample rate of the decoded frames. */
  sampleRate: number;
  /** The lead the schedule starts with and comes back to: sound buffered ahead of the clock. */
  targetLeadSeconds?: number;
  /** Never more buffered than this: a frame that would go past it (a burst after a stall) is dropped. */
  maxLeadSeconds?: number;
  /** The smallest lead seen over this long decides whether to drop a frame or put in silence. */
  windowSeconds?: number;
}

/** 40 ms ahead: with the 20 ms frame and the network, under 100 ms from the remote browser to the ear. */
export const SOUND_TARGET_LEAD_SECONDS = 0.04;
export const SOUND_MAX_LEAD_SECONDS = 0.08;
export const SOUND_WINDOW_SECONDS = 2;
/** A frame is not started closer to the clock than this: the audio thread needs it a little ahead. */
const START_MARGIN_SECONDS = 0.005;

export type FramePlacement =
  /** Play the frame at `at`; `resumed` when the buffer had run dry and the schedule started again. */
  | { play: true; at: number; resumed: boolean }
  /** Too much is buffered: this frame is not played. */
  | { play: false };

export interface SoundScheduleCounts {
  played: number;
  /** Frames dropped: past the bound, or to pull a growing lead back. */
  dropped: number;
  /** Frames of silence put in before a frame, so a shrinking lead does not run dry. */
  silenced: number;
  /** Times the buffer ran dry (after the first start): the gap was heard as silence. */
  starved: number;
}

export class SoundSchedule {
  readonly #rate: number;
  readonly #target: number;
  readonly #max: number;
  readonly #window: number;
  /** Where sample 0 of the schedule plays; `null` before the first frame. */
  #anchor: number | null = null;
  /** Samples scheduled since the anchor: an integer, so the schedule adds up exactly for hours. */
  #samples = 0;
  #windowStart = 0;
  #windowMinLead = Infinity;
  #counts: SoundScheduleCounts = { played: 0, dropped: 0, silenced: 0, starved: 0 };

  constructor(options: SoundScheduleOptions) {
    this.#rate = options.sampleRate;
    this.#target = options.targetLeadSeconds ?? SOUND_TARGET_LEAD_SECONDS;
    this.#max = options.maxLeadSeconds ?? SOUND_MAX_LEAD_SECONDS;
    this.#window = options.windowSeconds ?? SOUND_WINDOW_SECONDS;
  }

  /** Where the next frame would start. */
  get nextStart(): number | null {
    return this.#anchor === null ? null : this.#anchor + this.#samples / this.#rate;
  }

  /** Sound buffered ahead of `now` (0 when dry). */
  leadAt(now: number): number {
    const next = this.nextStart;
    return next === null ? 0 : Math.max(0, next - now);
  }

  get counts(): SoundScheduleCounts {
    return { ...this.#counts };
  }

  /** Forgets the schedule (a new connection): the next frame starts it again at the target lead. */
  reset(): void {
    this.#anchor = null;
    this.#samples = 0;
    this.#windowMinLead = Infinity;
  }

  /** Decides where a frame of `frameSamples` samples, decoded at `now`, plays. */
  place(now: number, frameSamples: number): FramePlacement {
    const frameSeconds = frameSamples / this.#rate;
    const next = this.nextStart;
    if (next === null || next < now + START_MARGIN_SECONDS) {
      // Dry (or the first frame): start again one target lead ahead; the gap is heard as silence.
      if (next !== null) this.#counts.starved += 1;
      this.#anchor = now + this.#target;
      this.#samples = 0;
      this.#windowStart = now;
      this.#windowMinLead = Infinity;
      return this.#play(frameSamples, next !== null);
    }
    const lead = next - now;
    if (lead + frameSeconds > this.#max + 1e-9) {
      this.#counts.dropped += 1;
      return { play: false };
    }
    this.#windowMinLead = Math.min(this.#windowMinLead, lead);
    if (now - this.#windowStart >= this.#window) {
      const minLead = this.#windowMinLead;
      this.#windowStart = now;
      this.#windowMinLead = Infinity;
      // Over a whole window the buffer never held less than a frame above the target: the
      // engine sends faster than the sound card plays. One frame less brings it back.
      if (minLead > this.#target + frameSeconds) {
        this.#counts.dropped += 1;
        return { play: false };
      }
      // It came within a quarter of the target of running dry: the engine sends slower than the
      // sound card plays, or the network got jumpier. One frame of silence now, rather than a gap later.
      if (minLead < this.#target / 4) {
        this.#samples += frameSamples;
        this.#counts.silenced += 1;
      }
    }
    return this.#play(frameSamples, false);
  }

  #play(frameSamples: number, resumed: boolean): FramePlacement {
    const at = this.#anchor! + this.#samples / this.#rate;
    this.#samples += frameSamples;
    this.#counts.played += 1;
    return { play: true, at, resumed };
  }
}
