// The warm pool: ready displays (sandbox, egress route, Xvnc and window manager) and ready
// Chromium-family browsers at about:blank per language, in the default time zone, at the default
// geometry, so that a session can start in a fraction of a cold start. Taken slots are replaced
// in the background, one at a time, a moment later (a browser starting at once would compete for
// the CPU with the start that took a slot).
import { launchBrowser, WARM_PAGE } from './browser.js';
import type { BrowserImage } from './catalog.js';
import { BrowserControl } from './control.js';
import { interfaceLocale } from './locales.js';
import type { SessionSlot, SlotShape } from './slot.js';

export interface WarmPoolOptions {
  /** Ready displays (Xvnc + window manager + egress route) kept at the default geometry. */
  displays?: number;
  /** Ready Chromium-family browsers at about:blank, per image and language, in the default time zone. */
  browsers?: Array<{ browser: string; language?: string; count?: number }>;
}

/** What the pool needs of its runtime. */
export interface WarmPoolHost {
  geometry: { width: number; height: number };
  timeZone: string;
  startTimeoutMs: number;
  image(id: string): BrowserImage | undefined;
  /** Starts a slot the runtime keeps track of (close() stops it). */
  startSlot(shape: SlotShape): Promise<SessionSlot>;
  /** Stops a slot in the background; close() waits for it. */
  discard(slot: SessionSlot): Promise<void>;
}

/** How long after a warm slot is taken the pool starts its replacement. */
const REFILL_DELAY_MS = 1500;

export class WarmPool {
  private readonly displays: SessionSlot[] = [];
  private readonly browsers: SessionSlot[] = [];
  private refill: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly options: WarmPoolOptions | undefined,
    private readonly host: WarmPoolHost,
  ) {}

  /**
   * A ready slot for a session of `image`, `language` and `timeZone`: a warm browser only when its
   * language and time zone are the session's (both are set when a browser starts), else a warm
   * display; undefined when none fits. A slot whose sandbox ended, or whose browser lost its
   * guard, while it waited is not handed out.
   */
  take(image: BrowserImage, language: string, timeZone: string): { slot: SessionSlot; kind: 'warm-browser' | 'warm-display' } | undefined {
    let taken: { slot: SessionSlot; kind: 'warm-browser' | 'warm-display' } | undefined;
    // A Chromium browser takes any zone at hand-out (zone-override.ts); Firefox keeps the one it started in.
    const fits = (s: SessionSlot) => s.browser?.image.id === image.id && s.browser.language === language && (image.family === 'chromium' || s.browser.timeZone === timeZone);
    const index = this.browsers.findIndex(fits);
    if (index !== -1) taken = { slot: this.browsers.splice(index, 1)[0]!, kind: 'warm-browser' };
    else if (this.displays.length > 0) taken = { slot: this.displays.shift()!, kind: 'warm-display' };
    if (!taken) return undefined;
    if (taken.slot.sandbox.ended() || taken.slot.browser?.control?.lostReason) {
      void this.host.discard(taken.slot);
      return undefined;
    }
    this.schedule(REFILL_DELAY_MS);
    return taken;
  }

  /** Number of ready warm slots, for benchmarks and operators. */
  count(): { displays: number; browsers: number } {
    return { displays: this.displays.length, browsers: this.browsers.length };
  }

  /** Resolves when the pool has been filled to its configured size. */
  async filled(): Promise<void> {
    let before: Promise<void>;
    do {
      before = this.refill;
      await before;
    } while (before !== this.refill);
  }

  /** Stops filling and hands back every ready slot, for the runtime to stop. */
  async close(): Promise<SessionSlot[]> {
    this.closed = true;
    await this.refill.catch(() => undefined);
    return [...this.displays.splice(0), ...this.browsers.splice(0)];
  }

  /** Fills the pool to its size in the background, after `delayMs`. */
  schedule(delayMs = 0): void {
    const warm = this.options;
    if (!warm || this.closed) return;
    const { geometry } = this.host;
    this.refill = this.refill.then(async () => {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      while (!this.closed && this.displays.length < (warm.displays ?? 0)) {
        this.displays.push(await this.host.startSlot({ ...geometry, layout: 'us', language: 'en' }));
      }
      for (const want of warm.browsers ?? []) {
        const image = this.host.image(want.browser);
        if (!image?.enabled || image.family !== 'chromium') continue;
        const language = want.language ?? 'en';
        const locale = interfaceLocale(language, image.locales);
        if (!locale) continue;
        const timeZone = this.host.timeZone;
        const have = () => this.browsers.filter((s) => s.browser?.image.id === image.id && s.browser.language === language).length;
        while (!this.closed && have() < (want.count ?? 1)) {
          const slot = await this.host.startSlot({ ...geometry, layout: 'us', language });
          const timeoutMs = this.host.startTimeoutMs;
          try {
            const process = await launchBrowser({ image, sandbox: slot.sandbox, display: slot.display, sound: slot.sound, ...geometry, language, locale, timeZone, timeoutMs }, WARM_PAGE);
            const browser = await slot.addBrowser({ process, image, language, timeZone, control: null });
            [browser.control] = await Promise.all([BrowserControl.connect(process.devtoolsUrl!, language), process.windowShown]);
          } catch (error) {
            await slot.stop();
            throw error;
          }
          if (this.closed) await slot.stop();
          else this.browsers.push(slot);
          // A warm browser that loses its guard while it waits is not kept (decisions.md 49).
          slot.browser?.control?.once('guard-lost', () => {
            const at = this.browsers.indexOf(slot);
            if (at === -1) return;
            this.browsers.splice(at, 1);
            void this.host.discard(slot);
            this.schedule();
          });
        }
      }
    }).catch(() => {
      /* a warm slot that cannot start leaves the pool short; cold starts still work and report why */
    });
  }
}
