// The video channel read, decoded and drawn (issue 25; issue 37 moved it off the page's thread):
// a format message, then one H.264 access unit per binary WebSocket message (src/protocol/video.ts),
// decoded with WebCodecs' VideoDecoder and each decoded frame drawn as it comes out, none dropped,
// onto a canvas of its own (a page's canvas, or an OffscreenCanvas inside video-worker.ts, where
// nothing may wait on the page: #drawOffscreen). A
// decoder that gets behind (a unit handed to it over MAX_DECODE_LATE_MS ago and not out yet) skips
// access units up to the next key frame rather than queue them (decisions.md 90).
// Each unit read is receipted (the bytes read in all), so the engine knows how much of the picture
// is still on its way. Runs in a window or in a dedicated worker: it touches nothing but its socket,
// its decoder and its canvas.
import { i420ToRgba, type PlaneLayout } from './video-pixels.js';
import { parseVideoFormat, videoReceipt, VIDEO_KEY_FRAME, type VideoFormat } from '../protocol/video.js';

/** What a playback has done so far: what a viewer's figures and tests read (decisions.md 90). */
export interface VideoFrameCounts {
  /** Access units that arrived. */
  received: number;
  /** Access units not decoded: the decoder was behind, or a key frame was awaited. */
  skipped: number;
  /** Frames out of the decoder. */
  decoded: number;
  /** Frames drawn on the canvas. */
  drawn: number;
}

export interface VideoPlaybackOptions {
  /** The video channel's WebSocket address. */
  url: string;
  /** Where frames are drawn (at their own pixel size: the display's, rounded up to even numbers). */
  canvas: HTMLCanvasElement | OffscreenCanvas;
  /** Each access unit as it arrives (its bytes, and whether it is a key frame): what the motion policy reads. */
  onUnit?(bytes: number, key: boolean): void;
  /** A frame was drawn (its size in pixels, and the counts with it). */
  onFrame?(width: number, height: number, counts: VideoFrameCounts): void;
  /** The video ended (the channel closed, or the decoder failed): why. Called once. */
  onEnd?(reason: string, counts: VideoFrameCounts): void;
}

/**
 * A unit handed to the decoder this long ago and not out yet means the decoder is behind: the
 * rest wait for a key frame. The engine's own bound on a watcher's lateness (MAX_LATE_MS); a count
 * of queued units (3 until decisions.md 90) took a thread's short pause for a decoder behind, and
 * a skip costs up to a key-frame interval (2 s) of picture.
 */
const MAX_DECODE_LATE_MS = 150;
/** More units than this waiting in the decoder is behind whatever the time says. */
const MAX_DECODE_QUEUE = 30;

/** The decoder settings a format asks for. */
export function decoderConfig(format: VideoFormat): VideoDecoderConfig {
  const description = Uint8Array.from(atob(format.description), (c) => c.charCodeAt(0));
  return { codec: format.codec, description, optimizeForLatency: true };
}

export class VideoPlayback {
  readonly #options: VideoPlaybackOptions;
  #socket: WebSocket | null = null;
  #decoder: VideoDecoder | null = null;
  #waitForKey = true;
  #ended = false;
  #context: CanvasRenderingContext2D | null = null;
  /** In a worker: the canvas shows whole bitmaps (#drawOffscreen), the latest shown when this settles. */
  #bitmaps: ImageBitmapRenderingContext | null = null;
  /** In a worker, for frames in I420: the canvas's 2D context and the pixels made last. */
  #pixels: OffscreenCanvasRenderingContext2D | null = null;
  #image: ImageData | null = null;
  #showing: Promise<unknown> = Promise.resolve();
  /** Frame bytes read so far (binary messages' lengths): what each receipt says. */
  #receivedBytes = 0;
  /** When each unit not out of the decoder yet went in (its chunk's timestamp, µs of performance.now()). */
  readonly #inDecoder: number[] = [];
  readonly counts: VideoFrameCounts = { received: 0, skipped: 0, decoded: 0, drawn: 0 };

  constructor(options: VideoPlaybackOptions) {
    this.#options = options;
  }

