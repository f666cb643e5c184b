// The encoder's output as the engine reads it: Ogg pages cut into Opus packets however the pipe
// splits them, headers left out, anything that is not Ogg refused (the encoder runs in the session).
import { describe, expect, it } from 'vitest';
import { OggOpusReader } from '../../src/engine/runtime/capture/ogg-opus.js';
import { oggOpus } from '../helpers/sound.js';

/** Packets of varied sizes, a long one among them (lacing values of 255 and a 0 to end it). */
const PACKETS = [Buffer.alloc(3, 1), Buffer.alloc(160, 2), Buffer.alloc(255, 3), Buffer.alloc(700, 4), Buffer.alloc(1, 5)];

describe('the Ogg Opus reader', () => {
  it('gives the packets, whole and in order, without the two header packets, however the bytes arrive', () => {
    const stream = oggOpus(PACKETS);
    for (const size of [1, 7, 27, 300, stream.length]) {
      const reader = new OggOpusReader();
      const got: Buffer[] = [];
      for (let at = 0; at < stream.length; at += size) got.push(...reader.push(stream.subarray(at, at + size)));
      expect(got).toEqual(PACKETS);
    }
  });

  it('puts together a packet that continues on the next page', () => {
    // One 300-byte packet laced over two pages: 255 on the first (continued), 45 on the second.
    const whole = oggOpus([Buffer.alloc(300, 9)]);
    const headers = oggOpus([]).length;
    const page = whole.subarray(headers);
    const body = page.subarray(27 + page[26]!);
    const first = Buffer.concat([page.subarray(0, 26), Buffer.from([1, 255]), body.subarray(0, 255)]);
    const second = Buffer.concat([page.subarray(0, 26), Buffer.from([1, 45]), body.subarray(255)]);
    second[5] = 0x01; // continued packet
    const reader = new OggOpusReader();
    expect(reader.push(whole.subarray(0, headers))).toEqual([]);
    expect(reader.push(first)).toEqual([]);
    expect(reader.push(second)).toEqual([Buffer.alloc(300, 9)]);
  });

  it('refuses a stream that is not Ogg', () => {
    expect(() => new OggOpusReader().push(Buffer.from('this is not an ogg stream at all'))).toThrow(/not an Ogg stream/);
  });
});
