// Reading the sound encoder's output: an Ogg Opus stream (RFC 7845) as it arrives on a pipe, cut
// into the Opus packets it carries, so that each listener gets packets and never pages. ffmpeg is
// told to close a page after every packet (20 ms), so a packet reaches listeners as soon as it is
// encoded; a packet that spans pages (Ogg's lacing) is put together all the same.

/** Ogg's capture pattern, at the start of every page. */
const CAPTURE = Buffer.from('OggS');
const HEADER_BYTES = 27;
/** A page is at most 27 + 255 + 255 * 255 bytes: more buffered without a page means a broken stream. */
const MAX_PAGE_BYTES = HEADER_BYTES + 255 + 255 * 255;

/**
 * Cuts an Ogg Opus byte stream into Opus packets. The stream's two header packets (OpusHead and
 * OpusTags, RFC 7845 section 5) are read and not handed on: the listener's wire contract states
 * the format once, as text.
 */
export class OggOpusReader {
  private buffered: Buffer = Buffer.alloc(0);
  /** The part of a packet whose end is on a later page. */
  private partial: Buffer[] = [];
  private headers = 0;

  /** Feeds bytes as they arrive; returns the Opus packets they completed, in order. */
  push(chunk: Buffer): Buffer[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const packets: Buffer[] = [];
    for (;;) {
      const page = this.nextPage();
      if (!page) break;
      for (const packet of page) {
        // The first two packets of a logical stream are its headers.
        if (this.headers < 2) {
          this.headers++;
          continue;
        }
        packets.push(packet);
      }
    }
    if (this.buffered.length > MAX_PAGE_BYTES) throw new Error('the sound encoder wrote something that is not an Ogg stream');
    return packets;
  }

  /** The packets finished on the next complete page, or null when it has not all arrived. */
  private nextPage(): Buffer[] | null {
    const buffer = this.buffered;
    if (buffer.length < HEADER_BYTES) return null;
    if (!buffer.subarray(0, 4).equals(CAPTURE) || buffer[4] !== 0) throw new Error('the sound encoder wrote something that is not an Ogg stream');
    const segments = buffer[26]!;
    const bodyStart = HEADER_BYTES + segments;
    if (buffer.length < bodyStart) return null;
    let bodyBytes = 0;
    for (let i = 0; i < segments; i++) bodyBytes += buffer[HEADER_BYTES + i]!;
    if (buffer.length < bodyStart + bodyBytes) return null;
    const packets: Buffer[] = [];
    let at = bodyStart;
    for (let i = 0; i < segments; i++) {
      const lacing = buffer[HEADER_BYTES + i]!;
      this.partial.push(buffer.subarray(at, at + lacing));
      at += lacing;
      // A lacing value below 255 ends a packet; 255 says it goes on (on this page or the next).
      if (lacing < 255) {
        packets.push(Buffer.concat(this.partial));
        this.partial = [];
      }
    }
    // Copied: the pipe's chunk is not kept alive by a small packet's view of it.
    this.buffered = Buffer.from(buffer.subarray(bodyStart + bodyBytes));
    return packets.map((packet) => Buffer.from(packet));
  }
}
