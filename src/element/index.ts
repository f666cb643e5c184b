// remote-browser-kit/element: a share link's viewer in any web page, without React (issue 44):
// `<remote-browser-viewer src="…">` (defined when this module loads in a browser) and `embed()`,
// both speaking the framed viewer's message API (src/protocol/embed-messages.ts).
import { defineRemoteBrowserViewer } from './remote-browser-viewer.js';

export { defineRemoteBrowserViewer, ELEMENT_NAME } from './remote-browser-viewer.js';
export { embed, FramedViewer, framedViewerUrl, VIEWER_FRAME_ALLOW, type EmbedEventListener, type FramedViewerOptions } from './framed-viewer.js';
export { EMBED_MESSAGE_VERSION, type EmbedCommand, type EmbedEvent } from '../protocol/embed-messages.js';

defineRemoteBrowserViewer();
