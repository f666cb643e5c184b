// DevTools control of a Chromium-family session: start the first page and know when its
// navigation has begun ("ready": the page may be slow, hang or fail, and the person still sees
// the browser), keep the browser on http and https pages, and notice a crashed page. The guard is
// not optional: a connection that drops is made again at once (a new relay into the session) and
// the guard re-armed; when that fails, or the connection keeps being cut, the control says the
// guard is lost, and the runtime ends the session (decisions.md 49).
import { EventEmitter } from 'node:events';
import { withTimeout } from '../sandbox/processes.js';
import { refusedPage } from '../egress/refusals.js';
import { UNREADABLE_BROWSER } from './browser-line.js';
import type { BrowserReader } from './browser-reader.js';
import { DevToolsConnection, textOf, targetInfoOf, type DevToolsEvent, type TargetInfo } from './devtools-connection.js';
import { EditingWatch } from './editing-watch.js';
import { ALLOWED_PAGE, DEVTOOLS_FRONTEND, isNavigableUrl, NEW_TAB_PAGE, untitled } from './page-policy.js';
import { TitleLooks } from './page-titles.js';

/**
 * Drops of the guard's connection taken within REARM_WINDOW_MS, each re-armed at once; one more
 * ends the session. The relay is a local process: only something killing it drops the connection,
 * and a session that does so again and again would otherwise get gaps without a guard.
 */
export const REARM_LIMIT = 3;
export const REARM_WINDOW_MS = 60_000;
/** Tries to make a dropped connection again, this far apart, each bounded by CONNECT_TIMEOUT_MS. */
const CONNECT_ATTEMPTS = 3;
const ATTEMPT_GAP_MS = 200;
const CONNECT_TIMEOUT_MS = 5_000;

export interface ControlEvents {
  refused: [{ url: string }];
  'page-crashed': [{ targetId: string; status: string }];
  /** The connection dropped and was made again: the guard is armed once more. */
  rearmed: [];
  /** The connection is gone for good: the browser would run unguarded, so its session must end. */
  'guard-lost': [{ reason: string }];
  /**
   * What a session's tabs do, for its recording's timeline (issue 35): a tab opened or closed, a
   * tab's page at a new web address (its title as known then), and a title that came later.
   * Only http and https pages: the waiting page and the engine's own pages are not the session's.
   */
  page: [PageChange];
  /** A text field took or lost the keyboard focus in a tab (issue 36: a phone's viewer opens its keyboard). */
  editing: [{ tab: string; editing: boolean }];
  /** Any page target as DevTools tells it (every scheme; the viewer's tab strip, tabs.ts), and one that closed. */
  'page-target': [{ tab: string; url: string; title: string } | { tab: string; closed: true }];
}

/** One change of a session's tabs (`tab` is the browser's target id). */
export type PageChange =
  | { change: 'opened' | 'closed'; tab: string }
  | { change: 'navigated' | 'titled'; tab: string; url: string; title: string };

/** A DevTools connection to the browser (a confined session's `ws+unix:` address is used as is), read in the session's reader when it has one. */
function openConnection(devtoolsUrl: string, reader: BrowserReader | null): Promise<DevToolsConnection> {
  return DevToolsConnection.open(devtoolsUrl, reader ? { reader } : {});
}


export type { TargetInfo };

export class BrowserControl extends EventEmitter<ControlEvents> {
  private closed = false;
  private current: DevToolsConnection;
  /** Connections that have dropped: one that drops while it is being armed is not kept. */
  private readonly dropped = new WeakSet<DevToolsConnection>();
  private rearming = false;
  /** When the connection dropped, within the last REARM_WINDOW_MS. */
  private drops: number[] = [];
  /** Why the guard is lost, once it is (the session must then end); null while it holds. */
  lostReason: string | null = null;
  /**
   * The DevTools targets of the engine's own connections (each browser-level connection is a
   * target of type "browser"): hidden from programs and never theirs to attach to (channels/automation/engine-targets.ts).
   */
  private readonly ownTargets = new Set<string>();
  /** Each open tab's web address and title as last told (page events). */
  private readonly tabs = new Map<string, { url: string; title: string }>();
  /** Every page target's title, asked for after each change told without one (page-titles.ts). */
  private readonly titleLooks = new TitleLooks((targetId) => this.lookForTitle(targetId));
  /** Whether a text field has the keyboard focus now (the latest any tab told: editing-watch.ts). */
  editing = false;
  private readonly editingWatch = new EditingWatch(
    (tab, editing) => {
      this.editing = editing;
      this.emit('editing', { tab, editing });
    },
    (targetId) => this.ownTargets.has(targetId),
  );

