// What one viewer holds down on a session's display (issue 43, finding 5): the keys and buttons of
// the RFB messages it passed, and the messages that let go of them. X keeps one keyboard and one
// pointer for every connection, so a Shift or a button left down by a viewer who no longer drives
// reaches the next driver's input (its `f` arrives as `F`, its moves drag); the room writes these
// releases on the viewer's own connection when it stops driving or leaves (viewer-room.ts).
import type { ClientMessage } from './rfb-client-messages.js';

const KEY_EVENT = 4;
const QEMU_CLIENT_MESSAGE = 255;

export class HeldInput {
  /** Each key down, by the identity Xvnc tracks it by (its keycode, else its keysym), with the message that lets it go. */
  private readonly keys = new Map<number, Buffer>();
  private buttons = 0;
  private x = 0;
  private y = 0;

  /** Notes a key or pointer message that reached the display. */
  passed(message: ClientMessage): void {
    const { bytes } = message;
    if (message.kind === 'pointer') {
      this.buttons = bytes[1]!;
      this.x = bytes.readUInt16BE(2);
      this.y = bytes.readUInt16BE(4);
      return;
    }
    if (message.kind !== 'key') return;
    if (bytes[0] === KEY_EVENT) {
      // Xvnc's own key of a key without a keycode: its keysym with the high bit set.
      const identity = (0x80000000 | bytes.readUInt32BE(4)) >>> 0;
      if (bytes[1] !== 0) this.keys.set(identity, Buffer.from([KEY_EVENT, 0, 0, 0, ...bytes.subarray(4, 8)]));
      else this.keys.delete(identity);
    } else if (bytes[0] === QEMU_CLIENT_MESSAGE) {
      const keysym = bytes.readUInt32BE(4);
      const keycode = bytes.readUInt32BE(8);
      const identity = keycode !== 0 ? keycode : (0x80000000 | keysym) >>> 0;
      if (bytes.readUInt16BE(2) !== 0) {
        // Let go in the form it was pressed in: Xvnc matches a release to its press by keycode.
        const up = Buffer.from(bytes);
        up.writeUInt16BE(0, 2);
        this.keys.set(identity, up);
      } else {
        this.keys.delete(identity);
      }
    }
  }

  /** Whether anything is held. */
  get holds(): boolean {
    return this.keys.size > 0 || this.buttons !== 0;
  }

  /**
   * The messages that let go of everything held (each key up, then no button at the last pointer
   * position, so nothing moves), in order; afterwards nothing counts as held.
   */
  letGo(): Buffer[] {
    const messages = [...this.keys.values()];
    if (this.buttons !== 0) {
      const pointer = Buffer.alloc(6);
      pointer.writeUInt8(5, 0);
      pointer.writeUInt16BE(this.x, 2);
      pointer.writeUInt16BE(this.y, 4);
      messages.push(pointer);
    }
    this.keys.clear();
    this.buttons = 0;
    return messages;
  }
}
