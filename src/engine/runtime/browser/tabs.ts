// The remote browser's tabs as the viewer's tab strip shows them (issue 36, decisions.md 102): each
// tab's id, title, web address and whether it is the one on screen, told as they change, and the
// three things a driver may do with them (switch to one, close one, open one). One watcher per
// running session; Chromium's is fed by the engine's DevTools guard (control.ts), Firefox ESR's by
// its WebDriver BiDi connection (firefox-tabs.ts). Neither browser tells which tab is on screen:
// each tab's `document.visibilityState` is read after every change of the tabs, after each action,
// and once a second while someone watches (a click on the browser's own strip, a Ctrl+Tab), in a
// world of the engine's own in the page (TAB_LOOK).
// Each tab's favicon is fetched inside the session when its page shows another icon (favicon.ts).
import { EventEmitter } from 'node:events';
import { faviconDataUrl, ICON_HREF } from './favicon.js';

/** One tab of the remote browser. */
export interface BrowserTab {
  /** The browser's own id for it (a DevTools target id, a BiDi browsing context id). */
  id: string;
  /** Its page's title; empty while it has none (the viewer then shows the address or "New tab"). */
  title: string;
  /** Its page's web address (http, https; other schemes as the browser has them). */
  url: string;
  /** Whether it is the tab the browser shows. */
  active: boolean;
  /** Its page's icon as a `data:image/…;base64,` address (checked: favicon.ts); absent while it has none. */
  favicon?: string;
}

/** Why a tab action was refused: an id the browser does not have, an address it may not open, or the last tab (closing it ends the browser). */
export class TabRefusal extends Error {
  constructor(readonly reason: 'unknown-tab' | 'bad-url' | 'last-tab', message: string) {
    super(message);
  }
}

/** At most this many tabs are told (a page that opens hundreds is cut, the first ones kept). */
export const MAX_TABS = 50;
/** A title is cut to this many characters. */
export const MAX_TITLE = 200;
/**
 * The page's title as `document.title` gives it (its title element's text, ASCII whitespace
 * stripped and collapsed), cut to MAX_TITLE, an expression for the page. Only the start of the
 * element's text is read: `document.title` itself copies and collapses the whole text, which took
 * Firefox seconds for a title of 40 million characters, every look.
 */
const TITLE = `(() => {
  const html = 'http://www.w3.org/1999/xhtml';
  const root = document.documentElement;
  const element = document.getElementsByTagNameNS(html, 'title')[0] ||
    (root && root.namespaceURI === 'http://www.w3.org/2000/svg' ? [...root.children].find((child) => child.localName === 'title') : null);
  if (!element) return '';
  let text = '';
  let nodes = 0;
  for (let node = element.firstChild; node && text.length < ${MAX_TITLE * 4} && nodes < 1000; node = node.nextSibling, nodes++) {
    if (node.nodeType === Node.TEXT_NODE) text += node.substringData(0, ${MAX_TITLE * 4} - text.length);
  }
  return text.replace(/[\\t\\n\\f\\r ]+/g, ' ').trim().slice(0, ${MAX_TITLE});
})()`;

/**
 * What a look at a tab reads, an expression for a world of the engine's own in the page (its
 * scripts can neither see it nor change what `document` answers there): whether it is on screen,
 * its title, and the address of its icon once its document is parsed (null before). Every string
 * is cut inside the page, so a page's huge title never crosses to the engine (issue 43).
 */
export const TAB_LOOK = `[document.visibilityState, ${TITLE}, document.readyState === 'loading' ? null : ${ICON_HREF}]`;
/** How often which tab is on screen is read while someone watches (ms). */
export const WATCHED_LOOK_MS = 1000;
/** How long one tab's answer is waited for (a page busy in a loop does not answer). */
const PROBE_TIMEOUT_MS = 800;
/** How long fetching a tab's icon is waited for (favicon.ts gives up inside the page before). */
const ICON_TIMEOUT_MS = 5000;

/** What one look at a tab finds: whether it is on screen, and its title where the browser does not tell it otherwise. */
export interface TabProbe {
  visible: boolean;
  title?: string;
  /** The address of the icon the page shows (favicon.ts ICON_HREF; `''`: none), once its document is parsed. */
  icon?: string;
}

