// The warm pool: ready displays (sandbox, egress route, Xvnc, window manager, sound) and ready
// browsers waiting in such slots, one kind per browser and session language, started in the
// default time zone at the default geometry. A session takes one and gets its own choices at
// hand-out (exit, layout, time zone, first page: runtime.ts, slot.ts, zone-override.ts,
// firefox-handout.ts; a Firefox keeps the zone it started in); a warm browser serves one session
// only. How many of each kind is the demand's business (warm-demand.ts) under a memory budget;
// warming yields to live sessions: nothing starts while a session's start waits, just after one,
// or while the node is at its limit (decisions.md 63, 64). With `freeze` (standby on, issue 46,
// decisions.md 160) a ready slot's processes are frozen with the cgroup freezer while it waits, as
// a session in standby is, and thawed as it is taken (`awaken`), before anything is handed out.
import { launchBrowser, WARM_PAGE } from '../browser/browser.js';
import type { BrowserImage } from '../browser/catalog.js';
import { BrowserControl } from '../browser/control.js';
import { interfaceLocale } from '../browser/locales.js';
import { withTimeout } from '../sandbox/processes.js';
import type { SessionSlot, SlotShape } from '../session/slot.js';
import { WarmDemand, type WarmDemandSettings, type WarmKind } from './warm-demand.js';

export interface WarmPoolOptions {
  /** Ready displays (Xvnc + window manager + egress route) kept at the default geometry. */
  displays?: number;
  /** Ready browsers kept whatever the demand, per image and language (tests, benchmarks). */
  browsers?: Array<{ browser: string; language?: string; count?: number }>;
  /** Warm browsers sized by the recent creates, under a memory budget (the engine's default). */
  demand?: WarmDemandSettings;
  /** Freeze each ready slot while it waits (standby on): it uses no CPU until taken. */
  freeze?: boolean;
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
  /** Why warming must wait now (a live session's start, the node's limit), or null when it may go on. */
  busy(): string | null;
  /** What the operator should know that ends nothing (a ready slot that could not be frozen). */
  warn?(message: string): void;
}

/** What the pool holds, for doctor, the health answer and the metrics. */
export interface WarmPoolStats {
  displays: number;
  browsers: Array<WarmKind & { count: number }>;
  /** Warm browsers wanted now (by kind, summed), under the budget. */
  wanted: number;
  /** Memory the ready slots hold now, as the budget counts it (each slot's cgroup, at least its estimate). */
  memoryMb: number;
  budgetMb: number | null;
  /** Warm browsers started since the pool opened, and how many could not start. */
  started: number;
  failed: number;
  /** Why warming waits now, or null. */
  waiting: string | null;
}

/**
 * What one warm slot holds at least, by browser family, and a ready display: its processes' share
 * of memory beside the others (PSS; docs/benchmarks.md, "The warm pool"). A slot's cgroup counts
 * less (the browser's files, read first by another session, are charged to that one), so the
 * budget counts the larger of the two.
 */
export const WARM_ESTIMATE_MB = { chromium: 170, firefox: 470, display: 15 } as const;
/** How often a quiet pool looks again at what it wants (learned kinds age out; the node's load changes). */
const IDLE_CHECK_MS = 1000;

const MB = 1024 * 1024;

export class WarmPool {
  private readonly displays: SessionSlot[] = [];
  private readonly browsers: SessionSlot[] = [];
  private readonly demand: WarmDemand | null;
  private closed = false;
  private loop: Promise<void> = Promise.resolve();
  private wake: (() => void) | undefined;
  /** True while the pool has what it wants (filled() waits for it). */
  private settled = false;
  private started = 0;
  private failed = 0;
  /** What a warm browser of each image was last measured to hold: kept when none is ready, so the plan does not swing. */
  private readonly measuredMb = new Map<string, number>();
  /** A freeze under way, per ready slot: its taker waits for it before the thaw. */
  private readonly resting = new Map<SessionSlot, Promise<void>>();

  constructor(
    private readonly options: WarmPoolOptions | undefined,
    private readonly host: WarmPoolHost,
  ) {
    this.demand = options?.demand ? new WarmDemand(options.demand) : null;
  }

  /** Starts keeping the pool filled, in the background. */
  open(): void {
    if (this.options) this.loop = this.run();
  }

  /** A session of `image` in `language` is being created: what the demand learns from. */
  noteCreate(image: BrowserImage, language: string, timeZone: string): void {
    // A Firefox session in another zone could not take a warm Firefox: it teaches the pool nothing.
    if (!this.demand || !warmable(image) || (image.family !== 'chromium' && timeZone !== this.host.timeZone)) return;
    this.demand.record({ browser: image.id, language }, Date.now());
    this.poke();
  }

