// A controlling viewer's side of the editing channel (issue 36), without React and without touching
// the DOM at import: whether a text field in the session's browser has the keyboard focus, as the
// engine tells it, followed across drops (the phone's keyboard opens on it: useTouchKeyboard.ts).
import { parseEditingMessage } from '../protocol/editing.js';
import { shareApiUrl } from '../protocol/share-api.js';

/**
 * Calls `onEditing` with each state the engine tells (JSON text, or the same as bytes through
 * another node), and `false` when the connection drops (nothing is known then). A dropped
 * connection is made again after `retryMs`; a refusal (403 before the socket opens) or `stop()`
 * ends it for good.
 */
export function followRemoteEditing(shareBase: string, linkId: string, onEditing: (editing: boolean) => void, retryMs = 2000): () => void {
  let socket: WebSocket | null = null;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const open = () => {
    if (stopped) return;
    let opened = false;
    socket = new WebSocket(shareApiUrl(shareBase, linkId, 'editing'));
    socket.binaryType = 'arraybuffer';
    socket.onopen = () => (opened = true);
    socket.onmessage = (event) => {
      const text = typeof event.data === 'string' ? event.data : new TextDecoder().decode(event.data as ArrayBuffer);
      const message = parseEditingMessage(text);
      if (message) onEditing(message.editing);
    };
    socket.onclose = () => {
      if (stopped) return;
      onEditing(false);
      if (opened) timer = setTimeout(open, retryMs);
    };
  };
  open();
  return () => {
    stopped = true;
    clearTimeout(timer);
    socket?.close();
  };
}
