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
  /** The encoder's bit rate cap for the frames that follow (kbit/s): lower for a slow watcher (decisions.md 68). */
  bitrateKbps?: number;
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
  const { codec, description, bitrateKbps } = value;
  if (typeof codec !== 'string' || !CODEC.test(codec)) return null;
  if (typeof description !== 'string' || description.length > 4096 || !BASE64.test(description)) return null;
  if (Number.isSafeInteger(bitrateKbps) && bitrateKbps! > 0) return { codec, description, bitrateKbps };
  return { codec, description };
}

/**
 * The watcher's receipt (decisions.md 67): after each frame it reads, a text message with the
 * frame bytes (binary messages' lengths) it has read in all, in decimal. The engine keeps no more
 * than a little of the picture on its way, whatever the sockets and the link buffer between.
 */
export function videoReceipt(receivedBytes: number): string {
  return String(receivedBytes);
}

/** Reads a receipt (text, or bytes where a node link carried it); anything else gives `null`. */
export function parseVideoReceipt(data: string | Uint8Array): number | null {
  const text = typeof data === 'string' ? data : data.length <= 16 ? new TextDecoder().decode(data) : '';
  if (!/^\d{1,15}$/.test(text)) return null;
  return Number(text);
}

/** The codec string for an avcC record (its bytes 1 to 3: profile, constraint flags, level). */
export function avcCodecString(avcC: Uint8Array): string {
  const hex = (byte: number | undefined) => (byte ?? 0).toString(16).toUpperCase().padStart(2, '0');
  return `avc1.${hex(avcC[1])}${hex(avcC[2])}${hex(avcC[3])}`;
}
