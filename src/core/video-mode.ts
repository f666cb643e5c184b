// The viewer's video mode (issue 25, decisions.md 65): noVNC's WebSocket to the display, watched
// and filtered here, and the video channel while the display moves. noVNC asks for each update
// (the ContinuousUpdates pseudo-encoding is taken out of its SetEncodings, so Xvnc sends an update
// only when asked). While the RFB updates stay large (video-motion.ts) the viewer watches the video
// channel, draws its frames on a canvas laid over noVNC's, and holds noVNC's next update request:
// Xvnc sends nothing, and goes on noting what changed. When the video's frames have been nearly
// empty for a second, the video closes (the engine stops encoding when no one else watches), the
// held request goes to Xvnc, which answers with everything that changed since its last update, and
// the overlay goes once noVNC has drawn that: the text is as sharp as before. Keys and the pointer
// go through RFB throughout. While the video shows, a request for the display's first pixel stands
// in for the held one (decisions.md 69): Xvnc sends the remote cursor's shape only inside an
// update, so this keeps it current at the cost of that one pixel, and everything else stays
// pending. The video is decoded and drawn off the page's thread where the browser can (video-player.ts,
// decisions.md 90); the overlay carries the frames counted so far (`data-frames-received`,
// `-skipped`, `-decoded`, `-drawn`) and when the latest was drawn (`data-frame-drawn-at`, ms since
// the epoch) for figures and tests. Loaded lazily (only where the engine
// offers video and the browser decodes it), so it imports no code of the viewer's entry.
import { RfbMotion, VideoStillness } from './video-motion.js';
import { canPlayVideo, VideoPlayer, type VideoFrameCounts } from './video-player.js';

export interface VideoModeOptions {
  /** The RFB channel's WebSocket address (noVNC's). */
  rfbUrl: string;
  /** The video channel's WebSocket address. */
  videoUrl: string;
  /** The element noVNC draws in; the overlay is laid in it over noVNC's canvas. */
  target: HTMLElement;
  /** Whether noVNC still has frames to draw (its display's queue), when it can tell. */
  drawing?: () => boolean;
  /** Video started or stopped (for tests and figures: the root's `data-video`). */
  onChange?(video: boolean): void;
}

export type VideoModeState = 'rfb' | 'starting' | 'video' | 'leaving';

const SET_ENCODINGS = 2;
const FRAMEBUFFER_UPDATE_REQUEST = 3;
const SET_DESKTOP_SIZE = 251;
const CONTINUOUS_UPDATES = -313;
/**
 * An incremental FramebufferUpdateRequest for the display's top-left pixel. Xvnc (TigerVNC's
 * VNCSConnectionST) answers a request with the changes inside its region only, leaving the rest
 * pending, and sends a new cursor shape with the next update it may send: so while this one is
 * outstanding, cursor changes come at once and at most this pixel's changes with them.
 */
const CURSOR_REQUEST = Uint8Array.of(FRAMEBUFFER_UPDATE_REQUEST, 1, 0, 0, 0, 0, 0, 1, 0, 1);
/** The overlay goes at the latest this long after the held request went (Xvnc answers only when something changed). */
const LEAVE_TIMEOUT_MS = 1000;

export { canPlayVideo };

/** SetEncodings without the ContinuousUpdates pseudo-encoding, or null if `bytes` is not one whole SetEncodings. */
export function withoutContinuousUpdates(bytes: Uint8Array): Uint8Array<ArrayBuffer> | null {
  if (bytes.length < 4 || bytes[0] !== SET_ENCODINGS) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint16(2);
  if (bytes.length !== 4 + 4 * count) return null;
  const kept: number[] = [];
  for (let i = 0; i < count; i++) if (view.getInt32(4 + 4 * i) !== CONTINUOUS_UPDATES) kept.push(view.getInt32(4 + 4 * i));
  const out = new Uint8Array(4 + 4 * kept.length);
  const outView = new DataView(out.buffer);
  out[0] = SET_ENCODINGS;
  outView.setUint16(2, kept.length);
  kept.forEach((encoding, i) => outView.setInt32(4 + 4 * i, encoding));
  return out;
}

