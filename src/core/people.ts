// The viewer's `people` connection (issue 36), framework-free: who watches the session and who
// drives, where the driver's pointer is, and the viewer's own requests (ask, cancel, give,
// release, take). It makes the viewer key once (its RFB connection passes the same key, so
// its keys count as its own), reconnects after a drop (share-channel.ts), and says hello again each time.
import type { ControlClientMessage, ControlPicture, ControlServerMessage } from '../protocol/control.js';
import { followShareChannel, type ShareChannelFollow } from './share-channel.js';
import { Subscribable } from './subscribable.js';

export interface PeopleSnapshot {
  picture: ControlPicture | null;
  /** The driver's pointer on the display, in display pixels (`one` mode). */
  pointer: { x: number; y: number } | null;
  /** The engine's last refusal of this viewer's request. */
  refused: string | null;
}

/** A viewer key: 128 random bits, base64url. */
export function makeViewerKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const RETRY_MS = [1000, 2000, 5000, 10_000];

/** Reads one of the engine's people messages; null for anything else. */
function parsePeopleMessage(text: string): ControlServerMessage | null {
  try {
    const message = JSON.parse(text) as ControlServerMessage | null;
    return message && typeof message === 'object' && ['control', 'pointer', 'refused'].includes(message.type) ? message : null;
  } catch {
    return null;
  }
}

export class PeopleConnection extends Subscribable<PeopleSnapshot> {
  readonly viewerKey = makeViewerKey();
  private follow: ShareChannelFollow | null = null;

  constructor(private readonly options: { shareBase: string; linkId: string; pass?: string | undefined }) {
    super({ picture: null, pointer: null, refused: null });
  }

  /** Connects (again after `close()`: the same viewer key, so the same person). */
  open(): void {
    if (this.follow) return;
    this.follow = followShareChannel(this.options.shareBase, this.options.linkId, 'people', {
      parse: parsePeopleMessage,
      onOpen: (send) => send(JSON.stringify({ type: 'hello', viewerKey: this.viewerKey, ...(this.options.pass ? { pass: this.options.pass } : {}) } satisfies ControlClientMessage)),
      onMessage: (message) => {
        if (message.type === 'control') this.update({ picture: message, ...(message.driver === null ? { pointer: null } : {}) });
        else if (message.type === 'pointer') this.update({ pointer: { x: message.x, y: message.y } });
        else this.update({ refused: message.message });
      },
      retryMs: RETRY_MS,
      // The door's seats may free up and a session that was not running yet may run: keep asking.
      retryRefused: true,
    });
  }

  send(message: ControlClientMessage): void {
    if (message.type !== 'hello') this.update({ refused: null });
    this.follow?.send(JSON.stringify(message));
  }

  close(): void {
    this.follow?.stop();
    this.follow = null;
  }
}
