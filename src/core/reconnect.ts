// The live screen's reconnect policy, apart from the transport it retries (as neko's reconnector):
// a dropped connection is tried again with back-off, or every moment while the session is still
// starting behind the waiting screen. The UI only reads its state (subscribe/getState).
import { Subscribable } from './subscribable.js';
import { retryDelay } from './viewer-state.js';

/** What a transport does; it reports back with `connected()`, `dropped()` and `failed()`. */
export interface ReconnectTransport {
  /** Opens a connection, replacing any open one. */
  connect(): void;
  /** Closes the connection, if any; it reports no drop for that. */
  disconnect(): void;
}

export type ConnectionState = 'connecting' | 'connected' | 'reconnecting';

export interface ReconnectSnapshot {
  connection: ConnectionState;
  /** When the next try happens (epoch ms); `null` while none is due. */
  reconnectAt: number | null;
}

/** While the session starts, the viewer connects behind the waiting screen and retries this often. */
export const PRECONNECT_RETRY_MS = 300;

export class ReconnectPolicy extends Subscribable<ReconnectSnapshot> {
  #transport: ReconnectTransport | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Tries since the last connection. */
  #attempt = 0;
  #preconnecting = false;

  constructor() {
    super({ connection: 'connecting', reconnectAt: null });
  }

  /** Connects through `transport` (closing whatever was open before) and keeps it connected. */
  open(transport: ReconnectTransport): void {
    this.close();
    this.#transport = transport;
    transport.connect();
  }

  /** Closes the connection and stops retrying. */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#transport?.disconnect();
    this.#transport = null;
  }

  /** The transport is connected. */
  connected(): void {
    this.#attempt = 0;
    this.update({ connection: 'connected', reconnectAt: null });
  }

  /** The connection dropped or could not be made: try again after the policy's wait. */
  dropped(): void {
    if (!this.#transport) return;
    // Behind the waiting screen the display may simply not be up yet: try again soon.
    const wait = this.#preconnecting ? PRECONNECT_RETRY_MS : retryDelay(this.#attempt);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#retry(), wait);
    this.update({ connection: 'reconnecting', reconnectAt: Date.now() + wait });
  }

  /** The transport cannot work at all (its code did not load): shown as reconnecting, tried again only when shown. */
  failed(): void {
    this.update({ connection: 'reconnecting' });
  }

  /**
   * Whether the session is still starting behind the waiting screen (quick retries). Shown at
   * last, a connection waiting to retry tries now.
   */
  setPreconnecting(preconnecting: boolean): void {
    this.#preconnecting = preconnecting;
    if (!preconnecting && this.getState().connection === 'reconnecting') this.#retry();
  }

  #retry(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const transport = this.#transport;
    if (!transport) return;
    this.#attempt += 1;
    transport.disconnect();
    transport.connect();
  }
}
