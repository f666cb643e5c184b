// A session's recording (issue 35, decisions.md 96): the recorder is one more member of the
// audiences of the session's encoders (audience.ts), so the picture is the H.264 the video encoder
// makes anyway and the sound the Opus the sound encoder makes anyway, written as they come with
// their times into a Matroska file in the engine's own directory (never the session's). While a
// session is recorded its encoders run, whether or not anyone watches; a still screen costs next to
// no bytes, and little CPU since its unchanged frames are not encoded (decisions.md 108: frames then
// come a few a second, each stamped with its arrival like any other, and none while the screen stays
// still: decisions.md 118; docs/benchmarks.md, "Recordings"). Likewise the sound encoder rests while
// nothing plays (sound-pause.ts, decisions.md 119): the recorder fills each rest with Opus frames of
// silence, 10 ms apart as the encoder's own, so the sound track runs on without a hole and what
// plays after the rest is at the time it came.
import { createWriteStream, type WriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AUDIO_TRACK, matroskaCluster, matroskaHeader, parameterSetUnits, VIDEO_TRACK, type Block } from './matroska.js';
import { SOUND_FORMAT, type SessionSound, type SoundStream } from './sound.js';
import type { SessionVideo, VideoStream } from './video.js';
import { RECORDING_CLOSED, RECORDING_START } from './recording-layout.js';

/** A cluster is written at a key frame, once it spans this long, or once it holds this much. */
const CLUSTER_MS = 1000;
const CLUSTER_BYTES = 1024 * 1024;
/** Sound that comes before the first picture is kept this long at most, so the file starts with both. */
const EARLY_MS = 3000;
/**
 * A sound packet up to this late is stamped on its track's pace (PulseAudio keeps what the encoder
 * has not read yet: a busy machine delays the sound, never drops it); a later one is a real gap
 * (an encoder started again), filled with silence up to its arrival.
 */
const SOUND_KEEP_PACE_MS = 1000;
/** An encoder that stopped while the session runs (it failed) is joined again after this long. */
const REJOIN_MS = 1000;
/**
 * The packet the session's encoder makes of 10 ms of silence (libopus, CELT only, 48 kHz stereo:
 * its TOC byte 0xf4, then the range coder's silence flag): what fills a rest of the encoder.
 */
export const SILENT_PACKET: Readonly<Buffer> = Buffer.from([0xf4, 0xff, 0xfe]);
/** libopus's look-ahead at 48 kHz, which ffmpeg's encoder states as the stream's pre-skip. */
const OPUS_PRE_SKIP = 312;

export interface RecorderParts {
  video: SessionVideo | null;
  sound: SessionSound | null;
  /** The display's size, rounded up to even numbers as the encoder pads it. */
  width: number;
  height: number;
}

export class SessionRecorder {
  private readonly out: WriteStream;
  private readonly began = performance.now();
  private header: Buffer | null = null;
  private headerAvcC: Buffer | null = null;
  /** A later encoder's parameter sets, put before its first key frame (matroska.ts). */
  private parameterSets: Buffer | null = null;
  private early: Block[] = [];
  private cluster: Block[] = [];
  private clusterBytes = 0;
  private videoStream: VideoStream | null = null;
  private soundStream: SoundStream | null = null;
  private closed = false;
  /** The time (since `began`) of the first block written: the media's time 0. */
  private origin: number | null = null;
  /** Each track's last time: times only grow (a burst of packets arriving at once is spread out). */
  private readonly last = new Map<number, number>();
  private readonly flusher: NodeJS.Timeout;
  /** When the sound encoder's last packet came (performance.now()). */
  private lastSoundAt = -Infinity;
  /** Bytes written to the file so far. */
  written = 0;

  constructor(
    readonly path: string,
    private readonly parts: RecorderParts,
  ) {
    this.out = createWriteStream(path, { flags: 'wx', mode: 0o600 });
    this.out.on('error', () => undefined);
    if (!parts.video) this.writeHeader(null);
    this.watch();
    this.listen();
    this.flusher = setInterval(() => {
      this.fillSilence();
      this.flush();
    }, CLUSTER_MS);
  }

