// A decoded frame's I420 planes made RGBA pixels, in plain JavaScript (issue 37, decisions.md 90):
// what the video's worker draws with, because the browser's own conversion of a VideoFrame (a 2D
// context's drawImage, createImageBitmap) waits on the page's thread, as Chromium's does without a
// GPU. BT.601 limited range, as libx264 encodes the display. No DOM; testable alone.

/** Where each plane starts and how long its rows are (VideoFrame.copyTo's answer). */
export interface PlaneLayout {
  offset: number;
  stride: number;
}

/** Clamps a colour to 0-255 by look-up: index `value + CLAMP_OFFSET`. */
const CLAMP_OFFSET = 1024;
const CLAMP = Uint8Array.from({ length: 2 * CLAMP_OFFSET + 256 }, (_, i) => Math.max(0, Math.min(255, i - CLAMP_OFFSET)));
const OFFSET_BITS = CLAMP_OFFSET << 8;

/**
 * Y, U and V at 8 bits, limited range, into `out` (width x height RGBA, opaque). Two rows and two
 * columns at a time (one chroma sample each), one 32-bit store a pixel (R, G, B, A in memory order
 * on a little-endian machine: all that run browsers). About 4 ms of CPU for 1280x676 on this project's 2-core machine.
 */
export function i420ToRgba(planes: Uint8Array, layout: readonly PlaneLayout[], width: number, height: number, out: Uint8ClampedArray): void {
  const [y, u, v] = layout as [PlaneLayout, PlaneLayout, PlaneLayout];
  const pixels = new Uint32Array(out.buffer, out.byteOffset, width * height);
  const even = width & ~1;
  for (let row = 0; row < height; row += 2) {
    const uRow = u.offset + (row >> 1) * u.stride;
    const vRow = v.offset + (row >> 1) * v.stride;
    const yTop = y.offset + row * y.stride;
    // An odd last row is its own pair.
    const yBottom = row + 1 < height ? yTop + y.stride : yTop;
    const top = row * width;
    const bottom = row + 1 < height ? top + width : top;
    for (let column = 0; column < width; column += 2) {
      const cb = planes[uRow + (column >> 1)]! - 128;
      const cr = planes[vRow + (column >> 1)]! - 128;
      const red = 409 * cr + 128 + OFFSET_BITS;
      const green = 128 - 100 * cb - 208 * cr + OFFSET_BITS;
      const blue = 516 * cb + 128 + OFFSET_BITS;
      // Written out four times (a helper per pixel costs a third more here); a negative int32
      // stored in a Uint32Array is the same bits.
      let luma = (planes[yTop + column]! - 16) * 298;
      pixels[top + column] = 0xff000000 | (CLAMP[(luma + blue) >> 8]! << 16) | (CLAMP[(luma + green) >> 8]! << 8) | CLAMP[(luma + red) >> 8]!;
      luma = (planes[yBottom + column]! - 16) * 298;
      pixels[bottom + column] = 0xff000000 | (CLAMP[(luma + blue) >> 8]! << 16) | (CLAMP[(luma + green) >> 8]! << 8) | CLAMP[(luma + red) >> 8]!;
      // An odd last column has no pair.
      if (column >= even) continue;
      luma = (planes[yTop + column + 1]! - 16) * 298;
      pixels[top + column + 1] = 0xff000000 | (CLAMP[(luma + blue) >> 8]! << 16) | (CLAMP[(luma + green) >> 8]! << 8) | CLAMP[(luma + red) >> 8]!;
      luma = (planes[yBottom + column + 1]! - 16) * 298;
      pixels[bottom + column + 1] = 0xff000000 | (CLAMP[(luma + blue) >> 8]! << 16) | (CLAMP[(luma + green) >> 8]! << 8) | CLAMP[(luma + red) >> 8]!;
    }
  }
}
