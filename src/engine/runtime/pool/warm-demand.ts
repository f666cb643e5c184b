// How many warm browsers the pool wants, of which kind: a browser and a session language (the
// interface language is fixed when a browser starts, decisions.md 63). Each configured language
// keeps one; a language learned from recent creates keeps one until it has been quiet a while; the
// recent rate of creates of a kind adds more; and the whole pool stays under its memory budget.
// Pure over the creates it was told of and the clock, so sizing is tested without a browser; apart
// from that, whether the host has the memory to warm at all (hostMemoryShort).
import { readFileSync } from 'node:fs';

/** One kind of warm browser: an image id and the language its sessions ask for. */
export interface WarmKind {
  browser: string;
  language: string;
}

export interface WarmDemandSettings {
  /** Memory the warm slots may hold together, in MB (what each holds is measured; estimated before). */
  memoryMb: number;
  /** At most this many warm browsers whatever the budget holds; null: as many as it holds. */
  maxBrowsers: number | null;
  /** Kinds kept warm even when quiet (the default browser in each configured language). */
  kept: readonly WarmKind[];
  /** A learned kind is let go after this long without a create. */
  quietMs: number;
}

/** Creates within this window make the rate that adds warm browsers of a kind. */
export const RATE_WINDOW_MS = 30_000;
/**
 * About how long replacing a taken warm browser takes on a loaded machine (a second of quiet after
 * the start that took it, then a start of its own, slower beside live sessions): a kind created at rate
 * r per second wants r x this many more browsers ready, so that the next create still finds one.
 */
const REFILL_SECONDS = 5;

const keyOf = (kind: WarmKind) => `${kind.browser}\u0000${kind.language}`;

export class WarmDemand {
  /** Creates of each kind: their times, newest last (pruned to the quiet period). */
  private readonly creates = new Map<string, { kind: WarmKind; at: number[] }>();

  constructor(readonly settings: WarmDemandSettings) {}

  /** A session of `kind` was asked for at `at`. */
  record(kind: WarmKind, at: number): void {
    const key = keyOf(kind);
    const entry = this.creates.get(key) ?? { kind: { browser: kind.browser, language: kind.language }, at: [] };
    entry.at.push(at);
    this.creates.set(key, entry);
  }

  /** The kinds created recently (languages in use), most created first. */
  learned(now: number): WarmKind[] {
    this.prune(now);
    return [...this.creates.values()].sort((a, b) => b.at.length - a.at.length).map((entry) => entry.kind);
  }

  /**
   * Warm browsers wanted of each kind, under the budget: every kind gets its first browser before
   * any gets a second, kept kinds first, then the most created. `estimateMb` is what one browser of
   * an image holds; `reservedMb` what the rest of the pool (ready displays) holds.
   */
  wants(now: number, estimateMb: (browser: string) => number, reservedMb = 0): Array<{ kind: WarmKind; count: number }> {
    this.prune(now);
    const { memoryMb, maxBrowsers, kept } = this.settings;
    const wanted = new Map<string, { kind: WarmKind; want: number; count: number }>();
    for (const kind of kept) wanted.set(keyOf(kind), { kind, want: 1, count: 0 });
    const recent = [...this.creates.values()].sort((a, b) => b.at.length - a.at.length);
    for (const { kind, at } of recent) {
      const rate = at.filter((t) => now - t < RATE_WINDOW_MS).length / (RATE_WINDOW_MS / 1000);
      const key = keyOf(kind);
      const entry = wanted.get(key) ?? { kind, want: 1, count: 0 };
      entry.want = Math.max(entry.want, 1 + Math.round(rate * REFILL_SECONDS));
      wanted.set(key, entry);
    }
    let used = reservedMb;
    let total = 0;
    const order = [...wanted.values()];
    for (let round = 1; order.some((entry) => entry.want >= round); round++) {
      for (const entry of order) {
        if (entry.want < round) continue;
        const cost = estimateMb(entry.kind.browser);
        if (used + cost > memoryMb || (maxBrowsers !== null && total >= maxBrowsers)) return order.filter((e) => e.count > 0).map(({ kind, count }) => ({ kind, count }));
        entry.count++;
        used += cost;
        total++;
      }
    }
    return order.filter((e) => e.count > 0).map(({ kind, count }) => ({ kind, count }));
  }

  /** Forgets creates older than the quiet period; a kind with none left is no longer learned. */
  private prune(now: number): void {
    for (const [key, entry] of this.creates) {
      entry.at = entry.at.filter((t) => now - t < this.settings.quietMs);
      if (entry.at.length === 0) this.creates.delete(key);
    }
  }
}

/** Warming stops while the host has less memory available than this. */
const MEMORY_RESERVE_MB = 1024;

/** Why the host is too short of memory to warm now (MemAvailable under the reserve), or null (enough, or unknown). */
export function hostMemoryShort(): string | null {
  let available: number | null = null;
  try {
    const kb = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1];
    available = kb === undefined ? null : Math.round(Number(kb) / 1024);
  } catch {
    available = null;
  }
  return available !== null && available < MEMORY_RESERVE_MB ? `the host has ${available} MB of memory available (the pool leaves ${MEMORY_RESERVE_MB} MB)` : null;
}