/** A session's tabs: the list as it is, its changes (`changed`), and the driver's actions. */
export abstract class SessionTabs extends EventEmitter<{ changed: [BrowserTab[]] }> {
  private readonly tabs = new Map<string, { title: string; url: string; active: boolean; favicon?: string; iconHref?: string }>();
  /** Tabs whose icon is being fetched. */
  private readonly fetchingIcons = new Set<string>();
  private watchers = 0;
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> | null = null;
  private lookAgain = false;
  private told = '';
  protected closed = false;

  constructor() {
    super();
    this.setMaxListeners(0);
  }

  /** The tabs in the order they opened (the first MAX_TABS). */
  list(): BrowserTab[] {
    return [...this.tabs].slice(0, MAX_TABS).map(([id, { iconHref: _, favicon, ...tab }]) => ({ id, ...tab, title: tab.title.slice(0, MAX_TITLE), ...(favicon ? { favicon } : {}) }));
  }

  /** Keeps which tab is on screen current while someone watches; the returned function stops watching. */
  watch(): () => void {
    this.watchers++;
    if (this.watchers === 1) this.schedule();
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      this.watchers--;
      if (this.watchers === 0) clearTimeout(this.timer);
    };
  }

  /** Puts the tabs `ids` first, in that order (a restored session's tabs in their saved order; the browser tells them in another). */
  arrange(ids: readonly string[]): void {
    const moved = ids.filter((id) => this.tabs.has(id)).map((id) => [id, this.tabs.get(id)!] as const);
    for (const [id] of moved) this.tabs.delete(id);
    const rest = [...this.tabs];
    this.tabs.clear();
    for (const [id, tab] of [...moved, ...rest]) this.tabs.set(id, tab);
    this.tell();
  }

  /** Shows the tab `id`. */
  async activate(id: string): Promise<void> {
    this.known(id);
    await this.activateTab(id);
    // Told at once: the browser has switched when it answers.
    for (const [tabId, tab] of this.tabs) tab.active = tabId === id;
    this.tell();
    void this.look();
  }

  /** Closes the tab `id`; the last tab is never closed (the browser would end, and the session with it). */
  async close(id: string): Promise<void> {
    this.known(id);
    if (this.tabs.size <= 1) throw new TabRefusal('last-tab', 'the last tab cannot be closed: the browser, and the session, would end');
    await this.closeTab(id);
    this.forget(id);
  }

  /** Opens a new tab on `url` (http or https; none: the browser's blank page) and shows it; resolves with its id. */
  async open(url?: string): Promise<string> {
    if (url !== undefined && !isWebAddress(url)) throw new TabRefusal('bad-url', 'a new tab opens an http or https address, or nothing');
    if (this.tabs.size >= MAX_TABS) throw new TabRefusal('bad-url', `at most ${MAX_TABS} tabs are open at once`);
    const id = await this.openTab(url === undefined ? undefined : new URL(url).href);
    this.opened(id, url === undefined ? '' : new URL(url).href, '');
    // Shown at once (both browsers' watchers open it in front): the answer says so.
    for (const [tabId, tab] of this.tabs) tab.active = tabId === id;
    this.tell();
    void this.look();
    return id;
  }

  /**
   * Shows `url` (http or https) in the tab `id`, as a person typing it in the address bar would:
   * what an app window, which has none, is driven with (issue 44). Told at once with the new address.
   */
  async navigate(id: string, url: string): Promise<void> {
    this.known(id);
    if (!isWebAddress(url)) throw new TabRefusal('bad-url', 'a tab goes to an http or https address');
    const href = new URL(url).href;
    await this.navigateTab(id, href);
    this.opened(id, href, '');
    void this.look();
  }

  /** Stops watching the browser (the session ends). */
  stop(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.release();
  }

  protected abstract activateTab(id: string): Promise<void>;
  protected abstract closeTab(id: string): Promise<void>;
  protected abstract openTab(url: string | undefined): Promise<string>;
  /** Navigates the tab to `url` (an http or https address, checked). */
  protected abstract navigateTab(id: string, url: string): Promise<void>;
  /** Reads whether the tab is on screen (and its title, where the browser tells it no other way). */
  protected abstract probe(id: string): Promise<TabProbe>;
  /** Fetches the icon at `href` in the tab, in a world of the engine's own (favicon.ts fetchIconScript): what the script answered. */
  protected abstract readIcon(id: string, href: string): Promise<unknown>;
  /** Lets go of what the watcher holds in the browser. */
  protected abstract release(): void;
  /** Called after each look at the tabs: what else a watcher keeps as it should be (an app window's fullscreen, chromium-tabs.ts). */
  protected looked(): void {}

  /** A tab the browser told of (new, or already known: its address and title change). */
  protected opened(id: string, url: string, title: string): void {
    title = title.slice(0, MAX_TITLE);
    const known = this.tabs.get(id);
    if (known && known.url === url && known.title === title) return;
    if (known) Object.assign(known, { url, title });
    else this.tabs.set(id, { url, title, active: false });
    this.tell();
    this.lookSoon();
  }

  /** A tab the browser closed. */
  protected forget(id: string): void {
    if (!this.tabs.delete(id)) return;
    this.tell();
    this.lookSoon();
  }

  protected has(id: string): boolean {
    return this.tabs.has(id);
  }

  private known(id: string): void {
    if (typeof id !== 'string' || !this.tabs.has(id)) throw new TabRefusal('unknown-tab', 'the browser has no such tab (it may have closed); the tabs list says which there are');
  }

  /** A change of the tabs: which is on screen is read again, a moment later (a new tab shows after it is told). */
  private lookSoon(): void {
    setTimeout(() => void this.look(), 30).unref();
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.watchers === 0 || this.closed) return;
    this.timer = setTimeout(() => void this.look().finally(() => this.schedule()), WATCHED_LOOK_MS);
    this.timer.unref();
  }

  /** Reads every tab once (one look at a time; a look asked for meanwhile runs after it). */
  private look(): Promise<void> {
    if (this.looking) {
      this.lookAgain = true;
      return this.looking;
    }
    this.looking = (async () => {
      do {
        this.lookAgain = false;
        const ids = [...this.tabs.keys()].slice(0, MAX_TABS);
        const found = await Promise.all(ids.map((id) => withTimeout(this.probe(id), PROBE_TIMEOUT_MS).catch(() => null)));
        if (this.closed) return;
        const shown = ids.filter((_, i) => found[i]?.visible);
        // None answered as shown (a page still loading answers late): what was told stays.
        if (shown.length > 0) for (const [id, tab] of this.tabs) tab.active = id === shown[shown.length - 1];
        ids.forEach((id, i) => {
          const tab = this.tabs.get(id);
          const title = found[i]?.title;
          if (tab && title !== undefined) tab.title = title.slice(0, MAX_TITLE);
          const icon = found[i]?.icon;
          if (tab && icon !== undefined && icon !== tab.iconHref) void this.fetchIcon(id, icon);
        });
        this.tell();
        this.looked();
      } while (this.lookAgain && !this.closed);
    })().finally(() => (this.looking = null));
    return this.looking;
  }

  /** Fetches the icon the tab's page now shows (one fetch per tab at a time; a failed one is not tried again until the icon changes). */
  private async fetchIcon(id: string, href: string): Promise<void> {
    if (this.fetchingIcons.has(id)) return;
    this.fetchingIcons.add(id);
    try {
      const favicon = href ? faviconDataUrl(await withTimeout(this.readIcon(id, href), ICON_TIMEOUT_MS).catch(() => null)) : undefined;
      const tab = this.tabs.get(id);
      if (!tab || this.closed) return;
      tab.iconHref = href;
      if (favicon) tab.favicon = favicon;
      else delete tab.favicon;
      this.tell();
    } finally {
      this.fetchingIcons.delete(id);
    }
  }

  /** Emits the list when it differs from what was last told. */
  private tell(): void {
    const list = this.list();
    const text = JSON.stringify(list);
    if (text === this.told || this.closed) return;
    this.told = text;
    this.emit('changed', list);
  }
}

export function isWebAddress(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:';
  } catch {
    return false;
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no answer')), ms)))]).finally(() => clearTimeout(timer));
}
