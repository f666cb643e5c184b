// The browser's WebSocket for component tests, over `ws`: jsdom's window has Node's own WebSocket
// (undici), which dispatches events that jsdom's Event class does not accept, so every socket a
// component opened (the viewer's picture, sound and files channels) threw in the test run. Set up
// for every component test in setup.ts; a test may still stand in a socket of its own.
import { WebSocket as NodeWebSocket } from 'ws';

/**
 * The browser's WebSocket over `ws`: Node's own WebSocket, which jsdom's window has, dispatches
 * events that jsdom's Event class does not accept. A refused upgrade closes without opening, as in
 * a browser.
 */
export class BrowserWebSocket {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;
  binaryType: BinaryType = 'blob';
  onopen: ((event: object) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;
  onerror: ((event: object) => void) | null = null;
  readonly #socket: NodeWebSocket;
  constructor(readonly url: string, protocols?: string | string[]) {
    this.#socket = new NodeWebSocket(url, protocols);
    this.#socket.on('open', () => this.onopen?.({}));
    this.#socket.on('message', (data: Buffer, binary: boolean) =>
      this.onmessage?.({ data: binary ? data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) : data.toString('utf8') }),
    );
    this.#socket.on('error', () => this.onerror?.({}));
    this.#socket.on('close', (code: number, reason: Buffer) => this.onclose?.({ code, reason: reason.toString('utf8') }));
  }
  get readyState(): number {
    return this.#socket.readyState;
  }
  get protocol(): string {
    return this.#socket.protocol;
  }
  send(data: string | ArrayBufferLike): void {
    this.#socket.send(data);
  }
  close(code?: number, reason?: string): void {
    this.#socket.close(code, reason);
  }
}
