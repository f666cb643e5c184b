// What a running session reports to the service, in two kinds: events that end the session (its
// browser or display exited, a page crashed, the DevTools guard was lost, its browser's BiDi
// connection sent what the service could not read) and notices that do not
// (the session started warm or cold, a navigation or a connection was refused, the sound server was lost; later: a download finished). A new kind is classified
// in ENDS_SESSION or it does not compile, so an informational notice can never end sessions by default.
import type { BrowserProcess } from '../browser/browser.js';
import { UNREADABLE_BROWSER } from '../browser/browser-line.js';
import type { BrowserControl, PageChange } from '../browser/control.js';
import { isNavigableUrl } from '../browser/page-policy.js';
import type { BrowserTab, SessionTabs } from '../browser/tabs.js';
import type { Display } from '../display/display.js';
import type { EgressRoute } from '../egress/egress.js';
import type { SessionSound } from '../capture/sound.js';

/** Whether each kind of runtime event ends the session it is about. */
export const ENDS_SESSION = {
  'browser-exited': true,
  'display-exited': true,
  'page-crashed': true,
  /** Chromium family: the engine's DevTools guard could not be kept (decisions.md 49). */
  'guard-lost': true,
  /**
   * Firefox: the browser's WebDriver BiDi connection sent messages the hub could not read
   * (bidi-hub.ts, UNREADABLE_LIMIT): Firefox's agent writes none, so something else in the session
   * writes into it, and the programs and tab watcher it carries can no longer be trusted to it.
   */
  unreadable: true,
  /** A navigation or a connection the guard refused: the session goes on. */
  refused: false,
  /**
   * The session is ready: `warm …` when it took a ready browser (its choices applied at hand-out),
   * `cold …` when its browser started for it (on a ready display or from nothing), with the time.
   */
  started: false,
  /** The session's sound server is gone: listeners are told, the browser and its picture go on (decisions.md 53). */
  'sound-lost': false,
  /** A tab opened, closed, moved to a web address or got its title (a recording's timeline, issue 35): Chromium's guard, or a Firefox ESR app window's tab watcher. */
  page: false,
} as const;

export type RuntimeEventKind = keyof typeof ENDS_SESSION;

/** An event that ends the session: the service suspends it with `message` as the reason. */
export type SessionEndingEvent = {
  [K in RuntimeEventKind]: (typeof ENDS_SESSION)[K] extends true ? { sessionId: string; kind: K; ends: true; message: string } : never;
}[RuntimeEventKind];

/**
 * What a refusal was about, for the operator's log: the target (`host:port`, or a page's scheme)
 * and the category of its address (`loopback`, `private`… , `metadata-name`, `engine-listener`, `browser-page`),
 * never the address a name resolved to.
 */
export interface RefusalDetail {
  target: string;
  category: string;
}

/** A notice: told to whoever listens, never the end of the session. */
export type RuntimeNotice = {
  [K in RuntimeEventKind]: (typeof ENDS_SESSION)[K] extends false ? { sessionId: string; kind: K; ends: false; message: string; detail?: K extends 'page' ? PageChange : RefusalDetail } : never;
}[RuntimeEventKind];

export type RuntimeEvent = SessionEndingEvent | RuntimeNotice;

/** An event of `kind`, with whether it ends the session set from ENDS_SESSION. */
export function runtimeEvent(sessionId: string, kind: RuntimeEventKind, message: string, detail?: RefusalDetail | PageChange): RuntimeEvent {
  return { sessionId, kind, ends: ENDS_SESSION[kind], message, ...(detail ? { detail } : {}) } as RuntimeEvent;
}

/** What the `started` notice says: how the session came to be ready, and in how long. */
export function startedMessage(start: 'cold' | 'warm-display' | 'warm-browser', readyMs: number): string {
  const how = { 'warm-browser': 'warm start: a ready browser took the session\'s choices', 'warm-display': 'cold start: the browser started on a ready display', cold: 'cold start: every part of the session started for it' }[start];
  return `${how}, ready in ${Math.round(readyMs)} ms`;
}

/** What the `unreadable` event says: the session's end as the service tells it, in the DevTools guard's words (control.ts). */
export function unreadableMessage(why: string): string {
  return `${UNREADABLE_BROWSER} (${why})`;
}

