// The sound player's jitter buffer (src/core/sound-schedule.ts): frames arriving as a network
// delivers them, and what a listener would hear: sound back to back, a bounded delay, gaps only
// where the network stalled, and no drift over an hour whichever clock runs faster.
import { describe, expect, it } from 'vitest';
import { SOUND_MAX_LEAD_SECONDS, SoundSchedule, SOUND_TARGET_LEAD_SECONDS } from '../../src/core/sound-schedule.js';

const RATE = 48_000;
const FRAME = 960; // 20 ms
const FRAME_S = FRAME / RATE;

/** A fixed pseudo-random jitter in [0, spread) seconds, the same each run. */
function jitter(spread: number) {
  let seed = 7;
  return () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return (seed / 2 ** 31) * spread;
  };
}

interface Heard {
  starts: number[];
  /** The largest delay between a frame's arrival and its start. */
  maxLead: number;
  /** Gaps between one frame's end and the next one's start, seconds. */
  gaps: number[];
  schedule: SoundSchedule;
}

/** Feeds `count` frames, frame n arriving at `arrival(n)`; records when each plays. */
function listen(count: number, arrival: (n: number) => number): Heard {
  const schedule = new SoundSchedule({ sampleRate: RATE });
  const starts: number[] = [];
  const gaps: number[] = [];
  let maxLead = 0;
  let end: number | null = null;
  for (let n = 0; n < count; n++) {
    const now = arrival(n);
    const placed = schedule.place(now, FRAME);
    if (!placed.play) continue;
    starts.push(placed.at);
    maxLead = Math.max(maxLead, placed.at - now);
    if (end !== null && placed.at - end > 1e-9) gaps.push(placed.at - end);
    end = placed.at + FRAME_S;
  }
  return { starts, maxLead, gaps, schedule };
}

describe('the sound schedule', () => {
  it('plays frames back to back, one target lead after the first arrives', () => {
    const heard = listen(500, (n) => 10 + n * FRAME_S);
    expect(heard.starts[0]).toBeCloseTo(10 + SOUND_TARGET_LEAD_SECONDS, 9);
    expect(heard.gaps).toEqual([]);
    expect(heard.schedule.counts).toEqual({ played: 500, dropped: 0, silenced: 0, starved: 0 });
  });

  it('rides out network jitter without gaps or drops, the delay staying bounded', () => {
    const late = jitter(0.015);
    const heard = listen(3000, (n) => n * FRAME_S + late());
    expect(heard.gaps).toEqual([]);
    expect(heard.schedule.counts.dropped).toBe(0);
    expect(heard.maxLead).toBeLessThanOrEqual(SOUND_MAX_LEAD_SECONDS);
  });

  it('does not drift over an hour: frame n of a steady stream starts exactly n frames after the first', () => {
    const frames = 3600 / FRAME_S;
    const heard = listen(frames, (n) => n * FRAME_S);
    expect(heard.starts).toHaveLength(frames);
    // Counted in whole samples from the anchor, not added up in floating point.
    expect(heard.starts.at(-1)! - heard.starts[0]!).toBe((frames - 1) * FRAME_S);
  });

  it('drops a frame now and then when the engine sends 0.1 % fast, so the delay stays put over an hour', () => {
    const frames = 3600 / FRAME_S;
    const heard = listen(frames, (n) => n * FRAME_S * 0.999);
    // 3.6 s too much sound in the hour: about 180 frames of 20 ms must go, and no more than that.
    expect(heard.schedule.counts.dropped).toBeGreaterThanOrEqual(170);
    expect(heard.schedule.counts.dropped).toBeLessThanOrEqual(200);
    expect(heard.maxLead).toBeLessThanOrEqual(SOUND_MAX_LEAD_SECONDS);
    expect(heard.schedule.counts.starved).toBe(0);
  });

  it('puts in a frame of silence now and then when the engine sends 0.1 % slow, and never runs dry', () => {
    const frames = 3600 / FRAME_S;
    const heard = listen(frames, (n) => n * FRAME_S * 1.001);
    expect(heard.schedule.counts.starved).toBe(0);
    expect(heard.schedule.counts.silenced).toBeGreaterThanOrEqual(150);
    expect(heard.schedule.counts.silenced).toBeLessThanOrEqual(200);
    // Each silence is one frame long, and the delay never grows past the bound.
    for (const gap of heard.gaps) expect(gap).toBeCloseTo(FRAME_S, 9);
    expect(heard.maxLead).toBeLessThanOrEqual(SOUND_MAX_LEAD_SECONDS);
  });

  it('after a stall, starts again at the target lead and drops the burst that goes past the bound', () => {
    // 100 frames on time, nothing for 300 ms, then the 15 held-back frames at once, then on time again.
    const arrival = (n: number) => (n < 100 ? n * FRAME_S : n < 115 ? 100 * FRAME_S + 0.3 : n * FRAME_S + 0.01);
    const heard = listen(300, arrival);
    expect(heard.schedule.counts.starved).toBe(1);
    // The gap is the stall's length, give or take the lead.
    expect(heard.gaps).toHaveLength(1);
    expect(heard.gaps[0]).toBeGreaterThan(0.2);
    expect(heard.gaps[0]).toBeLessThan(0.35);
    // Only what fits under the bound of the burst plays; the rest is dropped, not queued.
    expect(heard.schedule.counts.dropped).toBeGreaterThanOrEqual(11);
    expect(heard.maxLead).toBeLessThanOrEqual(SOUND_MAX_LEAD_SECONDS);
  });

  it('starts over at the target lead after a reset (a new connection)', () => {
    const schedule = new SoundSchedule({ sampleRate: RATE });
    schedule.place(1, FRAME);
    schedule.place(1.02, FRAME);
    schedule.reset();
    expect(schedule.place(50, FRAME)).toEqual({ play: true, at: 50 + SOUND_TARGET_LEAD_SECONDS, resumed: false });
    expect(schedule.counts.starved).toBe(0);
  });
});
