// The sound player's jitter buffer (src/core/sound-schedule.ts): frames arriving as a network
// delivers them, and what a listener would hear: sound back to back, a bounded delay, gaps only
// where the network stalled, no drift over an hour whichever clock runs faster, and a lead that
// grows on a jumpy link and comes back on a steady one.
import { describe, expect, it } from 'vitest';
import { SOUND_MAX_LEAD_SECONDS, SOUND_MAX_TARGET_LEAD_SECONDS, SoundSchedule, SOUND_TARGET_LEAD_SECONDS } from '../../src/core/sound-schedule.js';

const RATE = 48_000;
const FRAME = 480; // 10 ms, the engine's frame
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
    expect(heard.starts.at(-1)! - heard.starts[0]!).toBeCloseTo((frames - 1) * FRAME_S, 6);
  });

  it('drops a frame now and then when the engine sends 0.1 % fast, so the delay stays put over an hour', () => {
    const frames = 3600 / FRAME_S;
    const heard = listen(frames, (n) => n * FRAME_S * 0.999);
    // 3.6 s too much sound in the hour: about 360 frames of 10 ms must go, and no more than that.
    expect(heard.schedule.counts.dropped).toBeGreaterThanOrEqual(340);
    expect(heard.schedule.counts.dropped).toBeLessThanOrEqual(400);
    expect(heard.maxLead).toBeLessThanOrEqual(SOUND_MAX_LEAD_SECONDS);
    expect(heard.schedule.counts.starved).toBe(0);
  });

  it('puts in a frame of silence now and then when the engine sends 0.1 % slow, and never runs dry', () => {
    const frames = 3600 / FRAME_S;
    const heard = listen(frames, (n) => n * FRAME_S * 1.001);
    expect(heard.schedule.counts.starved).toBe(0);
    expect(heard.schedule.counts.silenced).toBeGreaterThanOrEqual(340);
    expect(heard.schedule.counts.silenced).toBeLessThanOrEqual(400);
    // Each silence is one frame long, and the delay never grows past the bound.
    for (const gap of heard.gaps) expect(gap).toBeCloseTo(FRAME_S, 9);
    expect(heard.maxLead).toBeLessThanOrEqual(SOUND_MAX_LEAD_SECONDS);
  });

  it('after a stall, starts again at the target lead and drops the burst that goes past the bound', () => {
    // 100 frames on time, nothing for 300 ms, then the 30 held-back frames at once, then on time again.
    const arrival = (n: number) => (n < 100 ? n * FRAME_S : n < 130 ? 100 * FRAME_S + 0.3 : n * FRAME_S + 0.01);
    const heard = listen(300, arrival);
    expect(heard.schedule.counts.starved).toBe(1);
    // The gap is the stall's length, give or take the lead.
    expect(heard.gaps).toHaveLength(1);
    expect(heard.gaps[0]).toBeGreaterThan(0.2);
    expect(heard.gaps[0]).toBeLessThan(0.35);
    // Only what fits under the bound of the burst plays; the rest is dropped, not queued.
    expect(heard.schedule.counts.dropped).toBeGreaterThanOrEqual(20);
    expect(heard.maxLead).toBeLessThanOrEqual(heard.schedule.targetLead + 0.04 + 1e-9);
  });

  it('starts over at the target lead after a reset (a new connection)', () => {
    const schedule = new SoundSchedule({ sampleRate: RATE });
    schedule.place(1, FRAME);
    schedule.place(1.02, FRAME);
    schedule.reset();
    expect(schedule.place(50, FRAME)).toEqual({ play: true, at: 50 + SOUND_TARGET_LEAD_SECONDS, resumed: false });
    expect(schedule.counts.starved).toBe(0);
  });

  it('aims at more lead on a link that keeps stalling, so the stalls stop being heard, and at the small lead again once it is steady', () => {
    // Every 10 s the link holds 4 frames back for 40 ms, then delivers them at once; after 30 such
    // stalls (5 minutes) it is steady for 8 minutes.
    const spikes = 30;
    const period = 1000;
    const stalled = (n: number) => n < spikes * period && n % period >= 500 && n % period < 504;
    const arrival = (n: number) => (stalled(n) ? (n - (n % period) + 500) * FRAME_S + 0.04 : n * FRAME_S);
    const schedule = new SoundSchedule({ sampleRate: RATE });
    let highest = 0;
    for (let n = 0; n < spikes * period + 48_000; n++) {
      schedule.place(arrival(n), FRAME);
      highest = Math.max(highest, schedule.targetLead);
    }
    // The first stalls run the 25 ms buffer dry; then the lead has grown past the stall, and only
    // now and then, when it has come down after a calm minute, does one run it dry again.
    expect(schedule.counts.starved).toBeGreaterThanOrEqual(1);
    expect(schedule.counts.starved).toBeLessThanOrEqual(spikes / 4);
    expect(highest).toBeGreaterThan(SOUND_TARGET_LEAD_SECONDS);
    expect(highest).toBeLessThanOrEqual(SOUND_MAX_TARGET_LEAD_SECONDS);
    // Eight steady minutes bring it back to the small lead (the listener hears the remote page sooner again).
    expect(schedule.targetLead).toBeCloseTo(SOUND_TARGET_LEAD_SECONDS, 9);
  });

  it('keeps the small lead when the buffer runs dry while the viewer starts (the first 2 s of a connection)', () => {
    // The viewer's page stalls 60 ms at 1 s (its first picture), then the link is steady.
    const arrival = (n: number) => (n >= 100 && n < 106 ? 100 * FRAME_S + 0.06 : n * FRAME_S);
    const heard = listen(1000, arrival);
    expect(heard.schedule.counts.starved).toBe(1);
    expect(heard.schedule.targetLead).toBe(SOUND_TARGET_LEAD_SECONDS);
    // The same stall later is the link's: it raises the lead.
    const later = listen(1000, (n) => (n >= 500 && n < 506 ? 500 * FRAME_S + 0.06 : n * FRAME_S));
    expect(later.schedule.counts.starved).toBe(1);
    expect(later.schedule.targetLead).toBeGreaterThan(SOUND_TARGET_LEAD_SECONDS);
  });
});
