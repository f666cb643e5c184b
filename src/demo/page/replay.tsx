// The demo's replay page (`/replay.html?handle=`): <SessionReplay> for a session of the signed-in
// user, by the handle the launcher got, through the app's own proxy route, as a customer's app
// would show a recording (decisions.md 98: no replay link outside the app's sign-in).
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { isShareLanguage } from '../../protocol/languages.js';
import { RemoteBrowserProvider, SessionReplay } from '../../react/index.js';
import '../../react/styles.css';
import './demo.css';

const query = new URLSearchParams(window.location.search);
const handle = query.get('handle') ?? '';
const language = query.get('lang') ?? 'en';

createRoot(document.getElementById('replay')!).render(
  <StrictMode>
    <RemoteBrowserProvider endpoint="/api/remote-browser" language={isShareLanguage(language) ? language : 'en'}>
      <main className="demo">{handle ? <SessionReplay handle={handle} style={{ maxWidth: 960 }} /> : <p>Open this page with ?handle= of a session.</p>}</main>
    </RemoteBrowserProvider>
  </StrictMode>,
);
