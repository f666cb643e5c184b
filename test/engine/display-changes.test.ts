// The engine's listener for a display's changes (display-changes.ts, decisions.md 118), against
// the server side of RFB as Xvnc speaks it, cut at every byte: the handshake it answers, the one
// request it sends per change asked for, an update told once however its bytes arrive, the size it
// asks for following a resize, and a message it never asked for ending the connection, said why.
import { Duplex } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { DisplayChanges } from '../../src/engine/runtime/capture/display-changes.js';

/** The client's end of a connection whose server side the test writes; what the client sends is kept. */
function connection() {
  const sent: Buffer[] = [];
  const socket = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, done) {
      sent.push(Buffer.from(chunk));
      done();
    },
  });
  return { socket, sent, serve: (bytes: Buffer) => socket.push(bytes) };
}

const u16 = (value: number) => Buffer.from([value >> 8, value & 0xff]);
const u32 = (value: number) => Buffer.from([value >>> 24, (value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff]);
const s32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeInt32BE(value);
  return bytes;
};
const rectangle = (width: number, height: number, encoding: number, data: Buffer = Buffer.alloc(0)) =>
  Buffer.concat([u16(0), u16(0), u16(width), u16(height), s32(encoding), data]);
const update = (...rectangles: Buffer[]) => Buffer.concat([Buffer.from([0, 0]), u16(rectangles.length), ...rectangles]);

