// Follows one of the share API's WebSocket channels of JSON messages (editing, files, people),
// without React and without touching the DOM at import: the socket opened, each message decoded
// (text, or the same as bytes when another node relays it) and parsed, the socket opened again
// after a drop, and stopped for good on request.
import { shareApiUrl } from '../protocol/share-api.js';

export interface ShareChannelFollower<T> {
  /** Reads one message; null: not one of this channel's, ignored. */
  parse(text: string): T | null;
  onMessage(message: T): void;
  /** Each time the socket opens (say hello here); `send` writes on it. */
  onOpen?(send: (text: string) => void): void;
  /** The connection dropped, or was refused before opening (never after `stop()`). */
  onDrop?(): void;
  /** How long to wait before opening again: always the same, or one per drop in a row (the last repeats). Default 2 s. */
  retryMs?: number | readonly number[];
  /**
   * Open again after a refusal before the socket opened too. Default: a refusal (a view-only link,
   * an unknown link: 403 before the socket opens) ends it for good.
   */
  retryRefused?: boolean;
}

export interface ShareChannelFollow {
  /** Writes one message if the socket is open now; false if not (nothing is queued). */
  send(text: string): boolean;
  /** Closes the socket and opens no other. */
  stop(): void;
}

export function followShareChannel<T>(shareBase: string, linkId: string, route: 'editing' | 'files' | 'people', follower: ShareChannelFollower<T>): ShareChannelFollow {
  let socket: WebSocket | null = null;
  let stopped = false;
  let dropsInARow = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const retry = follower.retryMs ?? 2000;
  const waitBeforeNext = () => (typeof retry === 'number' ? retry : retry[Math.min(dropsInARow - 1, retry.length - 1)] ?? 2000);
  const decoder = new TextDecoder();
  const send = (text: string) => {
    if (socket?.readyState !== WebSocket.OPEN) return false;
    socket.send(text);
    return true;
  };
  const open = () => {
    if (stopped) return;
    let opened = false;
    const current = new WebSocket(shareApiUrl(shareBase, linkId, route));
    socket = current;
    current.binaryType = 'arraybuffer';
    current.onopen = () => {
      opened = true;
      dropsInARow = 0;
      follower.onOpen?.(send);
    };
    current.onmessage = (event) => {
      const text = typeof event.data === 'string' ? event.data : decoder.decode(event.data as ArrayBuffer);
      const message = follower.parse(text);
      if (message !== null) follower.onMessage(message);
    };
    current.onclose = () => {
      if (stopped || socket !== current) return;
      socket = null;
      follower.onDrop?.();
      // Never opened: refused (view-only, unknown link) or unreachable; opened: try again.
      if (!opened && !follower.retryRefused) return;
      dropsInARow += 1;
      timer = setTimeout(open, waitBeforeNext());
    };
  };
  open();
  return {
    send,
    stop() {
      stopped = true;
      clearTimeout(timer);
      socket?.close();
      socket = null;
    },
  };
}
