// A Firefox ESR session's tabs (tabs.ts) through its remote agent, WebDriver BiDi (decisions.md
// 103). Watched only in app-window sessions (`window: "app"`), where the browser's own strip is
// hidden. The agent runs there and in sessions created for programs (firefox-agent.ts, decisions.md 143). The watcher
// is one client of the browser's BiDi hub (bidi-hub.ts, decisions.md 169), which shares the agent's one
// BiDi session with the programs that drive an app window: its subscriptions, answers and sandbox reads are its own.
// Tabs are the top-level browsing contexts; what a tab shows and its title are read in a sandbox
// of the engine's own (a BiDi sandbox: the page's scripts never see it, nor change what `document`
// answers there), every string cut there before it crosses (issue 43), and its icon fetched there
// (favicon.ts). Same-document navigations (`history.pushState`, a fragment) are followed too, so
// they reach the tab strip and a recording's timeline (issue 49).
import type { BiDiHub, BiDiHubClient } from './bidi-hub.js';
import { fetchIconScript } from './favicon.js';
import { SessionTabs, TAB_LOOK, type TabProbe } from './tabs.js';

/** The BiDi sandbox the engine reads pages in. */
const SANDBOX = 'rbk-tabs';
const COMMAND_TIMEOUT_MS = 5000;
/** What BiDi tells of a page's address changing within its document: `history.pushState` and `replaceState`, a fragment. */
const SAME_DOCUMENT_EVENTS = ['browsingContext.historyUpdated', 'browsingContext.fragmentNavigated'];

interface ContextInfo {
  context: string;
  url: string;
  parent?: string | null;
}

export class FirefoxTabs extends SessionTabs {
  private nextId = 0;
  /** Whether this Firefox tells same-document navigations (SAME_DOCUMENT_EVENTS): set as it connects. */
  sameDocument = false;
  private readonly pending = new Map<number, { resolve: (value: any) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  private readonly client: BiDiHubClient;
  private hubLost = false;

  private constructor(hub: BiDiHub) {
    super();
    this.client = hub.join((text) => this.receive(text), () => {
      this.hubLost = true;
      for (const [, call] of this.pending) call.reject(new Error('the BiDi connection closed'));
      this.pending.clear();
    });
  }

  /**
   * Opens a session of the engine's own on the hub of the Firefox's remote agent, within
   * `timeoutMs`, and starts from the tabs open now.
   */
  static async connect(hub: BiDiHub, timeoutMs: number): Promise<FirefoxTabs> {
    const tabs = new FirefoxTabs(hub);
    try {
      // Within the start's time: a busy machine's Firefox, still loading its first page, answers late.
      // Prompts are left alone ("ignore"): a person answers them, as in any Firefox, or a program that drives (decisions.md 170).
      await tabs.send('session.new', { capabilities: { alwaysMatch: { unhandledPromptBehavior: { default: 'ignore' } } } }, timeoutMs);
      await tabs.send('session.subscribe', { events: ['browsingContext.contextCreated', 'browsingContext.contextDestroyed', 'browsingContext.navigationStarted', 'browsingContext.load'] }, timeoutMs);
      // Same-document navigations (history.pushState and replaceState, a new fragment): the address
      // changes with no navigation begun (issue 49). Asked apart, so a Firefox older than these
      // events (before 136) still has its tab strip; it then misses them, as `sameDocument` says.
      tabs.sameDocument = await tabs.send('session.subscribe', { events: SAME_DOCUMENT_EVENTS }, timeoutMs).then(() => true, () => false);
      const { contexts } = (await tabs.send('browsingContext.getTree', { maxDepth: 0 }, timeoutMs)) as { contexts: ContextInfo[] };
      for (const context of contexts) tabs.opened(context.context, context.url, '');
    } catch (error) {
      tabs.release();
      throw error;
    }
    return tabs;
  }

  protected async activateTab(id: string): Promise<void> {
    await this.send('browsingContext.activate', { context: id });
  }

  protected async closeTab(id: string): Promise<void> {
    await this.send('browsingContext.close', { context: id });
  }

  protected async openTab(url: string | undefined): Promise<string> {
    const { context } = (await this.send('browsingContext.create', { type: 'tab' })) as { context: string };
    if (url) await this.send('browsingContext.navigate', { context, url, wait: 'none' });
    // A tab BiDi creates stays in the background: the driver opened it to see it.
    await this.send('browsingContext.activate', { context });
    return context;
  }

  protected async navigateTab(id: string, url: string): Promise<void> {
    // Not waited for: the tab's address is told as its navigation starts (navigationStarted), its title when it loads.
    await this.send('browsingContext.navigate', { context: id, url, wait: 'none' });
  }

  protected async probe(id: string): Promise<TabProbe> {
    const answer = (await this.send('script.evaluate', {
      expression: TAB_LOOK,
      target: { context: id, sandbox: SANDBOX },
      awaitPromise: false,
    })) as { type: string; result?: { value?: Array<{ value?: unknown }> } };
    const [visibility, title, icon] = answer.result?.value ?? [];
    return { visible: visibility?.value === 'visible', title: typeof title?.value === 'string' ? title.value : '', ...(typeof icon?.value === 'string' ? { icon: icon.value } : {}) };
  }

  protected async readIcon(id: string, href: string): Promise<unknown> {
    const answer = (await this.send('script.evaluate', {
      expression: fetchIconScript(href),
      target: { context: id, sandbox: SANDBOX },
      awaitPromise: true,
    })) as { result?: { type?: string; value?: unknown } };
    // A BiDi remote value: a string, or an array of two strings.
    const value = answer.result?.value;
    if (answer.result?.type === 'array' && Array.isArray(value)) return value.map((item: { value?: unknown }) => item?.value);
    return value;
  }

  protected release(): void {
    this.hubLost = true;
    this.client.leave();
  }

  private send(method: string, params: Record<string, unknown>, timeoutMs = COMMAND_TIMEOUT_MS): Promise<unknown> {
    if (this.hubLost) return Promise.reject(new Error('the BiDi connection is closed'));
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer from Firefox`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.client.send({ id, method, params });
    });
  }

  private receive(text: string): void {
    let message: { id?: number; type?: string; method?: string; params?: ContextInfo; result?: unknown; message?: string; error?: string };
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.id !== undefined) {
      const call = this.pending.get(message.id);
      if (!call) return;
      this.pending.delete(message.id);
      clearTimeout(call.timer);
      if (message.type === 'error') call.reject(new Error(`${message.error}: ${message.message}`));
      else call.resolve(message.result);
      return;
    }
    const info = message.params;
    if (!info || info.parent) return;
    switch (message.method) {
      case 'browsingContext.contextCreated':
        this.opened(info.context, info.url, '');
        break;
      case 'browsingContext.navigationStarted':
      case 'browsingContext.load':
        if (this.has(info.context)) this.opened(info.context, info.url, message.method === 'browsingContext.load' ? this.titleOf(info.context) : '');
        break;
      // The same document at another address: its title stays until a look reads a new one. How
      // often a page may do this is the recording timeline's to bound (recordings/timeline.ts), as for Chromium.
      case 'browsingContext.historyUpdated':
      case 'browsingContext.fragmentNavigated':
        if (this.has(info.context) && typeof info.url === 'string') this.opened(info.context, info.url, this.titleOf(info.context));
        break;
      case 'browsingContext.contextDestroyed':
        this.forget(info.context);
        break;
    }
  }

  private titleOf(id: string): string {
    return this.list().find((tab) => tab.id === id)?.title ?? '';
  }
}
