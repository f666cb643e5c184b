// A Chromium-family session's tabs (tabs.ts) through the engine's DevTools guard (control.ts): the
// guard tells every page target as it opens, changes and closes; a tab is switched with
// `Target.activateTarget`, closed with `Target.closeTarget`, opened with `Target.createTarget`,
// sent to another address with `Page.navigate` on the guard's attachment to it.
// Which tab is on screen is read from each page (`document.visibilityState`, evaluated without
// enabling any domain, so the page sees nothing), with its title and the address of its icon, in
// an isolated world of the engine's own, where the page's scripts cannot redefine what they answer
// (issue 43); the guard keeps one attachment per tab for it. The icon is fetched in that world too
// (favicon.ts). Titles also come from the guard, as Chromium itself knows them (control.ts).
import type { DevToolsConnection, DevToolsEvent } from './devtools-connection.js';
import { keepFillingDisplay } from './app-window.js';
import type { BrowserControl } from './control.js';
import { untitled } from './page-policy.js';
import { fetchIconScript } from './favicon.js';
import { SessionTabs, TAB_LOOK, type TabProbe } from './tabs.js';

/** The isolated world the engine reads tabs and fetches icons in (the page's scripts neither see nor change it). */
const TABS_WORLD = 'rbk-tabs';
/** How long a tab's navigation is waited for before the action answers (the site may be slow). */
const NAVIGATE_ANSWER_MS = 3000;

export class ChromiumTabs extends SessionTabs {
  /** The guard's attachment to each tab, on the connection it was made on (a re-arm makes a new one). */
  private readonly attachments = new Map<string, { client: DevToolsConnection; session: Promise<string> }>();
  private readonly onTarget = (change: { tab: string; url: string; title: string } | { tab: string; closed: true }) => {
    if ('closed' in change) {
      this.attachments.delete(change.tab);
      this.forget(change.tab);
    } else this.opened(change.tab, change.url, change.title);
  };

  /** Whether the app window is being put back to fullscreen now (one at a time). */
  private refilling = false;

  private constructor(
    private readonly control: BrowserControl,
    /** An app window (kiosk mode, or a warm browser made fullscreen): each look puts its windows back to fullscreen (app-window.ts). */
    private readonly appWindow: boolean,
  ) {
    super();
    control.on('page-target', this.onTarget);
  }

  /** Watches the tabs of the browser `control` guards, starting from those open now; `appWindow`: its windows kept fullscreen. */
  static async start(control: BrowserControl, appWindow = false): Promise<ChromiumTabs> {
    const tabs = new ChromiumTabs(control, appWindow);
    // Chromium lists the newest first: told in the order they opened.
    for (const info of (await control.targets()).reverse()) {
      if (info.type === 'page' && !control.isOwnTarget(info.targetId) && !tabs.has(info.targetId)) {
        tabs.opened(info.targetId, info.url, untitled(info) ? '' : (info.title ?? ''));
      }
    }
    return tabs;
  }

  protected override looked(): void {
    if (!this.appWindow || this.refilling || this.closed) return;
    this.refilling = true;
    void keepFillingDisplay(this.control).catch(() => undefined).finally(() => (this.refilling = false));
  }

  protected async activateTab(id: string): Promise<void> {
    await this.control.client.send('Target.activateTarget', { targetId: id });
  }

  protected async closeTab(id: string): Promise<void> {
    await this.control.client.send('Target.closeTarget', { targetId: id });
  }

  protected async openTab(url: string | undefined): Promise<string> {
    const { targetId } = await this.control.client.send('Target.createTarget', { url: url ?? 'about:blank' });
    return targetId;
  }

  protected async navigateTab(id: string, url: string): Promise<void> {
    const { client, sessionId, forget } = await this.attachment(id);
    // Page.navigate needs no domain enabled (the page sees nothing of it). It answers only when the
    // site does: a slow site is not waited for past NAVIGATE_ANSWER_MS, the navigation carries on
    // and the guard tells its address. A page that fails to load shows the browser's error page.
    const answered = client.send('Page.navigate', { url, transitionType: 'typed' }, sessionId).then(
      () => undefined,
      (error: unknown) => {
        forget();
        throw error;
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, NAVIGATE_ANSWER_MS)));
    try {
      await Promise.race([answered, waited]);
    } finally {
      clearTimeout(timer);
      answered.catch(() => undefined);
    }
  }

  protected async probe(id: string): Promise<TabProbe> {
    const value = await this.evaluate(id, TAB_LOOK, false);
    const [visibility, title, icon] = (Array.isArray(value) ? value : []) as unknown[];
    return { visible: visibility === 'visible', ...(typeof title === 'string' ? { title } : {}), ...(typeof icon === 'string' ? { icon } : {}) };
  }

  protected async readIcon(id: string, href: string): Promise<unknown> {
    return this.evaluate(id, fetchIconScript(href), true);
  }

  /** Evaluates `expression` in the tab's isolated world of the engine's own: its value. */
  private async evaluate(id: string, expression: string, awaitPromise: boolean): Promise<unknown> {
    const { client, sessionId, forget } = await this.attachment(id);
    try {
      // A page target's main frame has the target's id; the world of that name is made once per document.
      const { executionContextId } = await client.send('Page.createIsolatedWorld', { frameId: id, worldName: TABS_WORLD }, sessionId);
      const { result } = await client.send('Runtime.evaluate', { expression, contextId: executionContextId, awaitPromise, returnByValue: true }, sessionId);
      return result.value;
    } catch (error) {
      forget();
      throw error;
    }
  }

  /** The guard's attachment to the tab (made when there is none on the current connection); `forget` drops it after a failure. */
  private async attachment(id: string): Promise<{ client: DevToolsConnection; sessionId: string; forget: () => void }> {
    const client = this.control.client;
    let attachment = this.attachments.get(id);
    if (!attachment || attachment.client !== client) {
      const session = client.send('Target.attachToTarget', { targetId: id, flatten: true }).then(({ sessionId }) => sessionId);
      attachment = { client, session };
      this.attachments.set(id, attachment);
      session.catch(() => this.attachments.get(id) === attachment && this.attachments.delete(id));
    }
    const held = attachment;
    const sessionId = await held.session;
    // A tab whose attachment went (a crash, a navigation to another process) is attached again next
    // time; one that failed otherwise (a document not there yet) is let go, not left open beside the new one.
    const forget = () => {
      if (this.attachments.get(id) !== held) return;
      this.attachments.delete(id);
      void client.send('Target.detachFromTarget', { sessionId }).catch(() => undefined);
    };
    return { client, sessionId, forget };
  }

  protected release(): void {
    this.control.off('page-target', this.onTarget);
    for (const [, { client, session }] of this.attachments) {
      void session.then((sessionId) => client.send('Target.detachFromTarget', { sessionId })).catch(() => undefined);
    }
    this.attachments.clear();
  }
}
