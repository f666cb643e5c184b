// Matroska's bytes for a session's recording (issue 35): the file's start (the EBML header, a
// segment of unknown size, its info and its tracks: the picture as H.264, the sound as Opus), then
// one cluster at a time, each written whole, of the frames the recorder (recorder.ts) gives it as
// they came, with their times; and the parameter sets to put before a key frame when a later
// encoder's configuration differs from the header's. Nothing is encoded here. Matroska is chosen
// because it can be written as it goes: an engine killed in the middle leaves a file that plays up
// to its last cluster. ffmpeg copies it into MP4 for people (recordings/media.ts). Only what the
// recording needs of EBML is here.

/** EBML element ids used (Matroska's specification, RFC 9559). */
const ID = {
  ebml: 0x1a45dfa3, ebmlVersion: 0x4286, ebmlReadVersion: 0x42f7, ebmlMaxIdLength: 0x42f2, ebmlMaxSizeLength: 0x42f3,
  docType: 0x4282, docTypeVersion: 0x4287, docTypeReadVersion: 0x4285,
  segment: 0x18538067, info: 0x1549a966, timestampScale: 0x2ad7b1, muxingApp: 0x4d80, writingApp: 0x5741,
  tracks: 0x1654ae6b, trackEntry: 0xae, trackNumber: 0xd7, trackUid: 0x73c5, trackType: 0x83, codecId: 0x86,
  codecPrivate: 0x63a2, codecDelay: 0x56aa, seekPreRoll: 0x56bb, video: 0xe0, pixelWidth: 0xb0, pixelHeight: 0xba,
  audio: 0xe1, samplingFrequency: 0xb5, channels: 0x9f,
  cluster: 0x1f43b675, timestamp: 0xe7, simpleBlock: 0xa3,
} as const;

function idBytes(id: number): Buffer {
  const bytes: number[] = [];
  for (let value = id; value > 0; value = Math.floor(value / 256)) bytes.unshift(value & 0xff);
  return Buffer.from(bytes);
}

/** An EBML variable-length size: the shortest form that holds `n`. */
function sizeBytes(n: number): Buffer {
  for (let length = 1; length <= 8; length++) {
    if (n < 2 ** (7 * length) - 1) {
      const out = Buffer.alloc(length);
      let value = n;
      for (let i = length - 1; i >= 0; i--) {
        out[i] = value & 0xff;
        value = Math.floor(value / 256);
      }
      out[0]! |= 1 << (8 - length);
      return out;
    }
  }
  throw new Error(`an EBML element of ${n} bytes is too large`);
}