  start(): void {
    const socket = new WebSocket(this.#options.url);
    socket.binaryType = 'arraybuffer';
    this.#socket = socket;
    socket.onmessage = (event) => this.#receive(event.data as ArrayBuffer | string);
    socket.onclose = (event) => this.#end(event.reason || `the video connection closed (${event.code})`);
    socket.onerror = () => this.#end('the video connection failed');
  }

  /** The canvas's size in pixels (the display's): frames are drawn at its top left. */
  resize(width: number, height: number): void {
    const { canvas } = this.#options;
    if (canvas.width !== width || canvas.height !== height) Object.assign(canvas, { width, height });
  }

  /** Stops watching: the socket closes (the engine stops encoding when no one else watches). */
  close(): void {
    this.#end('closed by the viewer');
  }

  #receive(data: ArrayBuffer | string): void {
    if (this.#ended) return;
    // Through another node of a cluster a text message arrives as bytes: a frame's first byte is
    // 0 or 1, the format's is `{`.
    const bytes = typeof data === 'string' ? null : new Uint8Array(data);
    if (typeof data === 'string' || bytes![0] === 0x7b) {
      const format = parseVideoFormat(typeof data === 'string' ? data : new TextDecoder().decode(bytes!));
      if (!format) return this.#end('the video format was not understood');
      return this.#configure(format);
    }
    this.#receivedBytes += bytes!.length;
    if (this.#socket?.readyState === WebSocket.OPEN) this.#socket.send(videoReceipt(this.#receivedBytes));
    if (!this.#decoder || bytes!.length < 2) return;
    const key = (bytes![0]! & VIDEO_KEY_FRAME) !== 0;
    this.counts.received++;
    this.#options.onUnit?.(bytes!.length, key);
    const now = Math.round(performance.now() * 1000);
    if (this.#inDecoder.length > MAX_DECODE_QUEUE || (this.#inDecoder.length > 0 && now - this.#inDecoder[0]! > MAX_DECODE_LATE_MS * 1000)) this.#waitForKey = true;
    if (this.#waitForKey && !key) return void this.counts.skipped++;
    this.#waitForKey = false;
    try {
      // Timestamps only grow: a unit in the same microsecond as the last gets the next one.
      const timestamp = Math.max(now, (this.#inDecoder.at(-1) ?? 0) + 1);
      this.#inDecoder.push(timestamp);
      this.#decoder.decode(new EncodedVideoChunk({ type: key ? 'key' : 'delta', timestamp, data: bytes!.subarray(1) }));
    } catch (error) {
      this.#end(`the video could not be decoded: ${(error as Error).message}`);
    }
  }

  #configure(format: VideoFormat): void {
    if (!this.#decoder || this.#decoder.state === 'closed') this.#decoder = new VideoDecoder({
      output: (frame) => this.#draw(frame),
      error: (error) => this.#end(`the video could not be decoded: ${error.message}`),
    });
    try {
      this.#decoder.configure(decoderConfig(format));
    } catch (error) {
      return this.#end(`the video could not be decoded: ${(error as Error).message}`);
    }
    // A new configuration starts from a key frame: what the old one held will not come out.
    this.#inDecoder.length = 0;
    this.#waitForKey = true;
  }

  /** Each decoded frame is drawn as it comes out: none waits for an animation frame, none is left out. */
  #draw(frame: VideoFrame): void {
    // This frame and any unit before it that gave none are out of the decoder.
    while (this.#inDecoder.length > 0 && this.#inDecoder[0]! <= frame.timestamp) this.#inDecoder.shift();
    if (this.#ended) return frame.close();
    this.counts.decoded++;
    const { canvas } = this.#options;
    if (typeof OffscreenCanvas !== 'undefined' && canvas instanceof OffscreenCanvas) return this.#drawOffscreen(frame, canvas);
    try {
      this.#context ??= (canvas as HTMLCanvasElement).getContext('2d', { alpha: false });
      if (!this.#context) return this.#end('the video could not be drawn');
      this.#context.drawImage(frame, 0, 0);
      this.#drawn(frame.displayWidth, frame.displayHeight);
    } finally {
      frame.close();
    }
  }

  /**
   * In a worker. Chromium's own conversions of a VideoFrame (a 2D context's drawImage, copyTo in
   * RGBA, createImageBitmap) wait on the page's thread when it has no GPU: while the page is busy
   * nothing would be drawn, and the worker would not even read its socket. A frame in I420 (what a
   * software decoder gives) is copied as it is (no conversion: no wait) and made RGBA here
   * (video-pixels.ts); any other (a GPU's) is made an ImageBitmap, which needs no page where a GPU
   * is. Each frame is taken at once and shown in the frames' order.
   */
  #drawOffscreen(frame: VideoFrame, canvas: OffscreenCanvas): void {
    const { displayWidth: width, displayHeight: height } = frame;
    const planes = frame.format === 'I420' ? new Uint8Array(frame.allocationSize()) : null;
    const taken: Promise<ImageBitmap | PlaneLayout[]> = planes ? frame.copyTo(planes) : createImageBitmap(frame, 0, 0, Math.min(width, canvas.width), Math.min(height, canvas.height));
    const rect = frame.visibleRect ?? { width, height };
    void taken.finally(() => frame.close()).catch(() => undefined);
    this.#showing = Promise.all([this.#showing, taken]).then(
      ([, made]) => {
        if (this.#ended) return made instanceof ImageBitmap ? made.close() : undefined;
        if (made instanceof ImageBitmap) {
          this.#bitmaps ??= canvas.getContext('bitmaprenderer');
          if (!this.#bitmaps) return this.#end('the video could not be drawn');
          this.#bitmaps.transferFromImageBitmap(made);
        } else {
          this.#pixels ??= canvas.getContext('2d', { alpha: false });
          if (!this.#pixels) return this.#end('the video could not be drawn');
          if (this.#image?.width !== rect.width || this.#image.height !== rect.height) this.#image = new ImageData(rect.width, rect.height);
          i420ToRgba(planes!, made, rect.width, rect.height, this.#image.data);
          this.#pixels.putImageData(this.#image, 0, 0);
        }
        this.#drawn(width, height);
      },
      (error: unknown) => this.#end(`the video could not be drawn: ${(error as Error).message}`),
    );
  }

  #drawn(width: number, height: number): void {
    this.counts.drawn++;
    this.#options.onFrame?.(width, height, this.counts);
  }

  #end(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    const socket = this.#socket;
    if (socket) {
      socket.onmessage = socket.onclose = socket.onerror = null;
      if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING) socket.close(1000);
    }
    try {
      if (this.#decoder && this.#decoder.state !== 'closed') this.#decoder.close();
    } catch {
      /* already closed */
    }
    this.#options.onEnd?.(reason, this.counts);
  }
}