/** The parts of a running session whose events are reported. */
export interface WatchedSession {
  id: string;
  browserName: string;
  browser: BrowserProcess;
  display: Display;
  control: BrowserControl | null;
  /** The tab watcher (tabs.ts): where a browser without the DevTools guard (Firefox ESR in an app window) tells its tabs. */
  tabs?: SessionTabs | null;
  egress: EgressRoute;
  sound: SessionSound | null;
}

/**
 * Reports every event of a running session's parts through `report` (which words the reason and
 * drops events of a session being stopped).
 */
export function watchSession(session: WatchedSession, report: (kind: RuntimeEventKind, message: string, detail?: RefusalDetail | PageChange) => void): void {
  void session.browser.process.exited.then(({ code, signal }) => report('browser-exited', `${session.browserName} exited (${signal ?? `code ${code}`})`));
  void session.display.server.exited.then(({ code, signal }) => report('display-exited', `Xvnc exited (${signal ?? `code ${code}`})`));
  session.control?.on('page-crashed', ({ status }) => report('page-crashed', `a page crashed (${status})`));
  session.control?.on('refused', ({ url }) => report('refused', `refused ${url.slice(0, 200)}`, { target: /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? 'page', category: 'browser-page' }));
  session.control?.on('guard-lost', ({ reason }) => report('guard-lost', reason));
  // The tabs as they are now (the first page opened while the session started), then each change;
  // told once the start's caller has the session (it learns which runtime session is whose), as
  // every later change is.
  const control = session.control;
  if (control) {
    const changes: PageChange[] = control.openTabs().flatMap(({ tab, url, title }) => [
      { change: 'opened' as const, tab },
      ...(url ? [{ change: 'navigated' as const, tab, url, title }] : []),
    ]);
    const held = (change: PageChange) => changes.push(change);
    control.on('page', held);
    setImmediate(() => {
      control.off('page', held);
      for (const change of changes.splice(0)) report('page', `a tab ${change.change}`, change);
      control.on('page', (change) => report('page', `a tab ${change.change}`, change));
    });
  }
  // Firefox ESR in an app window: the same changes, read from its tab watcher's lists (decisions.md 113).
  const tabs = session.tabs;
  if (!control && tabs) {
    let known: BrowserTab[] = [];
    const tell = (list: BrowserTab[]) => {
      for (const change of tabChanges(known, list)) report('page', `a tab ${change.change}`, change);
      known = list;
    };
    setImmediate(() => {
      tell(tabs.list());
      tabs.on('changed', tell);
    });
  }
  // Lost while the session was starting: said now that someone listens.
  if (session.control?.lostReason) report('guard-lost', session.control.lostReason);
  const hub = session.browser.bidi?.hub;
  const unreadable = (why: string) => report('unreadable', unreadableMessage(why));
  if (hub?.unreadable) unreadable(hub.unreadable);
  else hub?.once('unreadable', unreadable);
  session.egress.on('refused', ({ target, reason, category }) => report('refused', `refused ${target}: ${reason}`, { target, category }));
  if (session.sound?.lostReason) report('sound-lost', session.sound.lostReason);
  else session.sound?.once('lost', (reason) => report('sound-lost', reason));
}

/**
 * What changed between two lists of a session's tabs, as the DevTools guard tells it: tabs opened
 * and closed, a tab at a new web address (http or https only), and a title that came later.
 */
export function tabChanges(before: BrowserTab[], after: BrowserTab[]): PageChange[] {
  const was = new Map(before.map((tab) => [tab.id, tab]));
  const changes: PageChange[] = [];
  for (const tab of after) {
    const old = was.get(tab.id);
    if (!old) changes.push({ change: 'opened', tab: tab.id });
    if (!isNavigableUrl(tab.url)) continue;
    if (tab.url !== old?.url) changes.push({ change: 'navigated', tab: tab.id, url: tab.url, title: tab.title });
    else if (tab.title && tab.title !== old.title) changes.push({ change: 'titled', tab: tab.id, url: tab.url, title: tab.title });
  }
  const now = new Set(after.map((tab) => tab.id));
  for (const tab of before) if (!now.has(tab.id)) changes.push({ change: 'closed', tab: tab.id });
  return changes;
}
