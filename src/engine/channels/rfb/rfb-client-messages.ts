// Reads what a viewer sends to a display (the client half of RFB 3.3/3.7/3.8, as TigerVNC's Xvnc
// reads it), cut into whole messages, so the bridge can decide per message what reaches the
// display: watching needs only the handshake, pixel format, encodings, update requests and fences;
// keys, pointer, clipboard and desktop size are control. A message this reader cannot size the
// way Xvnc would is a protocol error: the bridge ends the connection rather than guess, since a
// guessed length could hide a key event inside a message that looks harmless. So is a message of
// an extension the viewer did not announce in its SetEncodings: Xvnc answers such a message in a
// form the viewer never asked for, and for SetDesktopSize without ExtendedDesktopSize it aborts,
// ending the session for every viewer (decisions.md 50).

/** What a client message does, for the bridge's decision. */
export type ClientMessageKind =
  /** Protocol version, security type, ClientInit: needed to connect at all. */
  | 'handshake'
  /** SetPixelFormat, SetEncodings, FramebufferUpdateRequest, EnableContinuousUpdates, ClientFence. */
  | 'watch'
  /** KeyEvent, QEMU extended key event. */
  | 'key'
  /** PointerEvent. */
  | 'pointer'
  /** ClientCutText (classic or extended clipboard). */
  | 'clipboard'
  /** SetDesktopSize. */
  | 'resize';

export interface ClientMessage {
  kind: ClientMessageKind;
  /** The whole message as the client sent it (its first byte is the RFB message type, after the handshake). */
  bytes: Buffer;
}

export class RfbProtocolError extends Error {}

/** Types and their fixed sizes; variable ones are sized by `sizeOf`. */
const MESSAGE = {
  SetPixelFormat: 0,
  SetEncodings: 2,
  FramebufferUpdateRequest: 3,
  KeyEvent: 4,
  PointerEvent: 5,
  ClientCutText: 6,
  EnableContinuousUpdates: 150,
  ClientFence: 248,
  SetDesktopSize: 251,
  QemuClientMessage: 255,
} as const;

/**
 * The pseudo-encoding a viewer announces (SetEncodings) before it may send each extension's
 * message: the RFB community specification's rule, since the server only answers them in that form.
 */
export const PSEUDO_ENCODING = {
  ExtendedDesktopSize: -308,
  Fence: -312,
  ContinuousUpdates: -313,
  QemuExtendedKeyEvent: -258,
  ExtendedClipboard: 0xc0a1e5ce | 0,
} as const;

/** Longest clipboard text carried (Xvnc's own MaxCutText is 256 KiB; it skips longer ones). */
const MAX_CUT_TEXT = 1024 * 1024;
/** The largest WebSocket message a viewer sends: its clipboard text with room for what noVNC sends in the same flush. */
export const RFB_MESSAGE_BYTES = MAX_CUT_TEXT + 64 * 1024;
const VERSIONS = new Set(['RFB 003.003\n', 'RFB 003.007\n', 'RFB 003.008\n']);
/** The only security type the displays offer (the share link is the credential). */
const SECURITY_NONE = 1;

type Phase = 'version' | 'security' | 'init' | 'messages';

/**
 * Cuts a viewer's byte stream into client messages. `push` takes each chunk as it arrives and
 * returns the messages it completed; it throws RfbProtocolError on anything Xvnc would refuse or
 * that cannot be sized.
 */
export class ClientMessageReader {
  private phase: Phase = 'version';
  private pending: Buffer = Buffer.alloc(0);
  /** What the viewer's latest SetEncodings announced (each one replaces the last, as in Xvnc). */
  private encodings = new Set<number>();

  /** Whether the viewer's latest SetEncodings announced `encoding`. */
  announced(encoding: number): boolean {
    return this.encodings.has(encoding);
  }

  push(chunk: Buffer): ClientMessage[] {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const messages: ClientMessage[] = [];
    for (;;) {
      const size = this.sizeOfNext();
      if (size === null || this.pending.length < size) break;
      const bytes = Buffer.from(this.pending.subarray(0, size));
      this.pending = this.pending.subarray(size);
      messages.push(this.take(bytes));
    }
    return messages;
  }

  /** Bytes of the next message, or null while too few have arrived to tell. */
  private sizeOfNext(): number | null {
    const data = this.pending;
    switch (this.phase) {
      case 'version':
        return 12;
      case 'security':
      case 'init':
        return 1;
      case 'messages':
        return data.length === 0 ? null : sizeOf(data);
    }
  }

  private take(bytes: Buffer): ClientMessage {
    switch (this.phase) {
      case 'version': {
        const version = bytes.toString('latin1');
        if (!VERSIONS.has(version)) throw new RfbProtocolError(`unsupported RFB version ${JSON.stringify(version)}`);
        this.phase = version === 'RFB 003.003\n' ? 'init' : 'security';
        return { kind: 'handshake', bytes };
      }
      case 'security':
        if (bytes[0] !== SECURITY_NONE) throw new RfbProtocolError(`security type ${bytes[0]} is not offered`);
        this.phase = 'init';
        return { kind: 'handshake', bytes };
      case 'init':
        this.phase = 'messages';
        // ClientInit's flag: always shared, so no viewer can disconnect the others.
        return { kind: 'handshake', bytes: Buffer.from([1]) };
      case 'messages': {
        if (bytes[0] === MESSAGE.SetEncodings) {
          this.encodings = new Set(Array.from({ length: bytes.readUInt16BE(2) }, (_, index) => bytes.readInt32BE(4 + 4 * index)));
        }
        const needs = extensionOf(bytes);
        if (needs && !this.encodings.has(needs.encoding)) {
          throw new RfbProtocolError(`${needs.message} without announcing pseudo-encoding ${needs.encoding} in SetEncodings`);
        }
        return { kind: kindOf(bytes[0]!), bytes };
      }
    }
  }
}

