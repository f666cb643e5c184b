// The session encoder's bit rate, fitted to its slowest watcher (issue 25, decisions.md 68): a few
// rungs from the configured ceiling down to about a quarter of it. A watcher whose frames are
// dropped again and again (two bouts of drops within a few seconds: its link is slower than the
// picture; one bout alone is as likely a busy machine's hiccup) takes the encoder a rung down, at
// most once per settling time (each change starts a new encoder, a key frame for everyone); after a calm
// period with no drops the encoder goes a rung up again: a trial, which one bout of drops ends (the
// rung below was already found to hold), and a rung that failed its trial waits twice as long
// before it is tried the next time. Pure: time comes from the caller.

/** A change waits this long after the last one: the restarted encoder's first key frame must get through. */
export const SETTLE_MS = 1000;
/** Drops this close together are one bout. */
export const BOUT_GAP_MS = 500;
/** A second bout within this long of the first takes the encoder down. */
export const BOUTS_WITHIN_MS = 5000;
/** No drops for this long: try the rung above. */
export const CALM_MS = 10_000;
/** The calm period doubles after each failed try, up to this. */
export const MAX_CALM_MS = 80_000;
/** A rung just stepped up to is on trial this long: one bout of drops takes it down again. */
export const TRIAL_MS = 5000;

/** The rungs for a ceiling: the ceiling, about half, about a quarter (kbit/s, never under 200). */
export function ladderRungs(ceilingKbps: number): number[] {
  return [...new Set([ceilingKbps, Math.round(ceilingKbps * 0.48), Math.round(ceilingKbps * 0.24)].map((rung) => Math.max(200, rung)))].sort((a, b) => b - a);
}

export class BitRateLadder {
  readonly rungs: number[];
  #rung = 0;
  #changedAt = -Infinity;
  #lastDropAt = -Infinity;
  /** When the bouts of drops since the last change began. */
  #bouts: number[] = [];
  #calmMs = CALM_MS;
  /** When the last step up happened: a drop soon after it means that rung was too high. */
  #steppedUpAt = -Infinity;

  constructor(ceilingKbps: number) {
    this.rungs = ladderRungs(ceilingKbps);
  }

  /** The encoder's bit rate now (kbit/s). */
  get kbps(): number {
    return this.rungs[this.#rung]!;
  }

  /** A watcher's frame was dropped at `now`: answers the new rate when the encoder should go down a rung. */
  dropped(now: number): number | null {
    const bout = now - this.#lastDropAt > BOUT_GAP_MS;
    this.#lastDropAt = now;
    // What is dropped while the restarted encoder settles is the old rate's queue: not counted.
    if (now - this.#changedAt < SETTLE_MS || this.#rung === this.rungs.length - 1) return null;
    if (bout) this.#bouts = [...this.#bouts.filter((at) => now - at < BOUTS_WITHIN_MS), now];
    if (this.#bouts.length < (now - this.#steppedUpAt < TRIAL_MS ? 1 : 2)) return null;
    this.#bouts = [];
    if (now - this.#steppedUpAt < this.#calmMs) this.#calmMs = Math.min(MAX_CALM_MS, this.#calmMs * 2);
    this.#rung++;
    this.#changedAt = now;
    return this.kbps;
  }

  /** Time passed with frames flowing: answers the new rate when the encoder should go up a rung. */
  calm(now: number): number | null {
    if (this.#rung === 0) return null;
    if (now - Math.max(this.#lastDropAt, this.#changedAt) < this.#calmMs) return null;
    this.#rung--;
    this.#changedAt = now;
    this.#steppedUpAt = now;
    return this.kbps;
  }

  /** Everyone left: the next watcher starts at the ceiling. */
  reset(): void {
    this.#rung = 0;
    this.#changedAt = this.#lastDropAt = this.#steppedUpAt = -Infinity;
    this.#bouts = [];
    this.#calmMs = CALM_MS;
  }
}
