// Test helper: a raw RFB (VNC) client over a viewer WebSocket, as a viewer's bytes reach the
// engine: the RFB 3.8 handshake (no security: the share link is the credential), raw pixels of a
// region, and pointer and key events. It reads exactly what the display sends, with no viewer
// library between (noVNC's own path is tested in the browser).
import { WebSocket } from 'ws';

export interface RfbClient {
  /** The framebuffer's size, kept up to date from the display's resize messages. */
  width: number;
  height: number;
  /** RGB of one framebuffer pixel, read fresh from the display. */
  pixel(x: number, y: number): Promise<[number, number, number]>;
  /** Waits until a pixel matches within a tolerance; answers the last value seen. */
  waitForPixel(x: number, y: number, rgb: [number, number, number], timeoutMs?: number): Promise<[number, number, number]>;
  click(x: number, y: number): Promise<void>;
  key(keysym: number): Promise<void>;
  /** A modifier held while a key is pressed (Control_L 0xffe3 + t: a new tab). */
  keyChord(modifier: number, keysym: number): Promise<void>;
  /** Asks the display for a new size (SetDesktopSize, one screen). */
  setDesktopSize(width: number, height: number): void;
  /** Sends clipboard text (ClientCutText, Latin-1). */
  cutText(text: string): void;
  /** Sends raw bytes as they are (any RFB client message, well-formed or not). */
  send(bytes: Buffer): void;
  /** Waits until the framebuffer is `width`x`height` (read through update requests); answers the size seen last. */
  waitForSize(width: number, height: number, timeoutMs?: number): Promise<{ width: number; height: number }>;
  /** Resolves with the close code when the connection ends. */
  closed: Promise<number>;
  close(): void;
}

/** What a viewer announces in SetEncodings: raw pixels, both size-change forms, QEMU keys (as noVNC does). */
export const DEFAULT_ENCODINGS = [0, -308, -223, -258];

