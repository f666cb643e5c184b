// When the viewer switches between the RFB picture and video (issue 25), as pure decisions on
// timestamps and byte counts (testable alone; video-mode.ts carries them out). Motion is judged
// by what it costs: video starts once each RFB update has been large for a second (a moving
// picture, scrolling held down), and stops once the video's frames have been nearly empty for a
// second (a still screen encodes to a few dozen bytes a frame; a blinking caret or a spinner to a
// few hundred), when RFB, asked once, sends what changed, sharp.

export interface MotionThresholds {
  /** An RFB update (what Xvnc sends for one request) at least this large counts as motion: a photo-like area changed. */
  rfbUpdateBytes: number;
  /** Large updates one after another for this long (ms) start the video. */
  movingMs: number;
  /** A pause longer than this between large updates breaks the run. */
  gapMs: number;
  /** Video stops when its frames (key frames aside) brought fewer bytes than this over `stillMs`. */
  stillBytes: number;
  stillMs: number;
}

/**
 * Video after a second of updates of 16 kB or more each (one 1280x720 frame of a video is 50 to
 * 150 kB as Tight JPEG; a typed letter or a spinner well under 5 kB); back to RFB below about
 * 16 kB/s of video for a second. Update sizes rather than a byte rate: on a slow link RFB brings
 * few bytes a second, but each update is still large.
 */
export const MOTION: MotionThresholds = { rfbUpdateBytes: 16_000, movingMs: 1000, gapMs: 1500, stillBytes: 16_000, stillMs: 1000 };

/**
 * Reads the RFB updates (noVNC asks for each: one update per request): `moving()` once large ones
 * have followed each other for `movingMs`. Small updates among them do not break the run unless
 * they outnumber the large ones: a video that does not fill the window comes as a large update
 * and, for about two frames in three, a small one after it (measured on loopback: 35-46 kB, then
 * 0-4 kB), while typing after a large change is small updates only.
 */
export class RfbMotion {
  #runStart = -1;
  #lastLarge = -Infinity;
  #large = 0;
  #small = 0;

  constructor(private readonly thresholds: MotionThresholds = MOTION) {}

  /** One whole update of `bytes` was read at `now` (ms). */
  update(bytes: number, now: number): void {
    const { rfbUpdateBytes, gapMs } = this.thresholds;
    if (bytes < rfbUpdateBytes) {
      if (this.#runStart >= 0 && ++this.#small > this.#large) this.reset();
      return;
    }
    if (this.#runStart < 0 || now - this.#lastLarge > gapMs) {
      this.#runStart = now;
      this.#large = this.#small = 0;
    }
    this.#large++;
    this.#lastLarge = now;
  }

  /** Whether large updates have followed each other for the whole of the last `movingMs`. */
  moving(now: number): boolean {
    return this.#runStart >= 0 && now - this.#lastLarge <= this.thresholds.gapMs && this.#lastLarge - this.#runStart >= this.thresholds.movingMs;
  }

  reset(): void {
    this.#runStart = -1;
    this.#lastLarge = -Infinity;
    this.#large = this.#small = 0;
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
    this.#trim(now);
    // A key frame after a second with no frames: the engine dropped the frames between (a slow
    // link, decisions.md 67) or the encoder restarted; a hole is not stillness, so judge afresh.
    if (key && this.#units.length === 0 && now - this.#since >= this.thresholds.stillMs) this.#since = now;
    if (!key) this.#units.push({ at: now, bytes });
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
