// The viewer's `people` connection (issue 36), framework-free: who watches the session and who
// drives, where the driver's pointer is, and the viewer's own requests (ask, cancel, give,
// release, take). It makes the viewer's seat key once (its RFB connection passes the same key, so
// its keys count as its own), reconnects after a drop, and says hello again each time.
import type { ControlClientMessage, ControlPicture, ControlServerMessage } from '../protocol/control.js';
import { shareApiUrl } from '../protocol/share-api.js';
import { Subscribable } from './subscribable.js';

export interface PeopleSnapshot {
  picture: ControlPicture | null;
  /** The driver's pointer on the display, in display pixels (`one` mode). */
  pointer: { x: number; y: number } | null;
  /** The engine's last refusal of this viewer's request. */
  refused: string | null;
}

/** A seat key: 128 random bits, base64url. */
export function makeSeatKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const RETRY_MS = [1000, 2000, 5000, 10_000];

export class PeopleConnection extends Subscribable<PeopleSnapshot> {
  readonly seat = makeSeatKey();
  private socket: WebSocket | null = null;
  private closed = false;
  private attempts = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly options: { shareBase: string; linkId: string; pass?: string | undefined }) {
    super({ picture: null, pointer: null, refused: null });
  }

  open(): void {
    if (this.closed || this.socket) return;
    const socket = new WebSocket(shareApiUrl(this.options.shareBase, this.options.linkId, 'people'));
    this.socket = socket;
    socket.onopen = () => {
      this.attempts = 0;
      this.send({ type: 'hello', seat: this.seat, ...(this.options.pass ? { pass: this.options.pass } : {}) });
    };
    socket.onmessage = (event) => {
      let message: ControlServerMessage;
      try {
        message = JSON.parse(String(event.data)) as ControlServerMessage;
      } catch {
        return;
      }
      if (message.type === 'control') this.update({ picture: message, ...(message.driver === null ? { pointer: null } : {}) });
      else if (message.type === 'pointer') this.update({ pointer: { x: message.x, y: message.y } });
      else if (message.type === 'refused') this.update({ refused: message.message });
    };
    socket.onclose = () => {
      this.socket = null;
      if (this.closed) return;
      const wait = RETRY_MS[Math.min(this.attempts++, RETRY_MS.length - 1)]!;
      this.timer = setTimeout(() => this.open(), wait);
    };
  }

  send(message: ControlClientMessage): void {
    if (message.type !== 'hello') this.update({ refused: null });
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.socket?.close();
    this.socket = null;
  }
}
