// The share API's video channel (`/share/<link_id>/video`, a WebSocket, issue 25): its first
// message, a JSON text saying the format, is read here; then one binary message per H.264 access
// unit: one byte of flags (VIDEO_KEY_FRAME), then the access unit as AVC (4-byte length-prefixed
// NAL units, the `description` being the avcC record). A new format message may come at any time
// (the encoder started again, for a new watcher or a new display size): the frames after it are of that format.
// Pure TS, so the engine that serves it and the viewer's player read it the same way.

/** The video channel's format message: what configures a WebCodecs VideoDecoder. */
export interface VideoFormat {
  /** An RFC 6381 codec string, `avc1.PPCCLL` (profile, constraints, level from the avcC record). */
  codec: string;
  /** The avcC record (AVCDecoderConfigurationRecord), base64. */
  description: string;
}

/** The first byte of a frame's message: bit 0 set when the frame is a key frame (decodable alone). */
export const VIDEO_KEY_FRAME = 1;

const CODEC = /^avc1\.[0-9A-F]{6}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Reads a video format message; anything else gives `null`. */
export function parseVideoFormat(text: string): VideoFormat | null {
  let value: Partial<VideoFormat> | null;
  try {
    value = JSON.parse(text) as Partial<VideoFormat> | null;
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { codec, description } = value;
  if (typeof codec !== 'string' || !CODEC.test(codec)) return null;
  if (typeof description !== 'string' || description.length > 4096 || !BASE64.test(description)) return null;
  return { codec, description };
}

/** The codec string for an avcC record (its bytes 1 to 3: profile, constraint flags, level). */
export function avcCodecString(avcC: Uint8Array): string {
  const hex = (byte: number | undefined) => (byte ?? 0).toString(16).toUpperCase().padStart(2, '0');
  return `avc1.${hex(avcC[1])}${hex(avcC[2])}${hex(avcC[3])}`;
}
