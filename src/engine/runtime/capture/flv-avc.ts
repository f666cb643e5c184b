// Reading the video encoder's output: an FLV stream of H.264 as it arrives on a pipe, cut into the
// avcC record and one access unit per tag. FLV is the smallest container that gives each encoded
// frame its own length and key-frame flag (a raw Annex B stream would show where a frame ends
// only when the next one begins: a frame's worth of delay), and ffmpeg writes each tag at once.

/** The FLV file header (9 bytes) and the first PreviousTagSize (4). */
const FILE_HEADER_BYTES = 13;
const TAG_HEADER_BYTES = 11;
const TAG_VIDEO = 9;
const CODEC_AVC = 7;
const AVC_SEQUENCE_HEADER = 0;
const AVC_NALU = 1;
/** More than this in one tag means a broken stream (a 4K key frame is far smaller). */
const MAX_TAG_BYTES = 16 * 1024 * 1024;

export type FlvAvcItem =
  /** The AVCDecoderConfigurationRecord (the decoder's `description`). */
  | { kind: 'config'; avcC: Buffer }
  /** One access unit, AVC form (length-prefixed NAL units). */
  | { kind: 'frame'; key: boolean; data: Buffer };

export class FlvFormatError extends Error {}

export class FlvAvcReader {
  private buffered: Buffer = Buffer.alloc(0);
  private headerRead = false;

  /** Feeds bytes as they arrive; returns what they completed, in order. */
  push(chunk: Buffer): FlvAvcItem[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const items: FlvAvcItem[] = [];
    if (!this.headerRead) {
      if (this.buffered.length < FILE_HEADER_BYTES) return items;
      if (this.buffered.toString('latin1', 0, 3) !== 'FLV') throw new FlvFormatError('the video encoder wrote something other than FLV');
      this.buffered = this.buffered.subarray(FILE_HEADER_BYTES);
      this.headerRead = true;
    }
    for (;;) {
      if (this.buffered.length < TAG_HEADER_BYTES) break;
      const size = this.buffered.readUIntBE(1, 3);
      if (size > MAX_TAG_BYTES) throw new FlvFormatError(`an FLV tag of ${size} bytes`);
      const whole = TAG_HEADER_BYTES + size + 4;
      if (this.buffered.length < whole) break;
      const type = this.buffered[0]! & 0x1f;
      const body = this.buffered.subarray(TAG_HEADER_BYTES, TAG_HEADER_BYTES + size);
      this.buffered = this.buffered.subarray(whole);
      if (type !== TAG_VIDEO || body.length < 5 || (body[0]! & 0x0f) !== CODEC_AVC) continue;
      const payload = Buffer.from(body.subarray(5));
      if (body[1] === AVC_SEQUENCE_HEADER) items.push({ kind: 'config', avcC: payload });
      else if (body[1] === AVC_NALU && payload.length > 0) items.push({ kind: 'frame', key: body[0]! >> 4 === 1, data: payload });
    }
    return items;
  }
}
