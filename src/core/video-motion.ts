// When the viewer switches between the RFB picture and video (issue 25), as pure decisions on
// timestamps and byte counts (testable alone; video-mode.ts carries them out). Motion is judged
// by what it costs: video starts once the RFB updates have been large for a second (a moving
// picture, scrolling held down), and stops once the video's frames have been nearly empty for a
// second (a still screen encodes to a few dozen bytes a frame; a blinking caret or a spinner to a
// few hundred), when RFB, asked once, sends what changed, sharp.

export interface MotionThresholds {
  /** The RFB bytes a window must bring for the display to count as moving. */
  rfbBytesPerWindow: number;
  /** Length of one window (ms). */
  windowMs: number;
  /** Consecutive moving windows before video starts. */
  windows: number;
  /** Video stops when its frames (key frames aside) brought fewer bytes than this over `stillMs`. */
  stillBytes: number;
  stillMs: number;
}

/** Video at about 160 kB/s of RFB held for a second; back to RFB below about 16 kB/s of video for a second. */
export const MOTION: MotionThresholds = { rfbBytesPerWindow: 40_000, windowMs: 250, windows: 4, stillBytes: 16_000, stillMs: 1000 };

/** Reads the RFB stream's bytes: `moving()` once the last `windows` windows each brought enough. */
export class RfbMotion {
  #windowStart = -Infinity;
  #windowBytes = 0;
  #movingWindows = 0;

  constructor(private readonly thresholds: MotionThresholds = MOTION) {}

  /** Bytes of RFB received at `now` (ms). */
  add(bytes: number, now: number): void {
    this.#roll(now);
    this.#windowBytes += bytes;
  }

  /** Whether the display has been moving for the whole of the last `windows` windows. */
  moving(now: number): boolean {
    this.#roll(now);
    return this.#movingWindows >= this.thresholds.windows;
  }

  reset(): void {
    this.#windowStart = -Infinity;
    this.#windowBytes = 0;
    this.#movingWindows = 0;
  }

  #roll(now: number): void {
    const { windowMs, rfbBytesPerWindow } = this.thresholds;
    if (now - this.#windowStart < windowMs) return;
    // Windows that passed: the one that closes counts if it brought enough; any empty one after it breaks the run.
    const passed = Math.floor((now - this.#windowStart) / windowMs);
    if (Number.isFinite(this.#windowStart)) {
      this.#movingWindows = this.#windowBytes >= rfbBytesPerWindow ? this.#movingWindows + 1 : 0;
      if (passed > 1) this.#movingWindows = 0;
      this.#windowStart += passed * windowMs;
    } else {
      this.#windowStart = now;
    }
    this.#windowBytes = 0;
  }
}

/** Reads the video's frames: `still()` once the last `stillMs` brought fewer than `stillBytes` (key frames aside). */
export class VideoStillness {
  readonly #units: { at: number; bytes: number }[] = [];
  #since = Infinity;

  constructor(private readonly thresholds: MotionThresholds = MOTION) {}

  /** Video started at `now`: stillness is judged only after a whole `stillMs` of it. */
  begin(now: number): void {
    this.#units.length = 0;
    this.#since = now;
  }

  add(bytes: number, key: boolean, now: number): void {
    if (!key) this.#units.push({ at: now, bytes });
    this.#trim(now);
  }

  still(now: number): boolean {
    if (now - this.#since < this.thresholds.stillMs) return false;
    this.#trim(now);
    return this.#units.reduce((sum, unit) => sum + unit.bytes, 0) < this.thresholds.stillBytes;
  }

  #trim(now: number): void {
    while (this.#units.length > 0 && now - this.#units[0]!.at > this.thresholds.stillMs) this.#units.shift();
  }
}