  /** Stops recording: the streams leave their encoders, the last cluster is written, the file closed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A still screen's grab may be paused (decisions.md 118): one more frame, so the picture runs to the end.
    if (this.videoStream && !this.videoStream.closed) await this.parts.video?.catchUp();
    clearInterval(this.flusher);
    this.fillSilence();
    this.videoStream?.close();
    this.soundStream?.close();
    this.flush();
    // The file is whole once its last cluster is on disk: a marker beside it says so.
    return new Promise((resolve) => this.out.end(() => writeFile(join(dirname(this.path), RECORDING_CLOSED), '', { mode: 0o600 }).then(resolve, resolve)));
  }

  private watch(): void {
    const { video } = this.parts;
    if (!video || this.closed) return;
    const stream = (this.videoStream = video.watch({ forRecording: true }));
    stream.on('format', (format) => {
      const avcC = Buffer.from(format.description, 'base64');
      if (!this.header) this.writeHeader(avcC);
      else if (!avcC.equals(this.headerAvcC!)) this.parameterSets = parameterSetUnits(avcC);
    });
    stream.on('frame', (message, key) => {
      if (!this.header) return;
      let data = message.subarray(1);
      if (key && this.parameterSets) {
        data = Buffer.concat([this.parameterSets, data]);
        this.parameterSets = null;
      }
      this.add({ track: VIDEO_TRACK, time: this.timeOf(VIDEO_TRACK, 1), key, data });
    });
    stream.once('end', () => this.again(() => this.watch()));
  }

  private listen(): void {
    const { sound } = this.parts;
    if (!sound || this.closed) return;
    const stream = (this.soundStream = sound.listen({ forRecording: true }));
    stream.on('packet', (packet) => {
      // The first packet after a rest, the first at all, or one after a real gap in the sound
      // (further behind its track's pace than SOUND_KEEP_PACE_MS): silence before it, up to now.
      const last = this.last.get(AUDIO_TRACK);
      const behind = last === undefined ? Infinity : performance.now() - this.began - (last + SOUND_FORMAT.frameMs);
      if (sound.restedSince(this.lastSoundAt) || behind >= SOUND_KEEP_PACE_MS) this.fillSilence(true);
      this.lastSoundAt = performance.now();
      const block = { track: AUDIO_TRACK, time: this.timeOf(AUDIO_TRACK, SOUND_FORMAT.frameMs, SOUND_KEEP_PACE_MS), key: true, data: packet };
      if (this.header) return this.add(block);
      this.early.push(block);
      while (this.early.length > 0 && block.time - this.early[0]!.time > EARLY_MS) this.early.shift();
    });
    stream.once('end', () => this.again(() => this.listen()));
  }

  /**
   * While the sound encoder rests (or, `ended`, when it has just rested), frames of silence from
   * the track's last one up to now, so the track has no hole (a copy to MP4 gives the frame before
   * a hole the hole's length, and a decoder plays what follows that much too soon). A track that
   * has had no frame yet is filled from the recording's time 0 (the sound started after the picture).
   */
  private fillSilence(ended = false): void {
    const { sound } = this.parts;
    const step = SOUND_FORMAT.frameMs;
    const last = this.last.get(AUDIO_TRACK) ?? (this.origin === null ? undefined : this.origin - step);
    if (!sound || last === undefined || !this.soundStream || this.soundStream.closed) return;
    if (!ended && !sound.silentPauses.paused) return;
    const now = performance.now() - this.began;
    // Up to a frame before now: the next real packet, stamped now, follows the last on time.
    for (let time = last + step; time <= now - step; time += step) {
      const block = { track: AUDIO_TRACK, time, key: true, data: SILENT_PACKET };
      this.last.set(AUDIO_TRACK, time);
      if (this.header) this.add(block);
      else this.early.push(block);
    }
  }

  /** An encoder's output stopped while the session runs (it failed): joined again shortly. */
  private again(join: () => void): void {
    if (this.closed) return;
    setTimeout(() => join(), REJOIN_MS).unref();
  }

  /**
   * Now, in ms since the recording began, but at least `step` after the track's last block. A
   * track that flows at its own pace (the sound: a packet every `step` of its samples) keeps that
   * pace through a packet that arrives up to `keepPaceMs` late (a busy machine): stamped by its
   * arrival, it would leave a hole that a copy to MP4 gives to the packet before, and a decoder
   * would play everything after it that much too soon.
   */
  private timeOf(track: number, step: number, keepPaceMs = 0): number {
    const last = this.last.get(track);
    const now = Math.round(performance.now() - this.began);
    const next = last === undefined ? 0 : last + step;
    const time = next >= now || now - next < keepPaceMs ? next : now;
    this.last.set(track, time);
    return time;
  }

  private writeHeader(avcC: Buffer | null): void {
    this.headerAvcC = avcC;
    this.header = matroskaHeader({
      video: avcC ? { avcC, width: this.parts.width, height: this.parts.height } : null,
      audio: this.parts.sound ? { sampleRate: SOUND_FORMAT.sampleRate, channels: SOUND_FORMAT.channels, preSkip: OPUS_PRE_SKIP } : null,
    });
    this.write(this.header);
    const early = this.early;
    this.early = [];
    for (const block of early) this.add(block);
  }

  private add(block: Block): void {
    if (this.origin === null) {
      this.origin = block.time;
      writeFile(join(dirname(this.path), RECORDING_START), new Date(performance.timeOrigin + this.began + block.time).toISOString(), { mode: 0o600 }).catch(() => undefined);
    }
    block = { ...block, time: block.time - this.origin };
    const first = this.cluster[0];
    if (first && ((block.track === VIDEO_TRACK && block.key) || block.time - first.time >= CLUSTER_MS || this.clusterBytes >= CLUSTER_BYTES)) this.flush();
    this.cluster.push(block);
    this.clusterBytes += block.data.length;
  }

  /** Writes the cluster so far, whole: a file cut off later still plays up to here. */
  private flush(): void {
    if (this.cluster.length === 0) return;
    const blocks = this.cluster;
    this.cluster = [];
    this.clusterBytes = 0;
    this.write(matroskaCluster(Math.min(...blocks.map((block) => block.time)), blocks));
  }

  private write(bytes: Buffer): void {
    this.written += bytes.length;
    this.out.write(bytes);
  }
}