/** The pseudo-encoding a whole client message needs announced first, or null for the core protocol's. */
function extensionOf(bytes: Buffer): { message: string; encoding: number } | null {
  switch (bytes[0]) {
    case MESSAGE.SetDesktopSize:
      return { message: 'SetDesktopSize', encoding: PSEUDO_ENCODING.ExtendedDesktopSize };
    case MESSAGE.ClientFence:
      return { message: 'ClientFence', encoding: PSEUDO_ENCODING.Fence };
    case MESSAGE.EnableContinuousUpdates:
      return { message: 'EnableContinuousUpdates', encoding: PSEUDO_ENCODING.ContinuousUpdates };
    case MESSAGE.QemuClientMessage:
      return { message: 'a QEMU extended key event', encoding: PSEUDO_ENCODING.QemuExtendedKeyEvent };
    case MESSAGE.ClientCutText:
      // A negative length is the extended clipboard's form.
      return bytes.readInt32BE(4) < 0 ? { message: 'an extended clipboard message', encoding: PSEUDO_ENCODING.ExtendedClipboard } : null;
    default:
      return null;
  }
}

/** The size of the client message at the start of `data` (at least one byte), or null if more is needed to tell. */
function sizeOf(data: Buffer): number | null {
  const type = data[0]!;
  const need = (bytes: number, read: () => number): number | null => (data.length < bytes ? null : read());
  switch (type) {
    case MESSAGE.SetPixelFormat:
      return 20;
    case MESSAGE.SetEncodings:
      return need(4, () => 4 + 4 * data.readUInt16BE(2));
    case MESSAGE.FramebufferUpdateRequest:
      return 10;
    case MESSAGE.KeyEvent:
      return 8;
    case MESSAGE.PointerEvent:
      return 6;
    case MESSAGE.ClientCutText:
      return need(8, () => {
        // A negative length is the extended clipboard's (its absolute value is the size).
        const length = Math.abs(data.readInt32BE(4));
        if (length > MAX_CUT_TEXT) throw new RfbProtocolError(`clipboard text of ${length} bytes is over the ${MAX_CUT_TEXT}-byte limit`);
        return 8 + length;
      });
    case MESSAGE.EnableContinuousUpdates:
      return 10;
    case MESSAGE.ClientFence:
      return need(9, () => 9 + data[8]!);
    case MESSAGE.SetDesktopSize:
      return need(7, () => 8 + 16 * data[6]!);
    case MESSAGE.QemuClientMessage:
      return need(2, () => {
        if (data[1] !== 0) throw new RfbProtocolError(`QEMU client message subtype ${data[1]} is not supported`);
        return 12;
      });
    default:
      throw new RfbProtocolError(`unknown RFB client message type ${type}`);
  }
}

function kindOf(type: number): ClientMessageKind {
  switch (type) {
    case MESSAGE.KeyEvent:
    case MESSAGE.QemuClientMessage:
      return 'key';
    case MESSAGE.PointerEvent:
      return 'pointer';
    case MESSAGE.ClientCutText:
      return 'clipboard';
    case MESSAGE.SetDesktopSize:
      return 'resize';
    default:
      return 'watch';
  }
}

/** True for a pointer message with a button (or wheel) pressed: a viewer taking control, not just passing over. */
export function pressesButton(message: ClientMessage): boolean {
  return message.kind === 'pointer' && (message.bytes[1]! & 0x7f) !== 0;
}

export interface DesktopSize {
  width: number;
  height: number;
}

/** The size a SetDesktopSize asks for, or null for a layout without screens. */
export function requestedSize(message: ClientMessage): DesktopSize | null {
  if (message.kind !== 'resize' || message.bytes[6] === 0) return null;
  return { width: message.bytes.readUInt16BE(2), height: message.bytes.readUInt16BE(4) };
}

/**
 * A SetDesktopSize for one screen filling `size`, keeping the id and flags of the first screen the
 * viewer sent (noVNC echoes the server's): what the bridge passes on after clamping.
 */
export function setDesktopSize(size: DesktopSize, from?: ClientMessage): Buffer {
  const message = Buffer.alloc(24);
  message.writeUInt8(MESSAGE.SetDesktopSize, 0);
  message.writeUInt16BE(size.width, 2);
  message.writeUInt16BE(size.height, 4);
  message.writeUInt8(1, 6);
  if (from && from.bytes.length >= 24) {
    message.writeUInt32BE(from.bytes.readUInt32BE(8), 8); // screen id
    message.writeUInt32BE(from.bytes.readUInt32BE(20), 20); // flags
  }
  message.writeUInt16BE(size.width, 16);
  message.writeUInt16BE(size.height, 18);
  return message;
}