  private constructor(
    private readonly devtoolsUrl: string,
    /** The session's language: the "not allowed" page is shown in it. */
    private readonly language: string,
    /** Where every connection of the guard's is read (browser-reader.ts); null: in this thread (tests). */
    private readonly reader: BrowserReader | null,
    client: DevToolsConnection,
  ) {
    super();
    this.current = client;
  }

  /** Whether `targetId` is one of the engine's own connections to the browser (the guard's, now or before a re-arm). */
  isOwnTarget(targetId: string): boolean {
    return this.ownTargets.has(targetId);
  }

  /** The live DevTools connection (a new one after each re-arm). */
  get client(): DevToolsConnection {
    return this.current;
  }

  static async connect(devtoolsUrl: string, language = 'en', reader: BrowserReader | null = null): Promise<BrowserControl> {
    const client = await openConnection(devtoolsUrl, reader);
    const control = new BrowserControl(devtoolsUrl, language, reader, client);
    try {
      await control.guard(client);
    } catch (error) {
      await control.close();
      throw error;
    }
    return control;
  }

  /** The open tabs and the web address each shows (none yet: empty), in the order they opened. */
  openTabs(): Array<{ tab: string; url: string; title: string }> {
    return [...this.tabs].map(([tab, page]) => ({ tab, ...page }));
  }

  /**
   * A page target's info, as DevTools told it or as a title look found it: the tab strip's
   * `page-target`, and page events when it opens, moves to a web address, or gets its title.
   */
  private tellPage(info: { targetId: string; url: string; title?: string }): void {
    this.emit('page-target', { tab: info.targetId, url: info.url, title: untitled(info) ? '' : (info.title ?? '') });
    this.followTab(info);
  }

  private followTab(info: { targetId: string; url: string; title?: string }): void {
    const known = this.tabs.get(info.targetId);
    if (!known) {
      this.tabs.set(info.targetId, { url: '', title: '' });
      this.emit('page', { change: 'opened', tab: info.targetId });
    }
    const tab = this.tabs.get(info.targetId)!;
    // Until a page has a title, Chromium gives its address without the scheme.
    const title = untitled(info) ? '' : info.title!;
    if (!isNavigableUrl(info.url)) return;
    if (info.url !== tab.url) {
      Object.assign(tab, { url: info.url, title });
      this.emit('page', { change: 'navigated', tab: info.targetId, url: info.url, title });
    } else if (title && title !== tab.title) {
      tab.title = title;
      this.emit('page', { change: 'titled', tab: info.targetId, url: info.url, title });
    }
  }

  /** Asks the browser for a page target's info (its title as the browser shows it: the page's scripts never answer). */
  private async lookForTitle(targetId: string): Promise<void> {
    const { targetInfo } = await this.client.send('Target.getTargetInfo', { targetId });
    if (targetInfo.type === 'page' && this.titleLooks.isAt(targetId, targetInfo.url)) this.tellPage(targetInfo);
  }

  private async guard(client: DevToolsConnection): Promise<void> {
    client.on('disconnect', () => {
      this.dropped.add(client);
      if (client === this.current) this.onDropped();
    });
    // A browser that says what cannot be read is no longer the browser the guard knows: its session ends.
    client.on('unreadable', ({ why }) => this.lose(`${UNREADABLE_BROWSER} (${why})`));
    // A new connection attaches to every tab again.
    this.editingWatch.reset();
    client.on('event', (message) => {
      this.editingWatch.handle(client, message);
      const params = message.params;
      switch (message.method) {
        case 'Fetch.requestPaused': {
          // Only non-web schemes are paused (see the patterns below): refuse them in every page.
          void client.send('Fetch.failRequest', { requestId: textOf(params, 'requestId'), errorReason: 'BlockedByClient' }).catch(() => undefined);
          const url: unknown = params.request?.url;
          this.emit('refused', { url: typeof url === 'string' ? url : '' });
          break;
        }
        case 'Target.targetInfoChanged':
        case 'Target.targetCreated': {
          const info = targetInfoOf(params);
          if (info.type === 'page' && !this.ownTargets.has(info.targetId)) {
            this.tellPage(info);
            // Chromium does not tell a title the page gives later: it is asked for (page-titles.ts).
            this.titleLooks.changed(info.targetId, info.url, !untitled(info));
          }
          const devtools = DEVTOOLS_FRONTEND.test(info.url);
          if (devtools && info.type !== 'page') {
            // F12, Ctrl+Shift+I and the menu open developer tools as a target of their own (type
            // "other"): closed at once. (The policy that would forbid them also forbids the
            // engine's own DevTools.)
            this.emit('refused', { url: info.url });
            void client.send('Target.closeTarget', { targetId: info.targetId }).catch(() => undefined);
          } else if (info.type === 'page' && info.url && (devtools || (!ALLOWED_PAGE.test(info.url) && !NEW_TAB_PAGE.test(info.url)))) {
            // chrome://, view-source: and devtools:// typed into a tab never reach Fetch, so the page
            // is sent away once it shows. The browser's policy has blocked them before they commit
            // (chromium-policies.ts): what is replaced is its error page, with the engine's own
            // words. Never closed: closing the only tab would end the browser.
            this.emit('refused', { url: info.url });
            void this.navigateTarget(client, info.targetId, refusedPage(info.url, this.language)).catch(() => undefined);
          }
          break;
        }
        case 'Target.targetDestroyed': {
          const targetId = textOf(params, 'targetId');
          this.titleLooks.forget(targetId);
          this.emit('page-target', { tab: targetId, closed: true });
          if (this.tabs.delete(targetId)) this.emit('page', { change: 'closed', tab: targetId });
          break;
        }
        case 'Target.targetCrashed':
          this.emit('page-crashed', { targetId: textOf(params, 'targetId'), status: String(params.status) });
          break;
      }
    });
    // Known before the guard is armed, so a program never sees this connection listed.
    // Without a targetId, Target.getTargetInfo answers the asking connection's own target.
    const own = targetInfoOf(await client.send('Target.getTargetInfo', {}));
    this.ownTargets.add(own.targetId);
    await Promise.all([
      // Reports every target that exists now too: what opened while the guard was down is handled.
      client.send('Target.setDiscoverTargets', { discover: true }),
      // Set on the browser-level session, these patterns apply to every page, also later ones.
      client.send('Fetch.enable', { patterns: [{ urlPattern: 'file:*' }, { urlPattern: 'filesystem:*' }, { urlPattern: 'ftp:*' }] }),
      // Every tab, now and later, gets the editing watch (editing-watch.ts); nothing waits for it.
      this.editingWatch.attachTabs(client),
    ]);
  }