  /**
   * A ready slot for a session of `image`, `language` and `timeZone`: a warm browser of its image
   * and language (a Chromium browser takes any zone at hand-out), else a warm display; undefined
   * when none fits. A slot whose sandbox ended, or whose browser lost its guard, is not handed out.
   */
  take(image: BrowserImage, language: string, timeZone: string, displayOnly = false): { slot: SessionSlot; kind: 'warm-browser' | 'warm-display' } | undefined {
    // A session on a saved profile takes a display: a warm browser began on a fresh profile.
    const fits = (s: SessionSlot) => !displayOnly && s.browser?.image.id === image.id && s.browser.language === language && (image.family === 'chromium' || s.browser.timeZone === timeZone);
    const index = this.browsers.findIndex(fits);
    let taken: { slot: SessionSlot; kind: 'warm-browser' | 'warm-display' } | undefined;
    if (index !== -1) taken = { slot: this.browsers.splice(index, 1)[0]!, kind: 'warm-browser' };
    else if (this.displays.length > 0) taken = { slot: this.displays.shift()!, kind: 'warm-display' };
    if (!taken) return undefined;
    this.poke();
    if (taken.slot.sandbox.ended() || taken.slot.browser?.control?.lostReason) {
      void this.host.discard(taken.slot);
      return undefined;
    }
    return taken;
  }

  /**
   * Thaws a slot take() handed back, if it waits frozen; resolves once its processes run. Rejects
   * when the kernel does not thaw it: the slot is then discarded, and the caller starts cold.
   */
  async awaken(slot: SessionSlot): Promise<void> {
    await this.resting.get(slot);
    if (!slot.sandbox.frozen?.()) return;
    try {
      await slot.sandbox.freeze!(false);
    } catch (error) {
      void this.host.discard(slot);
      throw error;
    }
  }

  /** Freezes a slot that now waits in the pool (with `freeze`); one that cannot be frozen waits awake, one that is left half frozen is let go. */
  private rest(slot: SessionSlot): void {
    if (!this.options?.freeze || !slot.sandbox.freeze) return;
    const freezing = slot.sandbox
      .freeze(true)
      .catch(async (error: Error) => {
        this.host.warn?.(`a warm slot could not be frozen while it waits, so it waits awake: ${error.message}`);
        await slot.sandbox.freeze!(false).catch(() => this.drop(slot));
      })
      .finally(() => this.resting.delete(slot));
    this.resting.set(slot, freezing);
  }

  /** Lets a ready slot go (it ended, lost its guard, or could not be thawed after a failed freeze). */
  private drop(slot: SessionSlot): void {
    for (const list of [this.browsers, this.displays]) {
      const at = list.indexOf(slot);
      if (at === -1) continue;
      list.splice(at, 1);
      void this.host.discard(slot);
      this.poke();
    }
  }

  /** Number of ready warm slots (the health answer). */
  count(): { displays: number; browsers: number } {
    return { displays: this.displays.length, browsers: this.browsers.length };
  }

  stats(): WarmPoolStats {
    const browsers = new Map<string, WarmKind & { count: number }>();
    for (const slot of this.browsers) {
      const kind = { browser: slot.browser!.image.id, language: slot.browser!.language };
      const key = `${kind.browser} ${kind.language}`;
      browsers.set(key, { ...kind, count: (browsers.get(key)?.count ?? 0) + 1 });
    }
    const held = [...this.displays, ...this.browsers].reduce((sum, slot) => sum + slotMb(slot), 0);
    return {
      displays: this.displays.length,
      browsers: [...browsers.values()],
      wanted: this.plan().browsers.reduce((sum, want) => sum + want.count, 0),
      memoryMb: Math.round(held),
      budgetMb: this.demand?.settings.memoryMb ?? null,
      started: this.started,
      failed: this.failed,
      waiting: this.host.busy(),
    };
  }

