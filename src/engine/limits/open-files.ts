// The engine's open files, kept in reserve: sockets that a session or a viewer makes the engine
// hold (egress connections, viewer WebSockets and their relays) may only use what is left above a
// reserve, so the API, /healthz, session starts and other viewers keep answering (decisions.md 48).
import { readdirSync, readFileSync } from 'node:fs';

/** Who asks: egress connections leave the whole reserve; viewers may use its upper half. */
export type OpenFilesClaimant = 'egress' | 'viewer';

export interface OpenFilesOptions {
  /** Files kept free for the engine's own work; null or undefined: a tenth of the limit, at least 256. */
  reserve?: number | null;
  /** The engine's open-files limit; default its soft RLIMIT_NOFILE (Node raises it to the hard one). */
  limit?: number;
}

// Counting /proc/self/fd costs about 10 ms at 15,000 files: recounted once a second, or every
// 100 ms when close to the line, and estimated from the files taken and given back in between.
const RECOUNT_MS = 1000;
const RECOUNT_NEAR_LINE_MS = 100;

/** The soft open-files limit of this process, or Infinity where /proc does not say (not Linux). */
export function openFilesLimit(): number {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line && line[1] !== 'unlimited' ? Number(line[1]) : Infinity;
  } catch {
    return Infinity;
  }
}

function countOpenFiles(): number | null {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return null;
  }
}

export class OpenFiles {
  readonly limit: number;
  readonly reserve: number;
  private counted = 0;
  private countedAt = -Infinity;
  /** Files taken minus files given back since the last count. */
  private drift = 0;
  /** Files held now by what outsiders opened (for diagnostics and tests). */
  private held = 0;

  constructor(options: OpenFilesOptions = {}) {
    this.limit = options.limit ?? openFilesLimit();
    const reserve = options.reserve ?? Math.min(Math.max(256, Math.round(this.limit / 10)), Math.floor(this.limit / 2));
    if (!Number.isInteger(reserve) || reserve < 0) throw new Error(`openFiles.reserve must be a whole number of files, 0 or more (was ${reserve})`);
    if (reserve >= this.limit) {
      throw new Error(
        `openFiles.reserve (${reserve}) must be below this engine's open-files limit (${this.limit}): lower it, or raise the limit (ulimit -n, LimitNOFILE=)`,
      );
    }
    this.reserve = reserve;
  }

  /** Files held now for sockets that sessions and viewers opened. */
  get inUse(): number {
    return this.held;
  }

  /**
   * Takes `count` files for a socket someone outside the engine opened; false (nothing taken) when
   * that would leave the engine less than its reserve (half of it, for a viewer).
   */
  take(count: number, claimant: OpenFilesClaimant): boolean {
    if (this.limit === Infinity) {
      this.held += count;
      return true;
    }
    const line = this.limit - (claimant === 'viewer' ? Math.ceil(this.reserve / 2) : this.reserve);
    const age = Date.now() - this.countedAt;
    if (age > RECOUNT_MS || (age > RECOUNT_NEAR_LINE_MS && this.counted + this.drift + count > line - this.limit / 20)) {
      const counted = countOpenFiles();
      if (counted !== null) {
        this.counted = counted;
        this.countedAt = Date.now();
        this.drift = 0;
      }
    }
    if (this.counted + this.drift + count > line) return false;
    this.drift += count;
    this.held += count;
    return true;
  }

  /** Gives back what `take` took, once the socket has closed. */
  give(count: number): void {
    this.drift -= count;
    this.held -= count;
  }
}