  /** The connection dropped: made again at once, unless it keeps being cut. */
  private onDropped(): void {
    if (this.closed || this.rearming || this.lostReason !== null) return;
    const now = Date.now();
    this.drops = [...this.drops.filter((at) => now - at < REARM_WINDOW_MS), now];
    if (this.drops.length > REARM_LIMIT) {
      return this.lose(`the engine's DevTools connection to the browser was cut ${this.drops.length} times within ${REARM_WINDOW_MS / 1000} s; the session ends rather than run without its guard`);
    }
    void this.rearm();
  }

  private async rearm(): Promise<void> {
    this.rearming = true;
    let failure = 'no attempt';
    try {
      for (let attempt = 1; attempt <= CONNECT_ATTEMPTS; attempt++) {
        if (this.closed) return;
        let client: DevToolsConnection | undefined;
        try {
          const opening = openConnection(this.devtoolsUrl, this.reader);
          client = await withTimeout(opening, CONNECT_TIMEOUT_MS, 'the DevTools connection').catch((error: unknown) => {
            // One that comes up after the time is closed, not left open beside the guard's.
            void opening.then((late) => late.close(), () => undefined);
            throw error;
          });
          await withTimeout(this.guard(client), CONNECT_TIMEOUT_MS, 'arming the DevTools guard');
          if (this.dropped.has(client)) throw new Error('the new connection dropped while the guard was armed');
          if (this.closed) return void (await client.close().catch(() => undefined));
          this.current = client;
          this.emit('rearmed');
          return;
        } catch (error) {
          failure = (error as Error).message;
          await client?.close().catch(() => undefined);
          await new Promise((resolve) => setTimeout(resolve, ATTEMPT_GAP_MS));
        }
      }
      if (!this.closed) this.lose(`the engine lost its DevTools connection to the browser and could not make it again (${failure}); the session ends rather than run without its guard`);
    } finally {
      this.rearming = false;
    }
  }

  private lose(reason: string): void {
    if (this.lostReason !== null) return;
    this.lostReason = reason;
    this.emit('guard-lost', { reason });
  }

  private async attach(targetId: string): Promise<string> {
    const { sessionId } = await this.client.send('Target.attachToTarget', { targetId, flatten: true });
    return sessionId;
  }

  /** The next load event of the page attached as `sessionId`. */
  private loadEvent(sessionId: string): Promise<void> {
    return new Promise<void>((resolve) => {
      const onEvent = (message: DevToolsEvent) => {
        if (message.sessionId === sessionId && message.method === 'Page.loadEventFired') {
          this.client.removeListener('event', onEvent);
          resolve();
        }
      };
      this.client.on('event', onEvent);
    });
  }

  private async navigateTarget(client: DevToolsConnection, targetId: string, url: string): Promise<void> {
    const { sessionId } = await client.send('Target.attachToTarget', { targetId, flatten: true });
    await client.send('Page.navigate', { url }, sessionId);
    await client.send('Target.detachFromTarget', { sessionId }).catch(() => undefined);
  }

