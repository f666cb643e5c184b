// The viewer's switch between RFB and video (src/core/video-motion.ts), and the SetEncodings it
// sends noVNC's way (src/core/video-mode.ts): timings and byte counts only, no browser.
import { describe, expect, it } from 'vitest';
import { MOTION, RfbMotion, VideoStillness } from '../../src/core/video-motion.js';
import { withoutContinuousUpdates } from '../../src/core/video-mode.js';

describe('RfbMotion', () => {
  it('calls the display moving once large updates have followed each other for a second', () => {
    const motion = new RfbMotion();
    for (let t = 0; t < 1000; t += 40) {
      motion.update(90_000, t);
      expect(motion.moving(t)).toBe(false);
    }
    motion.update(90_000, 1000);
    expect(motion.moving(1000)).toBe(true);
  });

  it('does so on a slow link too, where large updates come a few a second', () => {
    const motion = new RfbMotion();
    for (const t of [0, 400, 800, 1200]) motion.update(100_000, t);
    expect(motion.moving(1200)).toBe(true);
  });

  it('does so for a video that does not fill the window, drawn as a large update and often a small one after it', () => {
    // What the viewer read on loopback for a 720p clip over 60 % of the window: about 40 kB, then 0-4 kB.
    const motion = new RfbMotion();
    let t = 0;
    for (let frame = 0; frame < 33; frame++) {
      motion.update(40_000, t);
      if (frame % 3 !== 2) motion.update(frame % 5 === 0 ? 3_000 : 500, t + 3);
      if (frame % 7 === 0) motion.update(200, t + 5);
      t += 33;
    }
    expect(motion.moving(t - 33)).toBe(true);
  });

  it('does not for small updates, one large update, small ones outnumbering the large, or a pause in between', () => {
    const small = new RfbMotion();
    for (let t = 0; t <= 3000; t += 16) small.update(2_000, t);
    expect(small.moving(3000)).toBe(false);

    const once = new RfbMotion();
    once.update(2_000_000, 0);
    expect(once.moving(1500)).toBe(false);

    // Typing after a large change: small updates outnumber the large one.
    const typed = new RfbMotion();
    typed.update(90_000, 0);
    for (let t = 100; t <= 1200; t += 100) typed.update(1_000, t);
    typed.update(90_000, 1300);
    expect(typed.moving(1300)).toBe(false);

    // Large and small updates alternating, then small ones twice as many: the run breaks.
    const broken = new RfbMotion();
    for (let t = 0; t < 600; t += 40) broken.update(t % 80 === 0 ? 90_000 : 1_000, t);
    for (let t = 600; t < 1200; t += 30) broken.update(t % 90 === 0 ? 90_000 : 1_000, t);
    expect(broken.moving(1200)).toBe(false);

    const paused = new RfbMotion();
    for (const t of [0, 300, 2000, 2300]) paused.update(90_000, t);
    expect(paused.moving(2300)).toBe(false);
  });
});

describe('VideoStillness', () => {
  it('takes a key frame after a hole (frames dropped for a slow link) as a new start, not as stillness', () => {
    const still = new VideoStillness();
    still.begin(0);
    for (let t = 0; t < 1500; t += 33) still.add(10_000, false, t);
    // Dropped up to the next key frame, 2 s later.
    still.add(40_000, true, 3500);
    expect(still.still(3500)).toBe(false);
    for (let t = 3533; t < 4400; t += 33) still.add(10_000, false, t);
    expect(still.still(4400)).toBe(false);
    // A still picture after that is still.
    for (let t = 4400; t < 5600; t += 33) still.add(26, false, t);
    expect(still.still(5600)).toBe(true);
  });

  it('is still once a second of frames (key frames aside) brought little, never in the first second', () => {
    const still = new VideoStillness();
    still.begin(0);
    for (let t = 0; t < 900; t += 33) still.add(26, false, t);
    expect(still.still(900)).toBe(false);
    still.add(12_000, true, 950);
    for (let t = 990; t < 2000; t += 33) still.add(26, false, t);
    expect(still.still(2000)).toBe(true);
  });

  it('is not while frames carry motion', () => {
    const moving = new VideoStillness();
    moving.begin(0);
    for (let t = 0; t < 3000; t += 33) moving.add(10_000, false, t);
    expect(moving.still(3000)).toBe(false);
    // Motion that stops is still a second later.
    for (let t = 3000; t < 4100; t += 33) moving.add(30, false, t);
    expect(moving.still(4100)).toBe(true);
    expect(MOTION.stillBytes).toBeGreaterThan(30 * 33);
  });
});

describe('withoutContinuousUpdates', () => {
  const setEncodings = (encodings: number[]) => {
    const bytes = new Uint8Array(4 + 4 * encodings.length);
    const view = new DataView(bytes.buffer);
    bytes[0] = 2;
    view.setUint16(2, encodings.length);
    encodings.forEach((e, i) => view.setInt32(4 + 4 * i, e));
    return bytes;
  };

  it('takes the ContinuousUpdates pseudo-encoding out and keeps the rest in order', () => {
    const out = withoutContinuousUpdates(setEncodings([1, 7, -308, -312, -313, -307]))!;
    expect(Array.from(out)).toEqual(Array.from(setEncodings([1, 7, -308, -312, -307])));
  });

  it('leaves anything that is not one whole SetEncodings alone', () => {
    expect(withoutContinuousUpdates(new Uint8Array([3, 1, 0, 0, 0, 0, 5, 0, 2, 208]))).toBeNull();
    expect(withoutContinuousUpdates(setEncodings([1, -313]).subarray(0, 8))).toBeNull();
  });
});
