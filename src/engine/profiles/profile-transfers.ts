// How many saves and restores of saved profiles one engine runs at once (decisions.md 129): each
// holds its archive in memory several times over (the tar stream, the archive written again, the
// sealed blob), so the engine's memory for profiles is this number times one transfer's, whatever
// number of sessions end or start together. The rest wait their turn, first come first served.

/** Saves and restores at once on one engine. */
export const PROFILE_TRANSFERS_AT_ONCE = 2;

export class ProfileTransfers {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly atOnce = PROFILE_TRANSFERS_AT_ONCE) {}

  /** Runs `work` once fewer than `atOnce` others run; its place is given on when it settles. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.atOnce) this.running++;
    // A place given up goes straight to the first waiter: `running` stays as it is.
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Transfers running and waiting now (for tests and figures). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}