const HANDSHAKE = Buffer.concat([
  Buffer.from('RFB 003.008\n'),
  Buffer.from([1, 1]),
  u32(0),
  u16(1280), u16(720), Buffer.alloc(16), u32(4), Buffer.from('name'),
]);

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('a display changes listener', () => {
  it('asks once per listen for the whole screen, and tells each update once however it is cut', async () => {
    const { socket, sent, serve } = connection();
    const changes = new DisplayChanges(socket);
    let told = 0;
    changes.on('change', () => told++);
    changes.on('ready', () => changes.listen());
    // Byte by byte: the handshake, then an update of raw pixels, a cursor and a new size.
    const first = update(rectangle(3, 2, 0, Buffer.alloc(6)), rectangle(9, 2, -239, Buffer.alloc(9 * 2 + 2 * 2)), rectangle(1920, 1080, -308, Buffer.concat([Buffer.from([1, 0, 0, 0]), Buffer.alloc(16)])));
    for (const byte of Buffer.concat([HANDSHAKE, first])) {
      serve(Buffer.from([byte]));
      await tick();
    }
    const written = Buffer.concat(sent);
    expect(written.subarray(0, 12).toString()).toBe('RFB 003.008\n');
    expect([...written.subarray(12, 14)]).toEqual([1, 1]);
    // SetPixelFormat (8 bits), then SetEncodings: Raw, DesktopSize, ExtendedDesktopSize, Cursor.
    expect(written[14]).toBe(0);
    expect(written[18]).toBe(8);
    const encodings = written.subarray(34);
    expect(encodings[0]).toBe(2);
    expect([0, 1, 2, 3].map((i) => encodings.readInt32BE(4 + 4 * i))).toEqual([0, -223, -308, -239]);
    const request = encodings.subarray(20);
    expect([...request]).toEqual([3, 1, 0, 0, 0, 0, ...u16(1280), ...u16(720)]);
    expect(told).toBe(1);
    expect(changes.listening).toBe(false);

    // Asked again, it asks for the new size, once however often it is asked.
    sent.length = 0;
    changes.listen();
    changes.listen();
    expect(sent).toHaveLength(1);
    expect([...sent[0]!]).toEqual([3, 1, 0, 0, 0, 0, ...u16(1920), ...u16(1080)]);
    // A bell and clipboard text are not changes; an update in two pieces is one.
    const second = update(rectangle(100, 100, 0, Buffer.alloc(10_000)));
    serve(Buffer.concat([Buffer.from([2, 3, 0, 0, 0]), u32(5), Buffer.from('hello'), second.subarray(0, 5000)]));
    await tick();
    expect(told).toBe(1);
    serve(second.subarray(5000));
    await tick();
    expect(told).toBe(2);
    changes.close();
  });

  it('ends, saying why, on a message it did not ask for', async () => {
    const { socket, serve } = connection();
    const changes = new DisplayChanges(socket);
    const closed = new Promise<string>((resolve) => changes.once('closed', resolve));
    serve(Buffer.concat([HANDSHAKE, Buffer.from([248, 0, 0, 0])]));
    expect(await closed).toMatch(/message type 248/);
    expect(changes.ready).toBe(false);
  });

  // Issue 49: the session owns rfb.sock, so what answers there may be a process of the session.
  describe('behind a display server the session faked', () => {
    it('ends on a 4 GiB desktop name at once, buffering none of it', async () => {
      const { socket, serve } = connection();
      const changes = new DisplayChanges(socket);
      const closed = new Promise<string>((resolve) => changes.once('closed', resolve));
      serve(Buffer.concat([HANDSHAKE.subarray(0, HANDSHAKE.length - 8), u32(0xffff_ffff), Buffer.alloc(64 * 1024, 0x61)]));
      expect(await closed).toMatch(/name is 4294967295 bytes long/);
    });

    it('ends on empty updates nobody asked for, telling no change', async () => {
      const { socket, serve } = connection();
      const changes = new DisplayChanges(socket);
      let told = 0;
      changes.on('change', () => told++);
      const closed = new Promise<string>((resolve) => changes.once('closed', resolve));
      serve(Buffer.concat([HANDSHAKE, ...Array.from({ length: 10_000 }, () => update())]));
      expect(await closed).toMatch(/empty update nobody asked for/);
      expect(told).toBe(0);
    });

    it('ends on pixels nobody asked for, and on a flood of unasked pointer shapes', async () => {
      const pixels = connection();
      const first = new DisplayChanges(pixels.socket);
      const pixelsClosed = new Promise<string>((resolve) => first.once('closed', resolve));
      pixels.serve(Buffer.concat([HANDSHAKE, update(rectangle(2, 2, 0, Buffer.alloc(4)))]));
      expect(await pixelsClosed).toMatch(/pixels nobody asked for/);

      const shapes = connection();
      const second = new DisplayChanges(shapes.socket);
      let told = 0;
      second.on('change', () => told++);
      const shapesClosed = new Promise<string>((resolve) => second.once('closed', resolve));
      const shape = update(rectangle(1, 1, -239, Buffer.alloc(2)));
      shapes.serve(Buffer.concat([HANDSHAKE, ...Array.from({ length: 1000 }, () => shape)]));
      expect(await shapesClosed).toMatch(/updates a second nobody asked for/);
      expect(told).toBe(0);
    });

    it('still takes a resize nobody asked for, and tells no change for it', async () => {
      const { socket, sent, serve } = connection();
      const changes = new DisplayChanges(socket);
      let told = 0;
      changes.on('change', () => told++);
      serve(Buffer.concat([HANDSHAKE, update(rectangle(1024, 768, -223))]));
      await tick();
      expect(changes.ready).toBe(true);
      expect(told).toBe(0);
      sent.length = 0;
      changes.listen();
      expect([...sent[0]!]).toEqual([3, 1, 0, 0, 0, 0, ...u16(1024), ...u16(768)]);
      changes.close();
    });

    it('ends when the handshake does not finish in time', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      try {
        const { socket, serve } = connection();
        const changes = new DisplayChanges(socket);
        const closed = new Promise<string>((resolve) => changes.once('closed', resolve));
        serve(Buffer.from('RFB 003.008\n'));
        vi.advanceTimersByTime(10_001);
        expect(await closed).toMatch(/handshake within 10 s/);
      } finally {
        vi.useRealTimers();
      }
    });
  });
});
