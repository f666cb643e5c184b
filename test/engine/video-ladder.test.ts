// The session encoder's bit rate ladder (src/engine/runtime/video-ladder.ts, decisions.md 68): a
// watcher that keeps dropping frames takes the encoder down, a calm period brings it back up, and
// a rung that failed soon after it was tried waits longer before it is tried again.
import { describe, expect, it } from 'vitest';
import { BitRateLadder, CALM_MS, ladderRungs, SETTLE_MS } from '../../src/engine/runtime/video-ladder.js';

describe('BitRateLadder', () => {
  it('has the ceiling, about half and about a quarter of it, never under 200 kbit/s', () => {
    expect(ladderRungs(2500)).toEqual([2500, 1200, 600]);
    expect(ladderRungs(400)).toEqual([400, 200]);
  });

  it('steps down while frames are dropped, at most once per settling time, and stops at the last rung', () => {
    const ladder = new BitRateLadder(2500);
    expect(ladder.kbps).toBe(2500);
    expect(ladder.dropped(0)).toBe(1200);
    // The restarted encoder's first frames: no second step yet.
    expect(ladder.dropped(SETTLE_MS / 2)).toBeNull();
    expect(ladder.kbps).toBe(1200);
    expect(ladder.dropped(SETTLE_MS + 1)).toBe(600);
    expect(ladder.dropped(3 * SETTLE_MS)).toBeNull();
    expect(ladder.kbps).toBe(600);
  });

  it('steps up after a calm period, and waits twice as long after a step up that dropped again', () => {
    const ladder = new BitRateLadder(2500);
    ladder.dropped(0);
    expect(ladder.calm(CALM_MS - 1)).toBeNull();
    expect(ladder.calm(CALM_MS)).toBe(2500);
    // Too much for the link: down again at once (after the settling time) ...
    const failed = CALM_MS + SETTLE_MS;
    expect(ladder.dropped(failed)).toBe(1200);
    // ... and the next try waits twice the calm period.
    expect(ladder.calm(failed + CALM_MS)).toBeNull();
    expect(ladder.calm(failed + 2 * CALM_MS)).toBe(2500);
  });

  it('starts again at the ceiling once reset (everyone left)', () => {
    const ladder = new BitRateLadder(2500);
    ladder.dropped(0);
    ladder.reset();
    expect(ladder.kbps).toBe(2500);
    expect(ladder.calm(1_000_000)).toBeNull();
  });
});
