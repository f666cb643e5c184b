// Property test of the view-only filter (channels/rfb/rfb-client-messages.ts, channels/rfb/viewer-room.ts):
// whatever messages a view-only viewer sends, split across WebSocket frames at any points, what
// reaches the display, read the way Xvnc reads it, holds no key, pointer, clipboard or size
// message; a share link's stream passes through unchanged apart from the size requests; and a
// message of an extension the viewer did not announce is refused wherever it comes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ClientMessageReader, PSEUDO_ENCODING, RfbProtocolError } from '../../src/engine/channels/rfb/rfb-client-messages.js';
import { ViewerRoom, type ViewerRights } from '../../src/engine/channels/rfb/viewer-room.js';
import { runs, SEED } from './fuzz.js';

const u16 = (value: number) => [value >> 8, value & 0xff];
const u32 = (value: number) => [(value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];

/** The pseudo-encodings of every extension message below: noVNC announces them all. */
const EXTENSIONS = Object.values(PSEUDO_ENCODING);
const setEncodings = (encodings: number[]) => [2, 0, ...u16(encodings.length), ...encodings.flatMap((e) => u32(e >>> 0))];

/** Any RFB client message a viewer may send, well-formed (random content). */
const anyMessage = (encodings: fc.Arbitrary<number[]>) => fc.oneof(
  fc.uint8Array({ minLength: 19, maxLength: 19 }).map((rest) => [0, ...rest]),
  encodings.map(setEncodings),
  fc.uint8Array({ minLength: 9, maxLength: 9 }).map((rest) => [3, ...rest]),
  fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 0x10ffff })).map(([down, keysym]) => [4, down ? 1 : 0, 0, 0, ...u32(keysym)]),
  fc.uint8Array({ minLength: 5, maxLength: 5 }).map((rest) => [5, ...rest]),
  fc.uint8Array({ maxLength: 40 }).map((text) => [6, 0, 0, 0, ...u32(text.length), ...text]),
  fc.uint8Array({ maxLength: 40 }).map((data) => [6, 0, 0, 0, ...u32((-data.length - 4) >>> 0), 0, 0, 0, 1, ...data]),
  fc.uint8Array({ minLength: 9, maxLength: 9 }).map((rest) => [150, ...rest]),
  fc.uint8Array({ maxLength: 64 }).map((payload) => [248, 0, 0, 0, ...u32(1), payload.length, ...payload]),
  fc.tuple(fc.integer({ min: 0, max: 4000 }), fc.integer({ min: 0, max: 4000 }), fc.integer({ min: 0, max: 3 })).map(([w, h, screens]) => [
    251, 0, ...u16(w), ...u16(h), screens, 0, ...Array.from({ length: screens }, () => [...u32(0), 0, 0, 0, 0, ...u16(w), ...u16(h), ...u32(0)]).flat(),
  ]),
  fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 0xffff })).map(([down, keysym]) => [255, 0, ...u16(down ? 1 : 0), ...u32(keysym), ...u32(0x1e)]),
);

/** A well-behaved viewer's messages: each SetEncodings announces every extension it then uses. */
const message = anyMessage(fc.array(fc.integer({ min: -400, max: 20 }), { maxLength: 8 }).map((encodings) => [...encodings, ...EXTENSIONS]));

const HANDSHAKE = [...Buffer.from('RFB 003.008\n', 'latin1'), 1, 1, ...setEncodings(EXTENSIONS)];

/** Splits bytes at random points, as WebSocket frames may. */
const framed = (bytes: number[]) =>
  fc.array(fc.integer({ min: 1, max: Math.max(1, bytes.length) }), { maxLength: 12 }).map((cuts) => {
    const points = [...new Set(cuts.filter((c) => c < bytes.length))].sort((a, b) => a - b);
    const frames: Buffer[] = [];
    let start = 0;
    for (const point of [...points, bytes.length]) {
      frames.push(Buffer.from(bytes.slice(start, point)));
      start = point;
    }
    return frames;
  });

