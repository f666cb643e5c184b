// The session encoder's bit rate ladder (src/engine/runtime/capture/video-ladder.ts, decisions.md 68): a
// watcher that keeps dropping frames (two bouts) takes the encoder down, one bout does not, a calm period brings it back up on
// trial (one bout ends the trial), and a rung that failed soon after it was tried waits longer before it is tried again.
import { describe, expect, it } from 'vitest';
import { BitRateLadder, BOUT_GAP_MS, BOUTS_WITHIN_MS, CALM_MS, ladderRungs, SETTLE_MS, TRIAL_MS } from '../../src/engine/runtime/capture/video-ladder.js';

/** Two bouts of drops, the second at `at`: what takes the encoder down. */
function twoBouts(ladder: BitRateLadder, at: number): number | null {
  ladder.dropped(at - BOUT_GAP_MS - 1);
  return ladder.dropped(at);
}

describe('BitRateLadder', () => {
  it('has the ceiling, about half and about a quarter of it, never under 200 kbit/s', () => {
    expect(ladderRungs(2500)).toEqual([2500, 1200, 600]);
    expect(ladderRungs(400)).toEqual([400, 200]);
  });

  it('steps down when frames are dropped in a second bout, at most once per settling time, and stops at the last rung', () => {
    const ladder = new BitRateLadder(2500);
    expect(ladder.kbps).toBe(2500);
    // One bout (a busy machine's hiccup as likely as a slow link): no step.
    expect(ladder.dropped(0)).toBeNull();
    expect(ladder.dropped(100)).toBeNull();
    expect(ladder.kbps).toBe(2500);
    // A second bout soon after: a rung down.
    expect(ladder.dropped(2000)).toBe(1200);
    // The restarted encoder's first frames: no second step yet.
    expect(twoBouts(ladder, 2000 + SETTLE_MS / 2)).toBeNull();
    expect(ladder.kbps).toBe(1200);
    expect(twoBouts(ladder, 4000 + SETTLE_MS)).toBe(600);
    expect(twoBouts(ladder, 8000 + SETTLE_MS)).toBeNull();
    expect(ladder.kbps).toBe(600);
  });

  it('takes bouts far apart for hiccups', () => {
    const ladder = new BitRateLadder(2500);
    for (let at = 0; at < 60_000; at += BOUTS_WITHIN_MS + 1) expect(ladder.dropped(at)).toBeNull();
    expect(ladder.kbps).toBe(2500);
  });

  it('steps up after a calm period, and waits twice as long after a step up that dropped again', () => {
    const ladder = new BitRateLadder(2500);
    expect(twoBouts(ladder, 1000)).toBe(1200);
    expect(ladder.calm(1000 + CALM_MS - 1)).toBeNull();
    expect(ladder.calm(1000 + CALM_MS)).toBe(2500);
    // Too much for the link: one bout of drops takes it down again (after the settling time) ...
    const failed = 1000 + CALM_MS + 2 * SETTLE_MS;
    expect(ladder.dropped(failed)).toBe(1200);
    // ... and the next try waits twice the calm period.
    expect(ladder.calm(failed + CALM_MS)).toBeNull();
    expect(ladder.calm(failed + 2 * CALM_MS)).toBe(2500);
  });

  it('ends a trial at one bout only while it is new: later, a single bout is a hiccup again', () => {
    const ladder = new BitRateLadder(2500);
    expect(twoBouts(ladder, 1000)).toBe(1200);
    const steppedUp = 1000 + CALM_MS;
    expect(ladder.calm(steppedUp)).toBe(2500);
    expect(ladder.dropped(steppedUp + TRIAL_MS + 1)).toBeNull();
    expect(ladder.kbps).toBe(2500);
  });

  it('starts again at the ceiling once reset (everyone left)', () => {
    const ladder = new BitRateLadder(2500);
    twoBouts(ladder, 1000);
    expect(ladder.kbps).toBe(1200);
    ladder.reset();
    expect(ladder.kbps).toBe(2500);
    expect(ladder.calm(1_000_000)).toBeNull();
  });
});
