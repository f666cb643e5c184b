// The viewer site's replay page (/replay/<token>, decisions.md 110): <SessionReplay> playing the
// recording the link's token opens, from the link's own API on this origin, in the first of the
// browser's languages that the components speak (else English). No sign-in: the token is the key.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { isShareLanguage, type ShareLanguage } from '../../../protocol/languages.js';
import { RemoteBrowserProvider } from '../../../react/RemoteBrowserProvider.js';
import { SessionReplay } from '../../../react/SessionReplay.js';
import { resources } from '../../../react/i18n.js';
import '../../../react/styles.css';
import './site.css';

const language: ShareLanguage = navigator.languages.map((tag) => tag.slice(0, 2).toLowerCase()).find(isShareLanguage) ?? 'en';
document.documentElement.lang = language;
document.title = resources[language].replay.title;
// The page's own path is the link: its API is under it (`/recording`, `/media`).
const link = window.location.pathname.replace(/\/+$/, '');

createRoot(document.getElementById('replay')!).render(
  <StrictMode>
    <RemoteBrowserProvider endpoint={link} language={language}>
      <main className="rbk-replay-page">
        <SessionReplay link={link} />
      </main>
    </RemoteBrowserProvider>
  </StrictMode>,
);
