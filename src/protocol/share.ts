// Share links (`/<lang>/s?<link_id>`, and v7's `/s?<link_id>`) and the viewer state the share API reports, so the viewer
// site, the engine and the components read and write them the same way.
import { DEFAULT_SHARE_LANGUAGE, SHARE_LANGUAGES, isShareLanguage, type ShareLanguage } from './languages.js';
import type { SessionStatus } from './statuses.js';
import type { ShareTab } from './tabs.js';
import type { Driver } from './control.js';

/** Link ids are base64url. */
const LINK_ID_PATTERN = /^[A-Za-z0-9_-]+$/;

export interface ShareLink {
  language: ShareLanguage;
  linkId: string;
}

/** `/<lang>/s?<link_id>`; with `null`, v7's form without a language segment, `/s?<link_id>` (English). */
export function shareLinkPath(language: ShareLanguage | null, linkId: string): string {
  return language === null ? `/s?${linkId}` : `/${language}/s?${linkId}`;
}

/**
 * Reads a full share link or its path. The segment before `s` is the viewer language; a missing
 * segment (v7's `/s?<link_id>`) or an unknown one means `en`. The link id is the query up to the
 * first `&`: what follows are the embedder's options (`&chrome=compact`, `&view-only`; issue 44).
 * Anything else gives `null`.
 */
export function parseShareLink(urlOrPath: string): ShareLink | null {
  let address: URL;
  try {
    // The base only lets a bare path parse; a full link keeps its own origin.
    address = new URL(urlOrPath, 'http://share.invalid');
  } catch {
    return null;
  }
  const segments = address.pathname.split('/');
  const linkId = address.search.slice(1).split('&')[0]!;
  if (segments.at(-1) !== 's' || !LINK_ID_PATTERN.test(linkId)) return null;
  const segment = segments.at(-2);
  return { language: isShareLanguage(segment) ? segment : DEFAULT_SHARE_LANGUAGE, linkId };
}

/** The share base of a full share link: everything before `/<lang>/s` (or `/s`). */
export function shareBaseOf(url: string): string | null {
  let address: URL;
  try {
    address = new URL(url);
  } catch {
    return null;
  }
  const path = address.pathname.replace(/\/(?:[a-z]{2}\/)?s$/, '');
  if (path === address.pathname) return null;
  return `${address.origin}${path}`;
}