  /** Every target the browser lists whose info is whole (an entry that is not is left out; a listing that is not one rejects). */
  async targets(): Promise<TargetInfo[]> {
    const { targetInfos } = await this.client.send('Target.getTargets');
    if (!Array.isArray(targetInfos)) throw new Error('Target.getTargets: the browser answered without a list');
    return targetInfos.flatMap((targetInfo: unknown) => {
      try {
        return [targetInfoOf({ targetInfo })];
      } catch {
        return [];
      }
    });
  }

  /** The first page target (Chromium opens one at start). */
  async firstPage(): Promise<string> {
    const page = (await this.targets()).find((t) => t.type === 'page');
    if (page) return page.targetId;
    const { targetId } = await this.client.send('Target.createTarget', { url: 'about:blank' });
    return targetId;
  }

  /**
   * Opens `url` in the first page and resolves when its load event fired. Only http and https
   * are accepted here: chrome:// never reaches the request interception.
   */
  async open(url: string): Promise<void> {
    if (!isNavigableUrl(url)) throw new Error(`only http and https addresses can be opened, not ${url.slice(0, 100)}`);
    const targetId = await this.firstPage();
    const sessionId = await this.attach(targetId);
    try {
      await this.client.send('Page.enable', undefined, sessionId);
      const loaded = this.loadEvent(sessionId);
      // An address that cannot load still shows an error page (and fires load): the viewer sees why.
      await this.client.send('Page.navigate', { url }, sessionId);
      await loaded;
    } finally {
      await this.client.send('Target.detachFromTarget', { sessionId }).catch(() => undefined);
    }
  }

  /**
   * Resolves once the first page's navigation has begun: its target shows an address other than
   * the blank page. A browser started on an address has begun at once; whether the site answers,
   * hangs or fails, the browser shows its progress or its own error page from then on.
   */
  async firstNavigationStarted(): Promise<void> {
    for (;;) {
      if ((await this.targets()).some((t) => t.type === 'page' && t.url !== '' && t.url !== 'about:blank')) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /**
   * Sends the first page to `url` and resolves once the navigation has begun, not when it loads
   * (a warm browser taking its first address). Only http and https are accepted.
   */
  async navigate(url: string): Promise<void> {
    if (!isNavigableUrl(url)) throw new Error(`only http and https addresses can be opened, not ${url.slice(0, 100)}`);
    const sessionId = await this.attach(await this.firstPage());
    let onEvent: ((message: DevToolsEvent) => void) | undefined;
    try {
      await this.client.send('Page.enable', undefined, sessionId);
      const begun = new Promise<void>((resolve) => {
        onEvent = (message) => {
          if (message.sessionId === sessionId && (message.method === 'Page.frameStartedNavigating' || message.method === 'Page.frameStartedLoading')) resolve();
        };
        this.client.on('event', onEvent);
      });
      // Page.navigate itself answers only when the site answers (or the navigation fails).
      const answered = this.client.send('Page.navigate', { url }, sessionId).then(() => undefined);
      await Promise.race([begun, answered]);
      void answered.catch(() => undefined);
    } finally {
      if (onEvent) this.client.removeListener('event', onEvent);
      await this.client.send('Target.detachFromTarget', { sessionId }).catch(() => undefined);
    }
  }

  /**
   * Opens `url` in a new tab in place of the page a warm browser waited on, and resolves once the
   * tab is there and its navigation has begun (not when it loads). A tab of its own, not a
   * navigation of the waiting one: its history holds the address alone (Back is off, and the page
   * reads a history of one, as in a browser started on the address). Only http and https are
   * accepted, and the blank page.
   */
  async openInPlace(url: string): Promise<void> {
    if (!isNavigableUrl(url) && url !== 'about:blank') throw new Error(`only http and https addresses can be opened, not ${url.slice(0, 100)}`);
    const waiting = await this.firstPage();
    await this.client.send('Target.createTarget', { url });
    await this.client.send('Target.closeTarget', { targetId: waiting });
  }

  /** Evaluates an expression in the first page (tests and diagnostics). */
  async evaluate(expression: string): Promise<unknown> {
    const sessionId = await this.attach(await this.firstPage());
    try {
      const { result, exceptionDetails } = await this.client.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId);
      if (exceptionDetails) throw new Error(exceptionDetails.exception?.description ?? exceptionDetails.text);
      return result.value;
    } finally {
      await this.client.send('Target.detachFromTarget', { sessionId }).catch(() => undefined);
    }
  }

  /** The URLs of the open pages. */
  async pages(): Promise<string[]> {
    return (await this.targets()).filter((t) => t.type === 'page').map((t) => t.url);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.titleLooks.stop();
    await this.client.close().catch(() => undefined);
  }
}