/** What reaches the display for a viewer with `rights` sending `frames`, read again as Xvnc would. */
function throughRoom(rights: ViewerRights, frames: Buffer[]): { kinds: string[]; bytes: Buffer } {
  const room = new ViewerRoom();
  const written: Buffer[] = [];
  const viewer = room.join(rights, { write: (bytes) => void written.push(bytes), takesSizes: () => true });
  const reader = new ClientMessageReader();
  for (const frame of frames) {
    for (const item of reader.push(frame)) {
      const bytes = viewer.admit(item);
      if (bytes) written.push(bytes);
    }
  }
  room.close();
  const bytes = Buffer.concat(written);
  return { kinds: new ClientMessageReader().push(bytes).map((m) => m.kind), bytes };
}

describe('the view-only filter', () => {
  it('lets no key, pointer, clipboard or size message through, however the stream is split', () => {
    fc.assert(
      fc.property(
        fc.array(message, { maxLength: 30 }).chain((messages) => framed([...HANDSHAKE, ...messages.flat()])),
        (frames) => {
          const { kinds } = throughRoom('view', frames);
          expect(kinds.filter((kind) => kind !== 'handshake' && kind !== 'watch')).toEqual([]);
        },
      ),
      { seed: SEED + 11, numRuns: runs(400) },
    );
  });

  it("passes a share link's messages unchanged and in order, except size requests (which the room sends itself)", () => {
    fc.assert(
      fc.property(
        fc.array(message, { maxLength: 30 }).chain((messages) => framed([...HANDSHAKE, ...messages.flat()]).map((frames) => ({ messages, frames }))),
        ({ messages, frames }) => {
          const expected = Buffer.from([...HANDSHAKE, ...messages.filter((m) => m[0] !== 251).flat()]);
          const passed = throughRoom('control', frames).bytes;
          // The room may add one SetDesktopSize (24 bytes) of its own; everything else is the viewer's, in order.
          const withoutResizes = new ClientMessageReader().push(passed).filter((m) => m.kind !== 'resize').map((m) => m.bytes);
          expect(Buffer.concat(withoutResizes)).toEqual(expected);
        },
      ),
      { seed: SEED + 12, numRuns: runs(400) },
    );
  });

  it('refuses a message of an extension the viewer did not announce in its latest SetEncodings, and nothing else', () => {
    // Announcing some, all or none of the extensions, in any order with other messages.
    const encodings = fc.subarray([...EXTENSIONS, 0, -223, 7]);
    /** The extension message `bytes` is, as its pseudo-encoding, or null for a core message. */
    const needs = (bytes: number[]): number | null =>
      ({ 251: PSEUDO_ENCODING.ExtendedDesktopSize, 248: PSEUDO_ENCODING.Fence, 150: PSEUDO_ENCODING.ContinuousUpdates, 255: PSEUDO_ENCODING.QemuExtendedKeyEvent })[bytes[0]!] ??
      (bytes[0] === 6 && bytes[4]! >= 0x80 ? PSEUDO_ENCODING.ExtendedClipboard : null);
    fc.assert(
      fc.property(fc.array(anyMessage(encodings), { maxLength: 20 }), (messages) => {
        // What the viewer has announced as each message arrives, read the way Xvnc keeps it.
        let announced = new Set<number>();
        const firstRefused = messages.findIndex((bytes) => {
          if (bytes[0] === 2) announced = new Set(Buffer.from(bytes).subarray(4).reduce<number[]>((all, _, i, b) => (i % 4 === 0 ? [...all, b.readInt32BE(i)] : all), []));
          const encoding = needs(bytes);
          return encoding !== null && !announced.has(encoding);
        });
        const reader = new ClientMessageReader();
        const read = () => reader.push(Buffer.from([...Buffer.from('RFB 003.008\n', 'latin1'), 1, 1, ...messages.flat()]));
        if (firstRefused === -1) expect(read()).toHaveLength(3 + messages.length);
        else expect(read).toThrow(RfbProtocolError);
      }),
      { seed: SEED + 13, numRuns: runs(400) },
    );
  });
});
