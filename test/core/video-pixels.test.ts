// The worker's own colour conversion (src/core/video-pixels.ts, decisions.md 90): I420 at BT.601
// limited range, as libx264 encodes the display, made RGBA, rows padded as a decoder pads them.
import { describe, expect, it } from 'vitest';
import { i420ToRgba } from '../../src/core/video-pixels.js';

/** A 4x2 frame, its left half one colour and its right half another, rows padded to `stride`. */
function frame(left: [number, number, number], right: [number, number, number], stride = 8) {
  const chromaStride = stride / 2;
  const planes = new Uint8Array(stride * 2 + chromaStride * 2).fill(7);
  for (let row = 0; row < 2; row++) for (let x = 0; x < 4; x++) planes[row * stride + x] = (x < 2 ? left : right)[0];
  for (let x = 0; x < 2; x++) {
    planes[stride * 2 + x] = (x < 1 ? left : right)[1];
    planes[stride * 2 + chromaStride + x] = (x < 1 ? left : right)[2];
  }
  return { planes, layout: [{ offset: 0, stride }, { offset: stride * 2, stride: chromaStride }, { offset: stride * 2 + chromaStride, stride: chromaStride }] };
}

describe('I420 made RGBA', () => {
  it('gives black, white and the primaries at limited range, clamped, opaque', () => {
    const out = new Uint8ClampedArray(4 * 2 * 4);
    // Black and white; then red and blue (BT.601: Y 81 U 90 V 240, Y 41 U 240 V 110).
    for (const [left, right, want] of [
      [[16, 128, 128], [235, 128, 128], [[0, 0, 0], [255, 255, 255]]],
      [[81, 90, 240], [41, 240, 110], [[255, 0, 0], [0, 0, 255]]],
    ] as const) {
      const { planes, layout } = frame([...left], [...right]);
      i420ToRgba(planes, layout, 4, 2, out);
      for (let row = 0; row < 2; row++) {
        for (let x = 0; x < 4; x++) {
          const pixel = Array.from(out.slice((row * 4 + x) * 4, (row * 4 + x) * 4 + 4));
          const expected = x < 2 ? want[0] : want[1];
          pixel.slice(0, 3).forEach((c, i) => expect(Math.abs(c - expected[i]!)).toBeLessThanOrEqual(2));
          expect(pixel[3]).toBe(255);
        }
      }
    }
  });

  it('handles an odd width and height (the last column and row have chroma of their own pair)', () => {
    const { planes, layout } = frame([235, 128, 128], [235, 128, 128]);
    const out = new Uint8ClampedArray(3 * 1 * 4);
    i420ToRgba(planes, layout, 3, 1, out);
    expect(Array.from(out)).toEqual([255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255]);
  });
});
