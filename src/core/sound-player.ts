// Plays the remote browser's sound: the share API's sound channel (a format message, then one Opus
// packet per binary WebSocket message) decoded with WebCodecs' AudioDecoder and played through an
// AudioContext, on the jitter buffer of sound-schedule.ts, with mute and volume on a GainNode. It
// reconnects with the picture's reconnect policy (reconnect.ts), which its caller hands it. No
// React, and nothing touches the DOM until start().
//
// The viewer loads this file with import() only for a session that has sound, so it imports no
// code the viewer's entry has (only types): a shared module would make the bundler split a third
// file off the entry. Hence the policy passed in, and subscribe/getState kept here rather than
// inherited from subscribable.ts.
import type { ReconnectPolicy, ReconnectTransport } from './reconnect.js';
import { parseSoundFormat, type SoundFormat } from '../protocol/sound.js';
import { SoundSchedule } from './sound-schedule.js';

/**
 * `yes`: this browser can play the session's sound. `no-webcodecs`: it has no AudioDecoder for
 * Opus (WebCodecs exists only on https, or http on localhost or 127.0.0.1). `no-sound`: the
 * session has none (what a viewer shows before it knows, too: nothing).
 */
export type SoundAvailability = 'yes' | 'no-webcodecs' | 'no-sound';

export interface SoundState {
  available: SoundAvailability;
  /** The browser holds the sound back until a gesture (its autoplay policy): "Tap to hear". */
  blocked: boolean;
  muted: boolean;
  /** 0 to 1, as the listener set it (the gain follows it squared, closer to how loudness is heard). */
  volume: number;
  /** Connected, and the AudioContext runs: sound is heard as the remote browser makes it (never while muted: muted, it does not listen). */
  playing: boolean;
}

export interface SoundPlayerOptions {
  /** The sound channel's WebSocket address: `shareApiUrl(shareBase, linkId, 'sound')`. */
  url: string;
  /** Retries the connection with the picture's back-off: a `new ReconnectPolicy()` of its own. */
  reconnect: ReconnectPolicy;
  muted?: boolean;
  volume?: number;
}

/** An Opus decoder gets behind when its queue holds this many packets (a busy or hidden tab): the rest are dropped. */
const MAX_DECODE_QUEUE = 8;
/** How long a freshly made AudioContext may take to start before the viewer says it is blocked. */
const AUTOPLAY_GRACE_MS = 300;
/** Mute and volume glide over about this long, so they do not click. */
const GAIN_TIME_CONSTANT = 0.01;

/** Whether this browser has the parts at all (a secure context with WebCodecs and Web Audio). */
function hasWebCodecsAudio(): boolean {
  return typeof AudioDecoder !== 'undefined' && typeof EncodedAudioChunk !== 'undefined' && typeof AudioContext !== 'undefined';
}

const clampVolume = (volume: number) => (Number.isFinite(volume) ? Math.min(1, Math.max(0, volume)) : 1);

export class SoundPlayer {
  readonly #url: string;
  readonly #policy: ReconnectPolicy;
  #state: SoundState;
  readonly #listeners = new Set<() => void>();
  #context: AudioContext | null = null;
  #gain: GainNode | null = null;
  #started = false;
  #stopped = false;
  #connected = false;
  /** Whether the AudioContext had its chance to start on its own: before, a suspended one is not called blocked. */
  #graceOver = false;

  constructor(options: SoundPlayerOptions) {
    this.#state = { available: hasWebCodecsAudio() ? 'yes' : 'no-webcodecs', blocked: false, muted: options.muted ?? false, volume: clampVolume(options.volume ?? 1), playing: false };
    this.#url = options.url;
    this.#policy = options.reconnect;
  }

