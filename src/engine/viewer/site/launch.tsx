// The viewer site's launch page (/): where leaving goes when a session has no callbackUrl.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import '../../../react/styles.css';
import './site.css';

function LaunchPage() {
  return (
    <main className="rbk-root rbk-viewer">
      <div className="rbk-viewer__panel">
        <h1 className="rbk-viewer__title">Remote browser</h1>
        <p className="rbk-viewer__detail">
          You have left the session. To start a new one, go back to the application that shared the link with you.
        </p>
      </div>
    </main>
  );
}

createRoot(document.getElementById('launch')!).render(
  <StrictMode>
    <LaunchPage />
  </StrictMode>,
);