export class VideoMode {
  /** The WebSocket to give noVNC (`new RFB(target, mode.socket)`). */
  readonly socket: WebSocket;
  #state: VideoModeState = 'rfb';
  readonly #options: VideoModeOptions;
  readonly #motion = new RfbMotion();
  readonly #stillness = new VideoStillness();
  #player: VideoPlayer | null = null;
  #overlay: HTMLCanvasElement | null = null;
  /** The overlay was given to a player's worker: its size is the worker's now, and the next player needs a new one. */
  #overlayGiven = false;
  /** The overlay's size in pixels. */
  #overlaySize = { width: 0, height: 0 };
  /** The frames of the players before the current one, and the current one's so far. */
  readonly #countsBefore: VideoFrameCounts = { received: 0, skipped: 0, decoded: 0, drawn: 0 };
  #counts: VideoFrameCounts = { received: 0, skipped: 0, decoded: 0, drawn: 0 };
  /** noVNC's update request held while the video shows. */
  #held: Uint8Array<ArrayBuffer> | null = null;
  #leaveTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  /** RFB bytes read since noVNC's last update request: one update's, when noVNC asks again. */
  #updateBytes = 0;

  constructor(options: VideoModeOptions) {
    this.#options = options;
    const socket = new WebSocket(options.rfbUrl);
    this.socket = socket;
    const send = socket.send.bind(socket);
    // noVNC sends each message with one send() of a view on its own buffer (copied before holding).
    socket.send = (data: Parameters<WebSocket['send']>[0]) => {
      const bytes: Uint8Array | null = data instanceof Uint8Array ? data : data instanceof ArrayBuffer ? new Uint8Array(data) : null;
      if (bytes) {
        const encodings = withoutContinuousUpdates(bytes);
        if (encodings) return send(encodings);
        if (bytes.length === 10 && bytes[0] === FRAMEBUFFER_UPDATE_REQUEST) {
          // noVNC asks again once it has read an update: what came since its last request is that update.
          if (this.#state === 'rfb' && !this.#closed) {
            const now = performance.now();
            this.#motion.update(this.#updateBytes, now);
            this.#updateBytes = 0;
            if (this.#motion.moving(now)) this.#start();
          }
          if (this.#state === 'video') {
            // Held for when the video stops; the cursor's request goes in its place.
            this.#held = Uint8Array.from(bytes);
            return send(CURSOR_REQUEST);
          }
          // noVNC asks again once it has read Xvnc's answer: that answer is being drawn now.
          if (this.#state === 'leaving') this.#finishLeaving();
        }
        // A new display size while the video shows: the encoder grabs the old one; RFB shows the new.
        if (bytes[0] === SET_DESKTOP_SIZE && this.#state !== 'rfb') this.#leave();
      }
      send(data);
    };
    socket.addEventListener('message', (event: MessageEvent<ArrayBuffer | string>) => {
      this.#updateBytes += typeof event.data === 'string' ? event.data.length : event.data.byteLength;
    });
    socket.addEventListener('close', () => this.close());
  }

  get state(): VideoModeState {
    return this.#state;
  }

  /** The RFB connection ended or the viewer went: the video goes with it. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#player?.close();
    this.#player = null;
    clearTimeout(this.#leaveTimer);
    this.#overlay?.remove();
    this.#overlay = null;
  }

  #start(): void {
    const screen = this.#screenCanvas();
    if (!screen) return;
    this.#state = 'starting';
    this.#motion.reset();
    // A canvas given to a worker is the worker's for good: the next player draws on a new one.
    if (this.#overlayGiven) this.#overlay?.remove();
    const overlay = this.#overlay && !this.#overlayGiven ? this.#overlay : document.createElement('canvas');
    this.#overlay = overlay;
    this.#overlayGiven = false;
    this.#addCounts();
    overlay.className = 'rbk-viewer__video';
    overlay.setAttribute('aria-hidden', 'true');
    Object.assign(overlay.style, { position: 'absolute', pointerEvents: 'none', display: 'none', margin: '0' });
    this.#overlaySize = { width: screen.width, height: screen.height };
    Object.assign(overlay, this.#overlaySize);
    if (overlay.parentElement !== this.#options.target) this.#options.target.append(overlay);
    const player = new VideoPlayer({
      url: this.#options.videoUrl,
      canvas: overlay,
      // Judged at each unit's arrival, not when this page got to it: a page busy for a while
      // reads a second of units at once, and that is not a still display.
      onUnit: (bytes, key, at) => {
        this.#stillness.add(bytes, key, at);
        if (this.#state === 'video' && this.#stillness.still(at)) this.#leave();
      },
      onFrame: (width, height, counts, at) => {
        if (this.#player !== player) return;
        this.#showCounts(overlay, counts);
        overlay.dataset.frameDrawnAt = at.toFixed(1);
        const canvas = this.#screenCanvas();
        // The display changed size under the video: RFB shows it.
        if (!canvas || width < canvas.width || height < canvas.height || width > canvas.width + 1 || height > canvas.height + 1) return this.#leave();
        this.#place(canvas, overlay);
        if (this.#state === 'starting') {
          overlay.style.display = 'block';
          this.#state = 'video';
          this.#stillness.begin(performance.now());
          this.#options.onChange?.(true);
        }
      },
      onEnd: () => {
        if (this.#player === player) this.#leave();
      },
    });
    this.#player = player;
    player.start();
    this.#overlayGiven = player.inWorker;
  }

  /** The current player's counts join the earlier players' (a new player starts from zero). */
  #addCounts(): void {
    for (const key of Object.keys(this.#counts) as (keyof VideoFrameCounts)[]) this.#countsBefore[key] += this.#counts[key];
    this.#counts = { received: 0, skipped: 0, decoded: 0, drawn: 0 };
  }

  /** Every frame counted since this viewer connected, on the overlay (`data-frames-drawn`, ...). */
  #showCounts(overlay: HTMLCanvasElement, counts: VideoFrameCounts): void {
    this.#counts = { ...counts };
    for (const key of Object.keys(counts) as (keyof VideoFrameCounts)[]) overlay.dataset[`frames${key[0]!.toUpperCase()}${key.slice(1)}`] = String(this.#countsBefore[key] + counts[key]);
  }

  /** Back to RFB: the held request goes, the overlay stays until noVNC drew the answer. */
  #leave(): void {
    if (this.#state === 'rfb' || this.#state === 'leaving') return;
    const wasShowing = this.#state === 'video';
    const player = this.#player;
    this.#player = null;
    player?.close();
    this.#motion.reset();
    if (!wasShowing) {
      this.#state = 'rfb';
      if (this.#overlay) this.#overlay.style.display = 'none';
      return;
    }
    this.#state = 'leaving';
    const held = this.#held;
    this.#held = null;
    if (held && this.socket.readyState === WebSocket.OPEN) WebSocket.prototype.send.call(this.socket, held);
    // No held request means noVNC's last one is still with Xvnc, which answers it when something changes.
    this.#leaveTimer = setTimeout(() => this.#finishLeaving(), LEAVE_TIMEOUT_MS);
  }

  /** Xvnc's answer is in noVNC: once drawn, the overlay goes. */
  #finishLeaving(): void {
    if (this.#state !== 'leaving') return;
    this.#state = 'rfb';
    clearTimeout(this.#leaveTimer);
    const hide = () => {
      if (this.#options.drawing?.()) return void requestAnimationFrame(hide);
      // One more frame: noVNC draws its queue's last step (the flip) in an animation frame too.
      requestAnimationFrame(() => {
        if (this.#state === 'rfb' && this.#overlay) this.#overlay.style.display = 'none';
        this.#options.onChange?.(false);
      });
    };
    requestAnimationFrame(hide);
  }

  #screenCanvas(): HTMLCanvasElement | null {
    return [...this.#options.target.querySelectorAll('canvas')].find((canvas) => canvas !== this.#overlay) ?? null;
  }

  /** Lays the overlay exactly over noVNC's canvas (it may be scaled and centred). */
  #place(canvas: HTMLCanvasElement, overlay: HTMLCanvasElement): void {
    const box = canvas.getBoundingClientRect();
    const area = this.#options.target.getBoundingClientRect();
    if (this.#overlaySize.width !== canvas.width || this.#overlaySize.height !== canvas.height) {
      this.#overlaySize = { width: canvas.width, height: canvas.height };
      // A canvas given to a worker is sized there (its element's attributes cannot change).
      if (this.#overlayGiven) this.#player?.resize(canvas.width, canvas.height);
      else Object.assign(overlay, this.#overlaySize);
    }
    Object.assign(overlay.style, { left: `${box.left - area.left}px`, top: `${box.top - area.top}px`, width: `${box.width}px`, height: `${box.height}px` });
  }
}