  /** The state now; a new object on each change (the subscribe/getState shape of subscribable.ts). */
  getState = (): SoundState => this.#state;

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  private update(change: Partial<SoundState>): void {
    const next = { ...this.#state, ...change };
    if ((Object.keys(next) as (keyof SoundState)[]).every((key) => next[key] === this.#state[key])) return;
    this.#state = next;
    for (const listener of this.#listeners) listener();
  }

  /** Checks that this browser decodes Opus, then connects and keeps connected until stop(). */
  async start(): Promise<void> {
    if (this.#started || this.getState().available !== 'yes') return;
    this.#started = true;
    const supported = await AudioDecoder.isConfigSupported({ codec: 'opus', sampleRate: 48_000, numberOfChannels: 2 }).then(
      (answer) => answer.supported === true,
      () => false,
    );
    if (this.#stopped) return;
    if (!supported) return this.update({ available: 'no-webcodecs' });

    // Made at the stream's rate, so decoded frames play without resampling; 'interactive' asks
    // the sound card for its smallest buffer.
    const context = new AudioContext({ latencyHint: 'interactive', sampleRate: 48_000 });
    const gain = context.createGain();
    gain.gain.value = this.#gainValue();
    gain.connect(context.destination);
    this.#context = context;
    this.#gain = gain;
    context.addEventListener('statechange', () => this.#showContextState());
    // Starts at once where the page may play sound; elsewhere it waits for resume() from a gesture.
    void context.resume().catch(() => undefined);
    setTimeout(() => {
      this.#graceOver = true;
      this.#showContextState();
    }, AUTOPLAY_GRACE_MS);

    this.#listen();
  }

  /**
   * Connects while the listener wants to hear, and closes the connection while muted: a muted
   * viewer costs no bandwidth, and the engine encodes nothing for it (the last listener gone, its
   * encoder stops). Unmuted, it connects again, and hears the remote page a moment later.
   */
  #listen(): void {
    const context = this.#context;
    const gain = this.#gain;
    if (!context || !gain || this.#stopped) return;
    if (this.getState().muted) this.#policy.close();
    else this.#policy.open(this.#transport(context, gain));
  }

  /** Closes the connection and the AudioContext for good. */
  stop(): void {
    this.#stopped = true;
    this.#policy.close();
    void this.#context?.close().catch(() => undefined);
    this.#context = null;
    this.#gain = null;
    this.update({ playing: false });
  }

  /** Lets the sound play: call it from a click, tap or key press (the browser's autoplay policy asks for one). */
  resume(): void {
    if (this.#context?.state === 'suspended') void this.#context.resume().then(() => this.#showContextState(), () => undefined);
  }

  setMuted(muted: boolean): void {
    if (muted === this.getState().muted) return;
    this.update({ muted });
    this.#applyGain();
    this.#listen();
  }

  setVolume(volume: number): void {
    this.update({ volume: clampVolume(volume) });
    this.#applyGain();
  }

  #gainValue(): number {
    const { muted, volume } = this.getState();
    return muted ? 0 : volume * volume;
  }

  #applyGain(): void {
    if (this.#gain && this.#context) this.#gain.gain.setTargetAtTime(this.#gainValue(), this.#context.currentTime, GAIN_TIME_CONSTANT);
  }

  #showContextState(): void {
    const context = this.#context;
    if (!context || this.#stopped) return;
    const running = context.state === 'running';
    this.update({ blocked: this.#graceOver && context.state === 'suspended', playing: running && this.#connected });
  }

  /** One WebSocket and one decoder per connection; the reconnect policy retries it. */
  #transport(context: AudioContext, gain: GainNode): ReconnectTransport {
    let closeCurrent: () => void = () => undefined;
    const connect = () => {
      closeCurrent();
      const socket = new WebSocket(this.#url);
      socket.binaryType = 'arraybuffer';
      let decoder: AudioDecoder | null = null;
      let format: SoundFormat | null = null;
      let packets = 0;
      let closed = false;
      const schedule = new SoundSchedule({ sampleRate: 48_000 });
      const end = () => {
        closed = true;
        if (decoder && decoder.state !== 'closed') decoder.close();
        decoder = null;
        this.#connected = false;
        this.#showContextState();
      };
      closeCurrent = () => {
        if (closed) return;
        end();
        socket.close();
      };
      /** The connection failed or the stream cannot be played: close it, and the policy tries again. */
      const drop = () => {
        if (closed) return;
        end();
        socket.close();
        this.#policy.dropped();
      };

      socket.onmessage = (event: MessageEvent<string | ArrayBuffer>) => {
        if (closed) return;
        // The format comes first: as text from the node that runs the session, as bytes when
        // another node of a cluster carried the stream (its relay forwards every message as bytes).
        const header = typeof event.data === 'string' ? event.data : !format ? new TextDecoder().decode(event.data) : undefined;
        if (header !== undefined) {
          format = parseSoundFormat(header);
          if (!format) return drop();
          decoder = new AudioDecoder({ output: (frame) => this.#playFrame(frame, context, gain, schedule), error: drop });
          decoder.configure({ codec: 'opus', sampleRate: format.sampleRate, numberOfChannels: format.channels });
          this.#connected = true;
          this.#policy.connected();
          this.#showContextState();
          return;
        }
        if (typeof event.data === 'string' || !format || !decoder || decoder.state !== 'configured') return;
        // Not heard now (held back, or the decoder behind): decoding it would only delay what comes next.
        if (context.state !== 'running' || decoder.decodeQueueSize > MAX_DECODE_QUEUE) {
          schedule.reset();
          packets += 1;
          return;
        }
        decoder.decode(new EncodedAudioChunk({ type: 'key', timestamp: packets++ * format.frameMs * 1000, data: event.data }));
      };
      socket.onclose = () => {
        if (closed) return;
        end();
        this.#policy.dropped();
      };
    };
    return { connect, disconnect: () => closeCurrent() };
  }

  /** Puts one decoded frame on the schedule, or lets it go (see sound-schedule.ts). */
  #playFrame(frame: AudioData, context: AudioContext, gain: GainNode, schedule: SoundSchedule): void {
    try {
      const placed = schedule.place(context.currentTime, frame.numberOfFrames);
      if (!placed.play) return;
      const buffer = context.createBuffer(frame.numberOfChannels, frame.numberOfFrames, frame.sampleRate);
      for (let channel = 0; channel < frame.numberOfChannels; channel++) {
        frame.copyTo(buffer.getChannelData(channel), { planeIndex: channel, format: 'f32-planar' });
      }
      const source = context.createBufferSource();
      source.buffer = buffer;
      source.connect(gain);
      source.start(placed.at);
    } finally {
      frame.close();
    }
  }
}