  /** Resolves once the pool holds what it wants (rejects, saying so, if that takes over `timeoutMs`). */
  async filled(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && this.options && !this.settled) {
      if (Date.now() > deadline) throw new Error(`the warm pool did not fill within ${timeoutMs} ms (${JSON.stringify(this.stats())})`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Stops filling and hands back every ready slot, for the runtime to stop. */
  async close(): Promise<SessionSlot[]> {
    this.closed = true;
    this.poke();
    await this.loop;
    await Promise.all(this.resting.values());
    return [...this.displays.splice(0), ...this.browsers.splice(0)];
  }

  /** Makes the pool look again now (a slot was taken, a create was noted). */
  private poke(): void {
    this.settled = false;
    this.wake?.();
  }

  /** What the pool wants now: ready displays, and browsers of each kind. */
  private plan(): { displays: number; browsers: Array<{ kind: WarmKind; count: number }> } {
    const displays = this.options?.displays ?? 0;
    const fixed = (this.options?.browsers ?? []).map((want) => ({ kind: { browser: want.browser, language: want.language ?? 'en' }, count: want.count ?? 1 }));
    const learned = this.demand?.wants(Date.now(), (browser) => this.estimateMb(browser), displays * WARM_ESTIMATE_MB.display) ?? [];
    const browsers = [...fixed];
    for (const want of learned) {
      const same = browsers.find((b) => b.kind.browser === want.kind.browser && b.kind.language === want.kind.language);
      if (same) same.count = Math.max(same.count, want.count);
      else browsers.push(want);
    }
    return { displays, browsers: browsers.filter((want) => this.startable(want.kind)) };
  }

  /** What a warm browser of `browser` holds: the mean of those ready now, else the last measured, else the estimate. */
  private estimateMb(browser: string): number {
    const measured = this.browsers.filter((s) => s.browser?.image.id === browser).map(slotMb);
    if (measured.length > 0) this.measuredMb.set(browser, measured.reduce((a, b) => a + b, 0) / measured.length);
    return this.measuredMb.get(browser) ?? WARM_ESTIMATE_MB[this.host.image(browser)?.family ?? 'chromium'];
  }

  private startable(kind: WarmKind): boolean {
    const image = this.host.image(kind.browser);
    return Boolean(image?.enabled && warmable(image) && interfaceLocale(kind.language, image.locales));
  }

  private ofKind(kind: WarmKind): SessionSlot[] {
    return this.browsers.filter((s) => s.browser?.image.id === kind.browser && s.browser.language === kind.language);
  }

  /** Keeps the pool at what it wants, one slot at a time, until closed. */
  private async run(): Promise<void> {
    while (!this.closed) {
      const plan = this.plan();
      // Shrinking: a kind no longer wanted (quiet, or over the budget) gives back its oldest browser.
      const surplus = this.browsers.find((slot) => {
        const want = plan.browsers.find((w) => w.kind.browser === slot.browser?.image.id && w.kind.language === slot.browser.language);
        return this.ofKind({ browser: slot.browser!.image.id, language: slot.browser!.language }).length > (want?.count ?? 0);
      });
      if (surplus) {
        this.browsers.splice(this.browsers.indexOf(surplus), 1);
        // A freeze under way ends first: the stop thaws a frozen slot before it kills.
        await this.resting.get(surplus);
        await this.host.discard(surplus);
        continue;
      }
      if (this.displays.length > plan.displays) {
        const display = this.displays.pop()!;
        await this.resting.get(display);
        await this.host.discard(display);
        continue;
      }
      const missing = plan.browsers.find((want) => this.ofKind(want.kind).length < want.count);
      const needed = missing !== undefined || this.displays.length < plan.displays;
      this.settled = !needed;
      if (needed && this.host.busy() === null) {
        try {
          if (this.displays.length < plan.displays) {
            const display = await this.host.startSlot({ ...this.host.geometry, layout: 'us', language: 'en' });
            this.displays.push(display);
            this.rest(display);
          } else await this.warmBrowser(missing!.kind);
        } catch {
          // A warm slot that cannot start leaves the pool short; cold starts still work and say why.
          this.failed++;
          await this.pause(Math.min(30_000, 1000 * this.failed));
        }
        continue;
      }
      await this.pause(needed ? 200 : IDLE_CHECK_MS);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async warmBrowser(kind: WarmKind): Promise<void> {
    const image = this.host.image(kind.browser)!;
    const { language } = kind;
    const locale = interfaceLocale(language, image.locales)!;
    const { geometry, timeZone, startTimeoutMs: timeoutMs } = this.host;
    const slot = await this.host.startSlot({ ...geometry, layout: 'us', language });
    this.started++;
    const ready = async () => {
      // Chromium waits on an empty page (WARM_PAGE says why); Firefox on the blank page.
      const page = image.family === 'chromium' ? WARM_PAGE : 'about:blank';
      const process = await launchBrowser({ image, sandbox: slot.sandbox, display: slot.display, sound: slot.sound, ...geometry, language, locale, timeZone, timeoutMs }, page);
      const browser = await slot.addBrowser({ process, image, language, timeZone, control: null, tabs: null });
      if (process.devtoolsUrl) [browser.control] = await Promise.all([BrowserControl.connect(process.devtoolsUrl, language, process.reader), process.windowShown]);
    };
    try {
      // Bounded as a session's start is: a browser that never answers must not hold the pool up.
      await withTimeout(ready(), timeoutMs, `a warm ${image.name}`);
    } catch (error) {
      await this.host.discard(slot);
      throw error;
    }
    if (this.closed) return void (await this.host.discard(slot));
    this.browsers.push(slot);
    // A warm browser that loses its guard, or whose browser or display ends, while it waits is not kept (decisions.md 49).
    const drop = () => this.drop(slot);
    slot.browser?.control?.once('guard-lost', drop);
    void slot.browser?.process.process.exited.then(drop);
    void slot.display.server.exited.then(drop);
    this.rest(slot);
  }
}

/**
 * Whether a browser of `image` can wait warm: every family can; Chromium takes any zone at
 * hand-out, Firefox serves sessions in the zone it started in (the default) only.
 */
function warmable(image: BrowserImage): boolean {
  return image.family === 'chromium' || image.family === 'firefox';
}

/** What a ready slot holds now, in MB, as the budget counts it: its cgroup's memory, at least the estimate. */
function slotMb(slot: SessionSlot): number {
  const estimate = WARM_ESTIMATE_MB[slot.browser?.image.family ?? 'display'];
  return Math.max(estimate, (slot.sandbox.memoryBytes() ?? 0) / MB);
}