/** Only http and https: anything else (javascript:, file:, ftp:) could act on the viewer or the host. */
export function isWebAddress(value: string): boolean {
  try {
    const address = new URL(value);
    return (address.protocol === 'http:' || address.protocol === 'https:') && address.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * The viewer's chrome (issue 44): `full`, or `compact` (the waiting screen without its
 * explanation and elapsed seconds), as a share link's `&chrome=` option names it.
 */
export type ViewerChrome = 'full' | 'compact';

/**
 * The live screen's toolbar (issue 44, decisions.md 153, 180): `compact` (the default: one row;
 * the rest behind "More"; on a phone one floating button that opens them), `full` (every control
 * laid out, in rows on a wide viewer), `none` (the page around the viewer gives the commands
 * through the message API), as `&toolbar=` names it.
 */
export type ViewerToolbarChoice = 'full' | 'compact' | 'none';
export const VIEWER_TOOLBARS: readonly ViewerToolbarChoice[] = ['full', 'compact', 'none'];
/** What every viewer shows when its embedder chose nothing: the one row (decisions.md 180). */
export const DEFAULT_VIEWER_TOOLBAR: ViewerToolbarChoice = 'compact';

/** A toolbar choice, or `undefined` for anything else (an attribute or option the embedder left out or misspelt). */
export function viewerToolbarChoice(value: unknown): ViewerToolbarChoice | undefined {
  return VIEWER_TOOLBARS.find((choice) => choice === value);
}

/** The embedder's options after a share link's id: `&chrome=compact`, `&toolbar=full|compact|none`, `&view-only` (watch, whatever the link allows). */
export function shareLinkOptions(urlOrPath: string): { chrome: ViewerChrome; toolbar: ViewerToolbarChoice; viewOnly: boolean } {
  const query = urlOrPath.includes('?') ? urlOrPath.slice(urlOrPath.indexOf('?') + 1).split('#')[0]! : '';
  const options = new URLSearchParams(query.split('&').slice(1).join('&'));
  const toolbar = viewerToolbarChoice(options.get('toolbar')) ?? DEFAULT_VIEWER_TOOLBAR;
  return { chrome: options.get('chrome') === 'compact' ? 'compact' : 'full', toolbar, viewOnly: options.has('view-only') };
}

/** What the viewer shows: waiting screen, live session, ended screen, or "link gone". */
export const VIEWER_STATES = ['waiting', 'running', 'ended', 'gone'] as const;
export type ViewerStateName = (typeof VIEWER_STATES)[number];

export interface ViewerState {
  state: ViewerStateName;
  language: ShareLanguage;
  browserName: string;
  /** The session's `callbackUrl`; `null` sends the viewer back to the service's launch page. */
  leaveUrl: string | null;
  /** Whether this link lets its holder control the session (false: a view-only link). */
  control?: boolean;
  /** Viewers connected to the session now (every link together). */
  viewers?: number;
  /**
   * The channels the share API offers this link's session, by name (`{"sound": true, "people":
   * true}`; decisions.md 150): under one field, so no channel's name can stand for a field of the
   * state. Absent: an engine before it, which said them as the top-level flags below.
   */
  channels?: Record<string, true>;
  /** @deprecated Read `channels.sound` (`offersChannel`): said at the top level too for one version (decisions.md 150). Whether the session has sound. */
  sound?: boolean;
  /** @deprecated Read `channels.video` (`offersChannel`): said at the top level too for one version (decisions.md 150). Whether the engine offers the display's motion as video (issue 25). */
  video?: boolean;
  /** Whether the session is being recorded (issue 35): the viewer says so; absent means false. */
  recording?: boolean;
  /**
   * Whether the running session is in standby (issue 46): its processes frozen with nothing
   * attached. The viewer's connection wakes it first; meanwhile the viewer says "waking up…".
   * Absent means awake.
   */
  standby?: boolean;
  /**
   * Why the session ended, when it ended because it could not be woken from standby or resumed
   * from hibernation (decisions.md 166), in the engine's words (English); absent otherwise.
   */
  reason?: string;
  /** @deprecated Read `channels.editing` (`offersChannel`): said at the top level too for one version (decisions.md 150). Whether the engine tells this link's viewer when a text field has the focus (issue 36). */
  editing?: boolean;
  /**
   * The remote browser's tabs (issue 36, protocol/tabs.ts), in the order they opened; absent when
   * the engine cannot tell them (the session is not running, or runs Firefox ESR in a browser window).
   */
  tabs?: ShareTab[];
  /**
   * Whether the session's browser is an app window (`window: "app"`, decisions.md 104): it shows
   * no tab strip and no address bar of its own, so the viewer's tab strip shows the shown tab's
   * address, which a link that may drive edits (`{action:"go"}`, issue 44). Absent: a browser window.
   */
  appWindow?: true;
  /** @deprecated Read `channels.people` (`offersChannel`): said at the top level too for one version (decisions.md 150). Whether the share API offers `people` (issue 36). */
  people?: boolean;
  /** `one` while one person drives at a time (issue 36, src/protocol/control.ts); absent: everyone with the share link controls. */
  controlMode?: 'one';
  /** In `one` mode: who drives now, or null while nobody does. */
  driver?: Driver | null;
  /**
   * The origins that may frame this link's page (issue 44, decisions.md 134); absent: none. A
   * framed viewer talks only to the one of them that framed it (protocol/embed-messages.ts).
   */
  frameOrigins?: string[];
}

/**
 * The channels an engine before `channels` (decisions.md 150) said as top-level flags of the
 * state, and this version still says there too, for one version; no other channel is said there.
 */
export const FORMER_CHANNEL_FLAGS = ['sound', 'video', 'editing', 'people'] as const;

/** Whether the state says its link's session is offered the channel `name` (from an engine before `channels`: its top-level flag). */
export function offersChannel(state: ViewerState | null | undefined, name: string): boolean {
  if (!state) return false;
  if (state.channels) return Object.hasOwn(state.channels, name) && state.channels[name] === true;
  return (FORMER_CHANNEL_FLAGS as readonly string[]).includes(name) && (state as unknown as Record<string, unknown>)[name] === true;
}

/** Checks a share API answer without the schema library (the viewer loads in any page). */
export function isViewerState(value: unknown): value is ViewerState {
  const v = value as Partial<ViewerState> | null;
  return (
    typeof v === 'object' && v !== null &&
    (VIEWER_STATES as readonly unknown[]).includes(v.state) &&
    (SHARE_LANGUAGES as readonly unknown[]).includes(v.language) &&
    typeof v.browserName === 'string' &&
    (v.leaveUrl === null || typeof v.leaveUrl === 'string')
  );
}

/** The screen a share link shows for a session status (decisions.md 9). */
export function viewerStateFor(status: SessionStatus): ViewerStateName {
  switch (status) {
    case 'starting':
      return 'waiting';
    case 'running':
      return 'running';
    case 'deleted':
      return 'gone';
    case 'error':
    case 'stopping':
    case 'suspended':
      return 'ended';
  }
}
