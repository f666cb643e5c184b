// What a session is started with (runtime.ts startSession): its browser, first page, language,
// zone, layout, size, exit, the saved profile it starts on, and whether it is recorded.
import type { ProfileRestore } from './session-profile.js';
import type { SessionEnds } from './session/session-ends.js';

/** Where a session is recorded, and who hears of its recorder (to stop it while the session runs on: a plan's cap, decisions.md 131). */
export interface RecordingSpec {
  dir: string;
  /** Called with the recorder once it runs: closing it ends the recording (the file is whole), the session goes on. */
  started?: (recorder: { close(): Promise<void> }) => void;
}

export interface SessionSpec {
  /** An image id from the catalog, e.g. `chromium`, `firefox-esr`. */
  browser: string;
  /** First page; http or https. Without it the browser shows a blank page. */
  url?: string;
  /** Browser interface language, e.g. `en`, `de`: one the image can show, exactly or nearly (locales.ts). */
  language: string;
  /** IANA time zone the browser keeps (its exit's); default the runtime's `timeZone`. */
  timeZone?: string;
  /** X keyboard layout, e.g. `us`, `de`. */
  layout: string;
  width?: number;
  height?: number;
  /** Send this session's traffic through an upstream proxy (exit locations, residential). */
  upstreamProxyUrl?: string;
  /** Aborting ends the start at once (the session was removed while starting). */
  signal?: AbortSignal;
  /** Record the session (issue 35): its picture and sound go to `media.mkv` in `dir`, the engine's own directory. */
  recording?: RecordingSpec;
  /**
   * Called once the display is up, before the browser is, with the session's ends so far (viewers
   * may connect early) and its runtime id (its events may come before the start resolves).
   */
  onEnds?: (ends: SessionEnds, runtimeId: string) => void;
  /**
   * `app`: the browser fills the display without its own tab strip and address bar (kiosk mode);
   * the viewer's tab strip is how tabs are seen and switched (decisions.md 104). Launched for the
   * session: it takes a warm display, never a warm browser. Default `browser`.
   */
  window?: 'browser' | 'app';
  /**
   * Programs may drive the session (`automation: true`, decisions.md 143): a Firefox ESR session
   * starts its remote agent (WebDriver BiDi; the same policies, decisions.md 155), and its
   * pages read `navigator.webdriver === true`. Launched for the session: it takes a warm display,
   * never a warm browser. Chromium's DevTools end runs either way.
   */
  automation?: boolean;
  /** A saved profile to start on (decisions.md 89): the session takes a warm display, never a warm browser. */
  profile?: ProfileRestore;
}
