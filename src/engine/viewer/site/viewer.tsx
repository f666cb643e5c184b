// The viewer site's share-link page (/<lang>/s?<link_id>): <ShareViewer> filling the window.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ShareViewer } from '../../../react/ShareViewer.js';
import '../../../react/styles.css';
import './site.css';
import { shareLinkOptions } from '../../../protocol/share.js';

const element = document.getElementById('viewer')!;
// In another site's iframe: the message API to the page around it (issue 44), loaded only there
// (it carries the schemas that check the page's messages).
// Leaving there closes the viewer (every connection ends) and tells the page, which decides where to go.
const embedded = window.parent === window ? null : (await import('./embed.js')).embedHooks(window, { close: () => root.unmount() });
const options = shareLinkOptions(window.location.href);
const language = element.ownerDocument.location.pathname.split('/').at(-2);
if (language) document.documentElement.lang = language;
const root = createRoot(element);
root.render(
  <StrictMode>
    <ShareViewer
      shareUrl={window.location.href}
      // The embedder's options after the link id (issue 44): `&chrome=compact`, `&toolbar=full|compact|none` (the one row when absent), `&view-only`.
      chrome={options.chrome}
      toolbar={options.toolbar}
      viewOnly={options.viewOnly}
      {...embedded}
      onStateChange={(state) => {
        document.title = `Remote browser · ${state}`;
        embedded?.onStateChange(state);
      }}
    />
  </StrictMode>,
);
