// How the warm pool sizes itself (warm-demand.ts), without a browser: kept languages always, a
// language learned from creates until it has been quiet, more for a kind created often, every
// kind's first browser before any kind's second, and never over the memory budget; and what
// doctor says of the pool.
import { describe, expect, it } from 'vitest';
import { DEFAULT_WARM } from '../../src/engine/config.js';
import { formatDoctor, warmPoolCheck } from '../../src/engine/doctor.js';
import { WarmDemand } from '../../src/engine/runtime/pool/warm-demand.js';

const en = { browser: 'chromium', language: 'en' };
const de = { browser: 'chromium', language: 'de' };
const ja = { browser: 'chromium', language: 'ja' };
const MINUTE = 60_000;
const wants = (demand: WarmDemand, now: number, mb = 250) =>
  demand.wants(now, () => mb).map(({ kind, count }) => `${kind.language}:${count}`);

describe('the warm pool\'s demand', () => {
  it('keeps the configured languages, learns others from creates and lets them go when quiet', () => {
    const demand = new WarmDemand({ memoryMb: 1000, maxBrowsers: null, kept: [en], quietMs: 10 * MINUTE });
    expect(wants(demand, 0)).toEqual(['en:1']);
    demand.record(de, 0);
    expect(wants(demand, 5 * MINUTE)).toEqual(['en:1', 'de:1']);
    expect(demand.learned(5 * MINUTE)).toEqual([de]);
    expect(wants(demand, 11 * MINUTE)).toEqual(['en:1']);
    expect(demand.learned(11 * MINUTE)).toEqual([]);
  });

  it('grows with the recent rate of creates, first browsers first, up to the budget and the cap', () => {
    const demand = new WarmDemand({ memoryMb: 2000, maxBrowsers: null, kept: [en], quietMs: 10 * MINUTE });
    // 20 creates of en within the last 30 s (two-thirds a second): en wants 1 + 3 more.
    for (let i = 0; i < 20; i++) demand.record(en, i * 1000);
    demand.record(ja, 19_000);
    expect(wants(demand, 20_000)).toEqual(['en:4', 'ja:1']);
    // A budget for three: ja keeps its first browser before en gets a third.
    expect(wants(demand, 20_000, 600)).toEqual(['en:2', 'ja:1']);
    const capped = new WarmDemand({ memoryMb: 1000, maxBrowsers: 2, kept: [en], quietMs: 10 * MINUTE });
    for (let i = 0; i < 20; i++) capped.record(en, i * 1000);
    capped.record(ja, 19_000);
    expect(wants(capped, 20_000)).toEqual(['en:1', 'ja:1']);
    // Quiet again: the rate falls, the extra browsers go.
    expect(wants(demand, 5 * MINUTE)).toEqual(['en:1', 'ja:1']);
    expect(wants(new WarmDemand({ memoryMb: 100, maxBrowsers: null, kept: [en], quietMs: MINUTE }), 0)).toEqual([]);
  });
});

describe('doctor', () => {
  it('shows the warm pool the configuration asks for, and says when the host cannot hold it', () => {
    const shown = warmPoolCheck(DEFAULT_WARM, 8192);
    expect(shown.ok).toBe(true);
    expect(shown.detail).toMatch(/^on: up to 1024 MB, about 5 Chromium browsers at ~170 MB each idle \(Firefox ESR ~470 MB\), and 1 ready display; kept warm: en;/);
    expect(formatDoctor({ ok: true, checks: [shown], images: [] })).toContain('warm pool (sessions start in a ready browser): on: up to 1024 MB');
    expect(warmPoolCheck({ ...DEFAULT_WARM, memoryMb: 0 }, 8192).detail).toMatch(/^warm browsers off .* on one of 1 ready displays$/);
    const tooBig = warmPoolCheck({ ...DEFAULT_WARM, memoryMb: 4096 }, 4096);
    expect(tooBig.ok).toBe(false);
    expect(tooBig.detail).toMatch(/lower warm.memoryMb$/);
  });
});