/** The unknown size: the segment's, since the file grows until the recording ends. */
const UNKNOWN_SIZE = Buffer.from([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);

function element(id: number, ...body: Buffer[]): Buffer {
  const data = Buffer.concat(body);
  return Buffer.concat([idBytes(id), sizeBytes(data.length), data]);
}

function uint(id: number, value: number): Buffer {
  const bytes: number[] = [];
  for (let v = value; v > 0 || bytes.length === 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return element(id, Buffer.from(bytes));
}

function text(id: number, value: string): Buffer {
  return element(id, Buffer.from(value, 'utf8'));
}

function float(id: number, value: number): Buffer {
  const data = Buffer.alloc(8);
  data.writeDoubleBE(value);
  return element(id, data);
}

export interface VideoTrack {
  /** The decoder configuration record (avcC) the encoder gave first. */
  avcC: Buffer;
  width: number;
  height: number;
}

export interface AudioTrack {
  sampleRate: number;
  channels: number;
  /** Samples the decoder drops at the start (Opus's pre-skip). */
  preSkip: number;
}

/** Track numbers in the file: the picture is 1, the sound 2 (when there is each). */
export const VIDEO_TRACK = 1;
export const AUDIO_TRACK = 2;

/** The file's start: EBML header, the segment (of unknown size), its info and its tracks. */
export function matroskaHeader(tracks: { video: VideoTrack | null; audio: AudioTrack | null }): Buffer {
  const entries: Buffer[] = [];
  if (tracks.video) {
    const { avcC, width, height } = tracks.video;
    entries.push(element(ID.trackEntry,
      uint(ID.trackNumber, VIDEO_TRACK), uint(ID.trackUid, VIDEO_TRACK), uint(ID.trackType, 1),
      text(ID.codecId, 'V_MPEG4/ISO/AVC'), element(ID.codecPrivate, avcC),
      element(ID.video, uint(ID.pixelWidth, width), uint(ID.pixelHeight, height))));
  }
  if (tracks.audio) {
    const { sampleRate, channels, preSkip } = tracks.audio;
    // RFC 7845's identification header, as Matroska's A_OPUS carries it.
    const head = Buffer.alloc(19);
    head.write('OpusHead', 0, 'latin1');
    head.writeUInt8(1, 8);
    head.writeUInt8(channels, 9);
    head.writeUInt16LE(preSkip, 10);
    head.writeUInt32LE(sampleRate, 12);
    entries.push(element(ID.trackEntry,
      uint(ID.trackNumber, AUDIO_TRACK), uint(ID.trackUid, AUDIO_TRACK), uint(ID.trackType, 2),
      text(ID.codecId, 'A_OPUS'), element(ID.codecPrivate, head),
      uint(ID.codecDelay, Math.round((preSkip / sampleRate) * 1e9)), uint(ID.seekPreRoll, 80_000_000),
      element(ID.audio, float(ID.samplingFrequency, sampleRate), uint(ID.channels, channels))));
  }
  return Buffer.concat([
    element(ID.ebml,
      uint(ID.ebmlVersion, 1), uint(ID.ebmlReadVersion, 1), uint(ID.ebmlMaxIdLength, 4), uint(ID.ebmlMaxSizeLength, 8),
      text(ID.docType, 'matroska'), uint(ID.docTypeVersion, 4), uint(ID.docTypeReadVersion, 2)),
    idBytes(ID.segment), UNKNOWN_SIZE,
    // Times in milliseconds.
    element(ID.info, uint(ID.timestampScale, 1_000_000), text(ID.muxingApp, 'remote-browser-kit'), text(ID.writingApp, 'remote-browser-kit')),
    element(ID.tracks, ...entries),
  ]);
}

export interface Block {
  track: number;
  /** Milliseconds from the recording's start. */
  time: number;
  key: boolean;
  data: Buffer;
}

/** One cluster: its start time and its blocks (each within 32 s of it), written whole. */
export function matroskaCluster(start: number, blocks: readonly Block[]): Buffer {
  return element(ID.cluster, uint(ID.timestamp, start), ...blocks.map((block) => {
    const head = Buffer.alloc(4);
    head.writeUInt8(0x80 | block.track, 0);
    head.writeInt16BE(block.time - start, 1);
    head.writeUInt8(block.key ? 0x80 : 0, 3);
    return element(ID.simpleBlock, head, block.data);
  }));
}

/**
 * The parameter sets of an avcC record as length-prefixed NAL units (4-byte lengths, as the
 * frames carry them): put before a key frame when a later encoder's configuration differs from
 * the one in the file's header, so a decoder meets the new one in the stream.
 */
export function parameterSetUnits(avcC: Buffer): Buffer {
  const units: Buffer[] = [];
  let offset = 5;
  for (const countMask of [0x1f, 0xff]) {
    const count = avcC[offset]! & countMask;
    offset += 1;
    for (let i = 0; i < count; i++) {
      const length = avcC.readUInt16BE(offset);
      const unit = avcC.subarray(offset + 2, offset + 2 + length);
      const prefix = Buffer.alloc(4);
      prefix.writeUInt32BE(length);
      units.push(prefix, unit);
      offset += 2 + length;
    }
  }
  return Buffer.concat(units);
}
