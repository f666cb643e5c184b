// A decoded frame's I420 planes made RGBA pixels, in plain JavaScript (issue 37, decisions.md 90):
// what the video's worker draws with where the browser's own conversion of a VideoFrame (a 2D
// context's drawImage, createImageBitmap) waits on the page's thread, as Chromium's does without a
// GPU. BT.601 limited range, as libx264 encodes the display. No DOM; testable alone.

/** Where each plane starts and how long its rows are (VideoFrame.copyTo's answer). */
export interface PlaneLayout {
  offset: number;
  stride: number;
}

/**
 * Y, U and V at 8 bits, limited range, into `out` (width x height RGBA). The alpha bytes are left
 * as they are: fill them once (an opaque picture) and reuse `out`. Two rows and two columns at a
 * time (one chroma sample each); the clamped array clamps each colour for free.
 */
export function i420ToRgba(planes: Uint8Array, layout: readonly PlaneLayout[], width: number, height: number, out: Uint8ClampedArray): void {
  const [y, u, v] = layout as [PlaneLayout, PlaneLayout, PlaneLayout];
  const rowBytes = width * 4;
  for (let row = 0; row < height; row += 2) {
    const chroma = row >> 1;
    const uRow = u.offset + chroma * u.stride;
    const vRow = v.offset + chroma * v.stride;
    const yTop = y.offset + row * y.stride;
    const yBottom = row + 1 < height ? yTop + y.stride : -1;
    for (let column = 0; column < width; column += 2) {
      const cb = planes[uRow + (column >> 1)]! - 128;
      const cr = planes[vRow + (column >> 1)]! - 128;
      const red = 409 * cr + 128;
      const green = 128 - 100 * cb - 208 * cr;
      const blue = 516 * cb + 128;
      const pair = column + 1 < width ? 2 : 1;
      for (let dx = 0; dx < pair; dx++) {
        let at = row * rowBytes + (column + dx) * 4;
        let luma = (planes[yTop + column + dx]! - 16) * 298;
        out[at] = (luma + red) >> 8;
        out[at + 1] = (luma + green) >> 8;
        out[at + 2] = (luma + blue) >> 8;
        if (yBottom < 0) continue;
        at += rowBytes;
        luma = (planes[yBottom + column + dx]! - 16) * 298;
        out[at] = (luma + red) >> 8;
        out[at + 1] = (luma + green) >> 8;
        out[at + 2] = (luma + blue) >> 8;
      }
    }
  }
}
