// DevTools control of a Chromium-family session: start the first page and know when its
// navigation has begun ("ready": the page may be slow, hang or fail, and the person still sees
// the browser), keep the browser on http and https pages, and notice a crashed page.
import { EventEmitter } from 'node:events';
import CDP from 'chrome-remote-interface';
import { refusedPage } from './refusals.js';

/** Schemes a page may show. Everything else (file:, chrome:, view-source:, devtools:, ...) is refused. */
const ALLOWED_PAGE = /^(https?:|about:blank|data:|blob:)/i;
// Chromium's own new-tab page must keep working, or every new tab would be refused.
const NEW_TAB_PAGE = /^chrome(-search)?:\/\/(newtab|new-tab-page|new-tab-page-third-party)\b/i;
/** The developer tools' own pages: a viewer never gets them. */
const DEVTOOLS_FRONTEND = /^devtools:/i;

export function isNavigableUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:';
  } catch {
    return false;
  }
}

export interface ControlEvents {
  refused: [{ url: string }];
  'page-crashed': [{ targetId: string; status: string }];
  disconnected: [];
}

export class BrowserControl extends EventEmitter<ControlEvents> {
  private closed = false;
  private constructor(
    readonly client: CDP.Client,
    /** The session's language: the "not allowed" page is shown in it. */
    private readonly language: string,
  ) {
    super();
  }

  static async connect(devtoolsUrl: string, language = 'en'): Promise<BrowserControl> {
    // Given as an object so that a `ws+unix:` address (a confined session's relay) is used as is.
    const client = await CDP({ target: { webSocketDebuggerUrl: devtoolsUrl } as never, local: true });
    const control = new BrowserControl(client, language);
    await control.guard();
    return control;
  }

  private async guard(): Promise<void> {
    const { client } = this;
    client.on('disconnect', () => {
      if (!this.closed) this.emit('disconnected');
    });
    client.on('event', (message) => {
      const params = message.params as Record<string, any>;
      switch (message.method) {
        case 'Fetch.requestPaused':
          // Only non-web schemes are paused (see the patterns below): refuse them in every page.
          void client.send('Fetch.failRequest', { requestId: params.requestId, errorReason: 'BlockedByClient' }).catch(() => undefined);
          this.emit('refused', { url: params.request?.url ?? '' });
          break;
        case 'Target.targetInfoChanged':
        case 'Target.targetCreated': {
          const info = params.targetInfo as { targetId: string; type: string; url: string };
          if (DEVTOOLS_FRONTEND.test(info.url)) {
            // F12, Ctrl+Shift+I and the menu open developer tools as a target of their own: closed
            // at once. (The policy that would forbid them also forbids the engine's own DevTools.)
            this.emit('refused', { url: info.url });
            void this.client.send('Target.closeTarget', { targetId: info.targetId }).catch(() => undefined);
          } else if (info.type === 'page' && info.url && !ALLOWED_PAGE.test(info.url) && !NEW_TAB_PAGE.test(info.url)) {
            // chrome:// and view-source: never reach Fetch, so the page is sent away once it shows.
            this.emit('refused', { url: info.url });
            void this.navigateTarget(info.targetId, refusedPage(info.url, this.language)).catch(() => undefined);
          }
          break;
        }
        case 'Target.targetCrashed':
          this.emit('page-crashed', { targetId: params.targetId, status: params.status });
          break;
      }
    });
    await Promise.all([
      client.send('Target.setDiscoverTargets', { discover: true }),
      // Set on the browser-level session, these patterns apply to every page, also later ones.
      client.send('Fetch.enable', { patterns: [{ urlPattern: 'file:*' }, { urlPattern: 'filesystem:*' }, { urlPattern: 'ftp:*' }] }),
    ]);
  }

  private async attach(targetId: string): Promise<string> {
    const { sessionId } = await this.client.send('Target.attachToTarget', { targetId, flatten: true });
    return sessionId;
  }

  /** The next load event of the page attached as `sessionId`. */
  private loadEvent(sessionId: string): Promise<void> {
    return new Promise<void>((resolve) => {
      const onEvent = (message: CDP.EventMessage) => {
        if (message.sessionId === sessionId && message.method === 'Page.loadEventFired') {
          (this.client as unknown as EventEmitter).removeListener('event', onEvent);
          resolve();
        }
      };
      this.client.on('event', onEvent);
    });
  }

  private async navigateTarget(targetId: string, url: string): Promise<void> {
    const sessionId = await this.attach(targetId);
    await this.client.send('Page.navigate', { url }, sessionId);
    await this.client.send('Target.detachFromTarget', { sessionId }).catch(() => undefined);
  }

  /** The first page target (Chromium opens one at start). */
  async firstPage(): Promise<string> {
    const { targetInfos } = await this.client.send('Target.getTargets');
    const page = targetInfos.find((t) => t.type === 'page');
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
      const { targetInfos } = await this.client.send('Target.getTargets');
      if (targetInfos.some((t) => t.type === 'page' && t.url !== '' && t.url !== 'about:blank')) return;
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
    let onEvent: ((message: CDP.EventMessage) => void) | undefined;
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
      if (onEvent) (this.client as unknown as EventEmitter).removeListener('event', onEvent);
      await this.client.send('Target.detachFromTarget', { sessionId }).catch(() => undefined);
    }
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
    const { targetInfos } = await this.client.send('Target.getTargets');
    return targetInfos.filter((t) => t.type === 'page').map((t) => t.url);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.client.close().catch(() => undefined);
  }
}
