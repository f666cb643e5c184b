// What a session has on the node that runs it for the channels to open their ends in (the engine's
// channels, src/engine/channels/): its display from the moment it exists, the encoders that run
// while someone is connected (video, sound), and, once its browser runs, the browser's DevTools
// end (DevTools or WebDriver BiDi) and its files. The runtime says what a session has; a channel picks what it carries, and the
// service in between passes it on without looking inside.
import type { Display } from '../display/display.js';
import type { SessionSound } from '../capture/sound.js';
import type { SessionVideo } from '../capture/video.js';
import { SessionFiles } from './session-files.js';
import type { SessionSlot } from './slot.js';
import type { BrowserControl } from '../browser/control.js';
import type { SessionTabs } from '../browser/tabs.js';
import type { BiDiHubClient } from '../browser/bidi-hub.js';

export type { BiDiHubClient };

/** Where a session may read and write files, as its browser sees them. */
export interface SessionFolders {
  downloads: string;
  uploads: string;
}

/** How the browser end of a running session is reached over DevTools (the automation channel). */
export interface SessionDevTools {
  /** The browser-level DevTools address (browser/browser.ts): `ws+unix:` through a relay inside a confined session. */
  url: string;
  /** The session's folders as its browser sees them. */
  folders: SessionFolders;
  /** Whether a DevTools target is the engine's own connection (its guard): hidden from programs, never attached to. */
  isEngineTarget(targetId: string): boolean;
}

/** How the browser end of a running Firefox session is reached over WebDriver BiDi (the automation channel; decisions.md 143). */
export interface SessionBiDi {
  /** The remote agent's WebSocket address (browser/browser.ts): `ws+unix:` through a relay inside a confined session. */
  url: string;
  /** The Host header the agent takes (its own address inside the session). */
  host: string;
  /** The session's folders as its browser sees them. */
  folders: SessionFolders;
  /**
   * A session of the caller's own on the agent's one BiDi session, which the browser's hub shares
   * among programs and the engine's tab watcher (browser/bidi-hub.ts, decisions.md 169): `deliver`
   * hears answers and subscribed events, `lost` that the browser's connection closed.
   */
  join(deliver: (text: string) => void, lost: () => void): BiDiHubClient;
}

/** Whether a text field in the session's browser has the keyboard focus, and its changes (browser/editing-watch.ts). */
export interface SessionEditing {
  now(): boolean;
  /** Calls `listener` with each change; returns how to stop. */
  follow(listener: (editing: boolean) => void): () => void;
}

/**
 * A session's ends on this node. A starting session has its display and encoders before its
 * browser, so viewers may connect early; the browser's ends come with the browser.
 */
export interface SessionEnds {
  display: Display;
  /** The display's video encoder (runs while someone watches); null where this node offers no video. */
  video: SessionVideo | null;
  /** The session's sound server and encoder; null when sound is off, or its server could not start or was lost. */
  sound: SessionSound | null;
  /** The browser's DevTools end (Chromium family, once running); null otherwise. */
  devtools: SessionDevTools | null;
  /** The browser's WebDriver BiDi end (Firefox, once running); absent or null otherwise. */
  bidi?: SessionBiDi | null;
  /** The session's files, read and written by a program inside it (once its browser runs); null before. */
  files: SessionFiles | null;
  /** Whether a text field has the focus (Chromium family, once running; issue 36); absent or null otherwise. */
  editing?: SessionEditing | null;
  /** The browser's tabs (issue 36): listed, watched and switched by the share API; null before the browser runs, and for a Firefox in a browser window. */
  tabs: SessionTabs | null;
}

/** The ends of a slot as it is now: the browser's only once it has joined. */
export function endsOfSlot(slot: SessionSlot): SessionEnds {
  const browser = slot.browser;
  const sandbox = slot.sandbox;
  const url = browser?.process.devtoolsUrl;
  const agent = browser?.process.bidi;
  const folders = { downloads: `${sandbox.dir}/downloads`, uploads: `${sandbox.dir}/uploads` };
  return {
    display: slot.display,
    video: slot.video,
    sound: slot.sound,
    devtools: url
      ? {
          url,
          folders,
          // Asked each time: the guard's connection is a new target after each re-arm.
          isEngineTarget: (targetId) => browser.control?.isOwnTarget(targetId) ?? false,
        }
      : null,
    bidi: agent ? { url: agent.url, host: agent.host, folders, join: (deliver, lost) => agent.hub.join(deliver, lost) } : null,
    files: browser ? new SessionFiles(sandbox) : null,
    editing: browser?.control ? editingOf(browser.control) : null,
    tabs: browser?.tabs ?? null,
  };
}

/** The editing end of a browser's DevTools control. */
function editingOf(control: BrowserControl): SessionEditing {
  return {
    now: () => control.editing,
    follow(listener) {
      const told = ({ editing }: { editing: boolean }) => listener(editing);
      control.on('editing', told);
      return () => control.off('editing', told);
    },
  };
}
