// The sound player's jitter buffer as pure timing decisions (no Web Audio, testable alone): where on
// the AudioContext's clock each decoded frame plays, when a frame is dropped because too much is
// buffered, when silence is put in because too little is, and where the schedule starts again after
// the buffer ran dry. src/core/sound-player.ts carries them out.
//
// Times are the AudioContext's own clock (its currentTime, in seconds): the clock the sound card
// plays by, so scheduling on it never drifts from what is heard. What can drift is the engine's
// clock against it (a sender 0.1 % fast brings 3.6 s more sound an hour than is played): the
// buffered lead is watched over a window and a frame is dropped, or silence put in, to bring it back.
//
// The lead adapts to the network, as WebRTC's jitter buffer does: it starts small (25 ms: on a
// steady link the ear hears the remote page sooner), grows by 15 ms each time the buffer runs dry
// (up to 100 ms; not in the first 2 s of a connection, while the viewer's page itself starts), and
// comes back down by 5 ms after each minute without running dry.

export interface SoundScheduleOptions {
  /** Sample rate of the decoded frames. */
  sampleRate: number;
  /** The lead the schedule starts with and comes back to on a steady link: sound buffered ahead of the clock. */
  targetLeadSeconds?: number;
  /** Never more buffered than the lead aimed at plus this: a frame that would go past it (a burst after a stall) is dropped. */
  headroomSeconds?: number;
  /** The smallest lead seen over this long decides whether to drop a frame or put in silence. */
  windowSeconds?: number;
}

/** 25 ms ahead on a steady link: with the 10 ms frame, under 100 ms from the remote browser to the ear (docs/benchmarks.md). */
export const SOUND_TARGET_LEAD_SECONDS = 0.025;
/** How far the lead grows on a link that keeps running the buffer dry. */
export const SOUND_MAX_TARGET_LEAD_SECONDS = 0.1;
export const SOUND_HEADROOM_SECONDS = 0.04;
/** The most ever buffered while the lead aimed at is the starting one. */
export const SOUND_MAX_LEAD_SECONDS = SOUND_TARGET_LEAD_SECONDS + SOUND_HEADROOM_SECONDS;
export const SOUND_WINDOW_SECONDS = 2;
/** Each time the buffer runs dry, the lead aimed at grows by this much. */
const LEAD_STEP_UP_SECONDS = 0.015;
/** After this long without running dry, it comes back down by LEAD_STEP_DOWN_SECONDS. */
const CALM_SECONDS = 60;
const LEAD_STEP_DOWN_SECONDS = 0.005;
/**
 * Running dry this soon after the first frame (a new connection) says nothing about the link: it
 * is the viewer's page starting (its first picture decoded on the same thread), so the lead aimed
 * at stays.
 */
const SETTLING_SECONDS = 2;
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
  readonly #baseTarget: number;
  readonly #headroom: number;
  readonly #window: number;
  /** The lead aimed at now: the base one, or more after the buffer ran dry. */
  #target: number;
  /** When the buffer last ran dry, or the lead aimed at last came down. */
  #calmSince = 0;
  /** When the first frame after a reset arrived. */
  #startedAt = 0;
  /** Where sample 0 of the schedule plays; `null` before the first frame. */
  #anchor: number | null = null;
  /** Samples scheduled since the anchor: an integer, so the schedule adds up exactly for hours. */
  #samples = 0;
  #windowStart = 0;
  #windowMinLead = Infinity;
  #counts: SoundScheduleCounts = { played: 0, dropped: 0, silenced: 0, starved: 0 };

  constructor(options: SoundScheduleOptions) {
    this.#rate = options.sampleRate;
    this.#baseTarget = options.targetLeadSeconds ?? SOUND_TARGET_LEAD_SECONDS;
    this.#target = this.#baseTarget;
    this.#headroom = options.headroomSeconds ?? SOUND_HEADROOM_SECONDS;
    this.#window = options.windowSeconds ?? SOUND_WINDOW_SECONDS;
  }

  /** The lead aimed at now (seconds): it grows when the buffer runs dry and comes back on a steady link. */
  get targetLead(): number {
    return this.#target;
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

  /**
   * Forgets the schedule (a new connection, or sound held back): the next frame starts it again
   * at the lead aimed at, which is kept: it is what this link needed.
   */
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
      // Having run dry, aim at more: the link is jumpier than the lead was.
      if (next === null) this.#startedAt = now;
      else {
        this.#counts.starved += 1;
        if (now - this.#startedAt >= SETTLING_SECONDS) this.#target = Math.min(SOUND_MAX_TARGET_LEAD_SECONDS, this.#target + LEAD_STEP_UP_SECONDS);
      }
      this.#calmSince = now;
      this.#anchor = now + this.#target;
      this.#samples = 0;
      this.#windowStart = now;
      this.#windowMinLead = Infinity;
      return this.#play(frameSamples, next !== null);
    }
    const lead = next - now;
    if (lead + frameSeconds > this.#target + this.#headroom + 1e-9) {
      this.#counts.dropped += 1;
      return { play: false };
    }
    this.#windowMinLead = Math.min(this.#windowMinLead, lead);
    if (now - this.#calmSince >= CALM_SECONDS && this.#target > this.#baseTarget) {
      // A steady link for a while: aim a little lower again (the extra lead drains as frames are dropped below).
      this.#target = Math.max(this.#baseTarget, this.#target - LEAD_STEP_DOWN_SECONDS);
      this.#calmSince = now;
    }
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
