// A Chromium-family session's tabs (tabs.ts) through the engine's DevTools guard (control.ts): the
// guard tells every page target as it opens, changes and closes; a tab is switched with
// `Target.activateTarget`, closed with `Target.closeTarget`, opened with `Target.createTarget`.
// Which tab is on screen is read from each page (`document.visibilityState`, evaluated without
// enabling any domain, so the page sees nothing), with its title; the guard keeps one attachment
// per tab for it.
import type CDP from 'chrome-remote-interface';
import { untitled, type BrowserControl } from './control.js';
import { SessionTabs, type TabProbe } from './tabs.js';

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
    const client = this.control.client;
    let attachment = this.attachments.get(id);
    if (!attachment || attachment.client !== client) {
      const session = client.send('Target.attachToTarget', { targetId: id, flatten: true }).then(({ sessionId }) => sessionId);
      attachment = { client, session };
      this.attachments.set(id, attachment);
      session.catch(() => this.attachments.get(id) === attachment && this.attachments.delete(id));
    }
    const sessionId = await attachment.session;
    try {
      // The title too: Chromium does not always tell a title set as the page loads (control.ts).
      const { result } = await client.send('Runtime.evaluate', { expression: '[document.visibilityState, document.title]', returnByValue: true }, sessionId);
      const [visibility, title] = (result.value ?? []) as unknown[];
      return { visible: visibility === 'visible', ...(typeof title === 'string' ? { title } : {}) };
    } catch (error) {
      // A tab whose attachment went (a crash, a navigation to another process) is attached again next time.
      if (this.attachments.get(id) === attachment) this.attachments.delete(id);
      throw error;
    }
  }

  protected release(): void {
    this.control.off('page-target', this.onTarget);
    for (const [, { client, session }] of this.attachments) {
      void session.then((sessionId) => client.send('Target.detachFromTarget', { sessionId })).catch(() => undefined);
    }
    this.attachments.clear();
  }
}
