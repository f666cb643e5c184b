// A controlling viewer's side of the editing channel (issue 36), without React and without touching
// the DOM at import: whether a text field in the session's browser has the keyboard focus, as the
// engine tells it, followed across drops (the phone's keyboard opens on it: useTouchKeyboard.ts).
import { parseEditingMessage } from '../protocol/editing.js';
import { followShareChannel } from './share-channel.js';

/**
 * Calls `onEditing` with each state the engine tells (JSON text, or the same as bytes through
 * another node), and `false` when the connection drops (nothing is known then). A dropped
 * connection is made again after `retryMs`; a refusal (403 before the socket opens) or `stop()`
 * ends it for good.
 */
export function followRemoteEditing(shareBase: string, linkId: string, onEditing: (editing: boolean) => void, retryMs = 2000): () => void {
  const follow = followShareChannel(shareBase, linkId, 'editing', {
    parse: parseEditingMessage,
    onMessage: (message) => onEditing(message.editing),
    onDrop: () => onEditing(false),
    retryMs,
  });
  return follow.stop;
}
