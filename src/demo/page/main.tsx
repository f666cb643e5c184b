// The demo page: the launcher, the usage meters and an embedded viewer, as a customer's app
// would put them together, talking only to its own proxy route.
import { StrictMode, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { RemoteBrowserProvider, SessionLauncher, ShareViewer, UsageMeters } from '../../react/index.js';
import '../../react/styles.css';
import './demo.css';

function Demo() {
  const [shareUrl, setShareUrl] = useState<string | null>(null);
  const [running, setRunning] = useState(false);
  return (
    <RemoteBrowserProvider endpoint="/api/remote-browser" language="en">
      <main className="demo">
        <header className="demo__header">
          <h1>remote-browser-kit demo</h1>
          <p>A real browser, started on demand, watched and driven from this page, shared by link.</p>
        </header>
        <div className="demo__columns">
          <div className="demo__side">
            <SessionLauncher
              defaultUrl={`${window.location.origin}/welcome`}
              onSessionChange={(session) => {
                setShareUrl(session.shareUrl ?? null);
                setRunning(session.status === 'running');
              }}
              onOpenViewer={(url) => window.open(url, '_blank', 'noopener,noreferrer')}
            />
            <UsageMeters />
          </div>
          <section className="demo__viewer" aria-label="Embedded viewer">
            {shareUrl ? <ShareViewer key={shareUrl} shareUrl={shareUrl} onLeave={() => setShareUrl(null)} /> : <p className="demo__empty">{running ? '' : 'Start a session: it appears here.'}</p>}
          </section>
        </div>
      </main>
    </RemoteBrowserProvider>
  );
}

createRoot(document.getElementById('demo')!).render(
  <StrictMode>
    <Demo />
  </StrictMode>,
);
