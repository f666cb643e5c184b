// The viewer site's share-link page (/<lang>/s?<link_id>): <ShareViewer> filling the window.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ShareViewer } from '../../../react/ShareViewer.js';
import '../../../react/styles.css';
import './site.css';

const element = document.getElementById('viewer')!;
const language = element.ownerDocument.location.pathname.split('/').at(-2);
if (language) document.documentElement.lang = language;
createRoot(element).render(
  <StrictMode>
    <ShareViewer shareUrl={window.location.href} onStateChange={(state) => (document.title = `Remote browser · ${state}`)} />
  </StrictMode>,
);
