// How many saves and restores of saved profiles one engine runs at once (decisions.md 129, 138):
// each streams, holding a bounded few megabytes (buffers, brotli's window, a sealed chunk or two),
// so the engine's memory for profiles is this number times one transfer's, whatever number of
// sessions end or start together, and the database and CPU see at most this many at once. The
// rest wait their turn, first come first served, a session's restore ahead of the saves.

/** Saves and restores at once on one engine. */
export const PROFILE_TRANSFERS_AT_ONCE = 2;

export class ProfileTransfers {
  private running = 0;
  /** Restores wait ahead of saves: a session's start has a deadline, a save does not (decisions.md 138). */
  private readonly waiting: { first: Array<() => void>; rest: Array<() => void> } = { first: [], rest: [] };

  constructor(private readonly atOnce = PROFILE_TRANSFERS_AT_ONCE) {}

  /** Runs `work` once fewer than `atOnce` others run (`first`: ahead of those waiting without it); its place is given on when it settles. */
  async run<T>(work: () => Promise<T>, first = false): Promise<T> {
    if (this.running < this.atOnce) this.running++;
    // A place given up goes straight to the first waiter: `running` stays as it is.
    else await new Promise<void>((resolve) => (first ? this.waiting.first : this.waiting.rest).push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.first.shift() ?? this.waiting.rest.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Transfers running and waiting now (for tests and figures). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.first.length + this.waiting.rest.length };
  }
}
