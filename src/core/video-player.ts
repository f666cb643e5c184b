// Plays the display's video (issue 25) on the viewer's overlay canvas: in a dedicated worker of its
// own where the browser can (video-worker.ts: the channel's socket, the decoder and the canvas,
// transferred as an OffscreenCanvas, all off the page's thread; issue 37, decisions.md 90), else in
// the page (video-playback.ts, the same code). Either way every decoded frame is drawn as it comes
// out. No React; nothing touches the DOM but the canvas it is given. Loaded with the viewer's video
// mode (video-mode.ts), lazily.
import { VideoPlayback, decoderConfig, type VideoFrameCounts } from './video-playback.js';
import type { VideoWorkerEvent, VideoWorkerRequest } from './video-worker.js';

export { decoderConfig, type VideoFrameCounts };

export interface VideoPlayerOptions {
  /** The video channel's WebSocket address. */
  url: string;
  /** Where frames are drawn; given to the worker for good (a canvas is transferred once). */
  canvas: HTMLCanvasElement;
  /** Each access unit (its bytes, whether it is a key frame, and when it arrived: the page's performance.now()): what the motion policy reads. */
  onUnit?(bytes: number, key: boolean, at: number): void;
  /** A frame was drawn (its size in pixels, this player's counts so far, and when it was drawn: ms since the epoch, performance.timeOrigin + now). */
  onFrame?(width: number, height: number, counts: VideoFrameCounts, at: number): void;
  /** The video ended (the channel closed, or the decoder failed): why. Called once. */
  onEnd?(reason: string): void;
}

/** Whether this browser decodes the video (WebCodecs exists only in a secure context). */
export async function canPlayVideo(): Promise<boolean> {
  if (typeof VideoDecoder === 'undefined' || typeof EncodedVideoChunk === 'undefined') return false;
  try {
    return (await VideoDecoder.isConfigSupported({ codec: 'avc1.42C01F', optimizeForLatency: true })).supported === true;
  } catch {
    return false;
  }
}

/** A worker that failed to load (a bundler or a policy that does not serve it) is not tried again. */
let workerFailed = false;

/** The worker's thread where the browser has one for this (Worker, OffscreenCanvas, WebCodecs in workers). */
function startWorker(): Worker | null {
  if (workerFailed || typeof Worker === 'undefined' || typeof OffscreenCanvas === 'undefined' || typeof HTMLCanvasElement.prototype.transferControlToOffscreen !== 'function') return null;
  try {
    return new Worker(new URL('./video-worker.js', import.meta.url), { type: 'module', name: 'rbk-video' });
  } catch {
    workerFailed = true;
    return null;
  }
}

export class VideoPlayer {
  readonly #options: VideoPlayerOptions;
  #worker: Worker | null = null;
  #playback: VideoPlayback | null = null;
  #ended = false;

  constructor(options: VideoPlayerOptions) {
    this.#options = options;
  }

  /** Whether the frames are decoded and drawn off the page's thread. */
  get inWorker(): boolean {
    return this.#worker !== null;
  }

  start(): void {
    const { canvas, onUnit, onFrame } = this.#options;
    const worker = startWorker();
    if (!worker) {
      this.#playback = new VideoPlayback({
        url: this.#options.url,
        canvas,
        onUnit: (bytes, key) => onUnit?.(bytes, key, performance.now()),
        onFrame: (width, height, counts) => onFrame?.(width, height, counts, performance.timeOrigin + performance.now()),
        onEnd: (reason) => this.#end(reason),
      });
      return this.#playback.start();
    }
    this.#worker = worker;
    worker.onmessage = ({ data }: MessageEvent<VideoWorkerEvent>) => {
      if (this.#ended) return;
      if (data.type === 'unit') onUnit?.(data.bytes, data.key, data.at - performance.timeOrigin);
      else if (data.type === 'frame') onFrame?.(data.width, data.height, data.counts, data.at);
      else this.#end(data.reason);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      // Nothing came of it: the next player draws in the page.
      workerFailed = true;
      this.#end('the video worker failed');
    };
    const offscreen = canvas.transferControlToOffscreen();
    this.#post({ type: 'start', url: new URL(this.#options.url, location.href).href, canvas: offscreen }, [offscreen]);
  }

  /** The canvas's size in pixels (the display's). */
  resize(width: number, height: number): void {
    if (this.#playback) this.#playback.resize(width, height);
    else this.#post({ type: 'resize', width, height });
  }

  /** Stops watching: the socket closes (the engine stops encoding when no one else watches). */
  close(): void {
    this.#end('closed by the viewer');
  }

  #post(request: VideoWorkerRequest, transfer: Transferable[] = []): void {
    this.#worker?.postMessage(request, transfer);
  }

  #end(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#playback?.close();
    if (this.#worker) {
      // The worker closes the socket and itself; terminated after a moment if it cannot answer.
      this.#post({ type: 'close' });
      const worker = this.#worker;
      setTimeout(() => worker.terminate(), 1000);
    }
    this.#options.onEnd?.(reason);
  }
}