export async function connectRfb(url: string, timeoutMs = 15_000, options: { encodings?: number[] } = {}): Promise<RfbClient> {
  const socket = new WebSocket(url, { perMessageDeflate: false });
  let buffered = Buffer.alloc(0);
  let waiter: (() => void) | undefined;
  let failure: Error | undefined;
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  socket.on('message', (data: Buffer) => {
    buffered = Buffer.concat([buffered, data]);
    waiter?.();
  });
  socket.on('close', (code, reason) => {
    failure ??= new Error(`the viewer connection closed (${code} ${reason.toString()})`);
    waiter?.();
  });
  socket.on('error', (error) => {
    failure ??= error;
    waiter?.();
  });
  const deadline = Date.now() + timeoutMs;

  /** The next `count` bytes the display sent. */
  const read = async (count: number): Promise<Buffer> => {
    while (buffered.length < count) {
      if (failure) throw failure;
      if (Date.now() > deadline) throw new Error(`no RFB data within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      waiter = undefined;
    }
    const chunk = buffered.subarray(0, count);
    buffered = buffered.subarray(count);
    return chunk;
  };

  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
    socket.once('close', (code) => reject(new Error(`the viewer connection closed before it opened (${code})`)));
  });
  const version = (await read(12)).toString('latin1');
  if (!version.startsWith('RFB 003.')) throw new Error(`not an RFB server: ${JSON.stringify(version)}`);
  socket.send(Buffer.from('RFB 003.008\n', 'latin1'));
  if (version.startsWith('RFB 003.003')) {
    // A server that refuses before any negotiation answers in RFB 3.3: a zero security type and why.
    if ((await read(4)).readUInt32BE(0) === 0) throw new Error(`the display refused the connection: ${(await read((await read(4)).readUInt32BE(0))).toString('utf8')}`);
    throw new Error('the display speaks only RFB 3.3');
  }
  const count = (await read(1))[0]!;
  if (count === 0) {
    const reason = await read((await read(4)).readUInt32BE(0));
    throw new Error(`the display refused the connection: ${reason.toString('utf8')}`);
  }
  const types = await read(count);
  if (!types.includes(1)) throw new Error(`the display asks for a password (security types ${[...types].join(', ')})`);
  socket.send(Buffer.from([1]));
  if ((await read(4)).readUInt32BE(0) !== 0) throw new Error('the display refused the connection');
  socket.send(Buffer.from([1])); // shared
  const init = await read(24);
  const width = init.readUInt16BE(0);
  const height = init.readUInt16BE(2);
  await read(init.readUInt32BE(20)); // desktop name

  // 32 bits per pixel, little-endian true colour: blue, green, red, padding.
  const format = Buffer.from([0, 0, 0, 0, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0]);
  socket.send(Buffer.concat([format, setEncodings(options.encodings ?? DEFAULT_ENCODINGS)]));
  const size = { width, height };

  /** One full (non-incremental) update of a region: its raw pixels. */
  const region = async (x: number, y: number, w: number, h: number): Promise<Buffer> => {
    const request = Buffer.alloc(10);
    request.writeUInt8(3, 0);
    request.writeUInt8(0, 1);
    request.writeUInt16BE(x, 2);
    request.writeUInt16BE(y, 4);
    request.writeUInt16BE(w, 6);
    request.writeUInt16BE(h, 8);
    socket.send(request);
    for (;;) {
      const type = (await read(1))[0]!;
      if (type === 2) continue; // bell
      if (type === 3) {
        const header = await read(7);
        await read(header.readUInt32BE(3)); // cut text
        continue;
      }
      if (type !== 0) throw new Error(`unexpected RFB message type ${type}`);
      const rects = (await read(3)).readUInt16BE(1);
      let pixels: Buffer | undefined;
      for (let index = 0; index < rects; index++) {
        const header = await read(12);
        const [rw, rh, encoding] = [header.readUInt16BE(4), header.readUInt16BE(6), header.readInt32BE(8)];
        if (encoding === -258) continue; // the display takes QEMU key events (no payload)
        if (encoding === -308 || encoding === -223) {
          // The display's new size (x: why, y: status; an error status leaves it as it was).
          if (encoding === -308) await read(16 * (await read(4))[0]!);
          if (encoding === -223 || header.readUInt16BE(2) === 0) Object.assign(size, { width: rw, height: rh });
          continue;
        }
        if (encoding !== 0) throw new Error(`unexpected encoding ${encoding}`);
        const data = await read(rw * rh * 4);
        if (header.readUInt16BE(0) === x && header.readUInt16BE(2) === y && rw === w && rh === h) pixels = data;
      }
      if (pixels) return pixels;
      // An update that only told the size (Xvnc answers a full request so when the viewer takes
      // size changes): the region is still owed, and an incremental request brings it.
      const again = Buffer.from(request);
      again.writeUInt8(1, 1);
      socket.send(again);
    }
  };

  const pixel = async (x: number, y: number): Promise<[number, number, number]> => {
    const data = await region(x, y, 1, 1);
    return [data[2]!, data[1]!, data[0]!];
  };
  const pointer = (mask: number, x: number, y: number) => {
    const event = Buffer.alloc(6);
    event.writeUInt8(5, 0);
    event.writeUInt8(mask, 1);
    event.writeUInt16BE(x, 2);
    event.writeUInt16BE(y, 4);
    socket.send(event);
  };
  const keyEvent = (down: boolean, keysym: number) => {
    const event = Buffer.alloc(8);
    event.writeUInt8(4, 0);
    event.writeUInt8(down ? 1 : 0, 1);
    event.writeUInt32BE(keysym, 4);
    socket.send(event);
  };

  const send = (bytes: Buffer) => socket.send(bytes);

  return {
    get width() {
      return size.width;
    },
    get height() {
      return size.height;
    },
    pixel,
    setDesktopSize(w, h) {
      const message = Buffer.alloc(24);
      message.writeUInt8(251, 0);
      message.writeUInt16BE(w, 2);
      message.writeUInt16BE(h, 4);
      message.writeUInt8(1, 6);
      message.writeUInt16BE(w, 16);
      message.writeUInt16BE(h, 18);
      send(message);
    },
    cutText(text) {
      const data = Buffer.from(text, 'latin1');
      const header = Buffer.alloc(8);
      header.writeUInt8(6, 0);
      header.writeUInt32BE(data.length, 4);
      send(Buffer.concat([header, data]));
    },
    send,
    async waitForSize(w, h, waitMs = 10_000) {
      const until = Date.now() + waitMs;
      // Each update request lets the display report a size change with it.
      await pixel(0, 0).catch(() => undefined);
      while ((size.width !== w || size.height !== h) && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        await pixel(0, 0);
      }
      return { ...size };
    },
    async waitForPixel(x, y, rgb, waitMs = 10_000) {
      const until = Date.now() + waitMs;
      let last = await pixel(x, y);
      while (last.some((value, index) => Math.abs(value - rgb[index]!) > 8) && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        last = await pixel(x, y);
      }
      return last;
    },
    async click(x, y) {
      pointer(0, x, y);
      pointer(1, x, y);
      pointer(0, x, y);
    },
    async key(keysym) {
      keyEvent(true, keysym);
      keyEvent(false, keysym);
    },
    async keyChord(modifier, keysym) {
      keyEvent(true, modifier);
      keyEvent(true, keysym);
      keyEvent(false, keysym);
      keyEvent(false, modifier);
    },
    closed,
    close() {
      socket.close();
    },
  };
}

/** A SetEncodings message announcing `encodings`, in order. */
export function setEncodings(encodings: number[]): Buffer {
  const message = Buffer.alloc(4 + 4 * encodings.length);
  message.writeUInt8(2, 0);
  message.writeUInt16BE(encodings.length, 2);
  encodings.forEach((encoding, index) => message.writeInt32BE(encoding, 4 + 4 * index));
  return message;
}
