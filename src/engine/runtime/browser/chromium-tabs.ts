// A Chromium-family session's tabs (tabs.ts) through the engine's DevTools guard (control.ts): the
// guard tells every page target as it opens, changes and closes; a tab is switched with
// `Target.activateTarget`, closed with `Target.closeTarget`, opened with `Target.createTarget`.
// Which tab is on screen is read from each page (`document.visibilityState`, evaluated without
// enabling any domain, so the page sees nothing), with its title and the address of its icon; the
// guard keeps one attachment per tab for it. The icon is fetched in an isolated world of the
// engine's own (favicon.ts).
import type CDP from 'chrome-remote-interface';
import type { BrowserControl } from './control.js';
import { untitled } from './page-policy.js';
import { fetchIconScript, ICON_HREF } from './favicon.js';
import { SessionTabs, type TabProbe } from './tabs.js';

/** The isolated world the engine fetches icons in (the page's scripts neither see nor change it). */
const ICON_WORLD = 'rbk-tabs';

export class ChromiumTabs extends SessionTabs {
  /** The guard's attachment to each tab, on the connection it was made on (a re-arm makes a new one). */
  private readonly attachments = new Map<string, { client: CDP.Client; session: Promise<string> }>();
  private readonly onTarget = (change: { tab: string; url: string; title: string } | { tab: string; closed: true }) => {
    if ('closed' in change) {
      this.attachments.delete(change.tab);
      this.forget(change.tab);
    } else this.opened(change.tab, change.url, change.title);
  };

  private constructor(private readonly control: BrowserControl) {
    super();
    control.on('page-target', this.onTarget);
  }

  /** Watches the tabs of the browser `control` guards, starting from those open now. */
  static async start(control: BrowserControl): Promise<ChromiumTabs> {
    const tabs = new ChromiumTabs(control);
    const { targetInfos } = await control.client.send('Target.getTargets');
    // Chromium lists the newest first: told in the order they opened.
    for (const info of targetInfos.reverse()) {
      if (info.type === 'page' && !control.isOwnTarget(info.targetId) && !tabs.has(info.targetId)) {
        tabs.opened(info.targetId, info.url, untitled(info) ? '' : info.title);
      }
    }
    return tabs;
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

  protected async probe(id: string): Promise<TabProbe> {
    const { client, sessionId, forget } = await this.attachment(id);
    try {
      // The title too: Chromium does not always tell a title set as the page loads (control.ts).
      const expression = `[document.visibilityState, document.title, document.readyState === 'loading' ? null : ${ICON_HREF}]`;
      const { result } = await client.send('Runtime.evaluate', { expression, returnByValue: true }, sessionId);
      const [visibility, title, icon] = (result.value ?? []) as unknown[];
      return { visible: visibility === 'visible', ...(typeof title === 'string' ? { title } : {}), ...(typeof icon === 'string' ? { icon } : {}) };
    } catch (error) {
      forget();
      throw error;
    }
  }

  protected async readIcon(id: string, href: string): Promise<unknown> {
    const { client, sessionId, forget } = await this.attachment(id);
    try {
      // A page target's main frame has the target's id.
      const { executionContextId } = await client.send('Page.createIsolatedWorld', { frameId: id, worldName: ICON_WORLD }, sessionId);
      const { result } = await client.send('Runtime.evaluate', { expression: fetchIconScript(href), contextId: executionContextId, awaitPromise: true, returnByValue: true }, sessionId);
      return result.value;
    } catch (error) {
      forget();
      throw error;
    }
  }

  /** The guard's attachment to the tab (made when there is none on the current connection); `forget` drops it after a failure. */
  private async attachment(id: string): Promise<{ client: CDP.Client; sessionId: string; forget: () => void }> {
    const client = this.control.client;
    let attachment = this.attachments.get(id);
    if (!attachment || attachment.client !== client) {
      const session = client.send('Target.attachToTarget', { targetId: id, flatten: true }).then(({ sessionId }) => sessionId);
      attachment = { client, session };
      this.attachments.set(id, attachment);
      session.catch(() => this.attachments.get(id) === attachment && this.attachments.delete(id));
    }
    const held = attachment;
    // A tab whose attachment went (a crash, a navigation to another process) is attached again next time.
    return { client, sessionId: await held.session, forget: () => void (this.attachments.get(id) === held && this.attachments.delete(id)) };
  }

  protected release(): void {
    this.control.off('page-target', this.onTarget);
    for (const [, { client, session }] of this.attachments) {
      void session.then((sessionId) => client.send('Target.detachFromTarget', { sessionId })).catch(() => undefined);
    }
    this.attachments.clear();
  }
}
