// The share API's sound channel (`/share/<link_id>/sound`, a WebSocket): its first message, a JSON
// text saying the format, is read here; one binary message per Opus packet follows. Pure TS, so
// the engine that serves it and the viewer's player read it the same way.

/** The sound channel's first message: the format of the Opus packets that follow, one per binary message. */
export interface SoundFormat {
  codec: 'opus';
  sampleRate: number;
  channels: number;
  /** Each packet's length. */
  frameMs: number;
}

/** Reads the sound channel's first message; anything else gives `null`. */
export function parseSoundFormat(text: string): SoundFormat | null {
  let value: Partial<SoundFormat> | null;
  try {
    value = JSON.parse(text) as Partial<SoundFormat> | null;
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || value.codec !== 'opus') return null;
  const { sampleRate, channels, frameMs } = value;
  if (!Number.isInteger(sampleRate) || sampleRate! < 8000 || sampleRate! > 48000) return null;
  if (channels !== 1 && channels !== 2) return null;
  if (typeof frameMs !== 'number' || !(frameMs > 0 && frameMs <= 120)) return null;
  return { codec: 'opus', sampleRate: sampleRate!, channels, frameMs };
}
