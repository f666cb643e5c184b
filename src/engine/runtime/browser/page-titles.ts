// When the DevTools guard asks Chromium for a tab's title (issue 43). Chromium tells a page
// target's info when it opens and when it navigates, before the page has given a title, and not
// when the page gives one later (the document's <title> once parsed, a script's): the tab strip,
// the share state's events and a recording's timeline would wait for the next navigation. So each
// page target, attached or not, is asked for its info a few times after each change told without
// a title (control.ts: Target.getTargetInfo, which the browser answers from what it shows, never
// the page's scripts, and cuts to 4096 characters).

/** When a page target is asked for its title, in ms after a change told without one (most pages have theirs within the first). */
export const TITLE_LOOKS_MS = [150, 500, 1500, 4000, 10_000];

/** The looks at every page target's title: one timer per target at most, started again by each change told without a title. */
export class TitleLooks {
  /** Each page target's address as last told, and its pending look. */
  private readonly targets = new Map<string, { url: string; timer?: NodeJS.Timeout }>();
  private stopped = false;

  constructor(
    /** Asks the browser for the target's info and tells what it found (never calls `changed`). */
    private readonly look: (targetId: string) => Promise<void>,
  ) {}

  /** DevTools told a page target's info: its title is looked for from the first step again, unless it came with one at the same address. */
  changed(targetId: string, url: string, titled: boolean): void {
    const known = this.targets.get(targetId);
    if (this.stopped || (known && known.url === url && titled)) return;
    clearTimeout(known?.timer);
    const looking = { url };
    this.targets.set(targetId, looking);
    this.next(targetId, looking, 0);
  }

  /**
   * Whether the target is open and at `url` as last told: a look that answers after the target
   * closed or navigated (its answer is older than the event that told the new address) tells
   * nothing, so a late answer never puts a tab back at the page it left. Looks add titles only;
   * addresses come from the browser's events.
   */
  isAt(targetId: string, url: string): boolean {
    return this.targets.get(targetId)?.url === url;
  }

  /** The target closed. */
  forget(targetId: string): void {
    clearTimeout(this.targets.get(targetId)?.timer);
    this.targets.delete(targetId);
  }

  /** No more looks (the guard closes). */
  stop(): void {
    this.stopped = true;
    for (const { timer } of this.targets.values()) clearTimeout(timer);
    this.targets.clear();
  }

  /** Schedules look `step` (each after the one before has answered), while these looks are the target's latest. */
  private next(targetId: string, looking: { url: string; timer?: NodeJS.Timeout }, step: number): void {
    if (this.stopped || step >= TITLE_LOOKS_MS.length || this.targets.get(targetId) !== looking) return;
    const wait = TITLE_LOOKS_MS[step]! - (TITLE_LOOKS_MS[step - 1] ?? 0);
    looking.timer = setTimeout(() => {
      void this.look(targetId)
        .catch(() => undefined)
        .finally(() => this.next(targetId, looking, step + 1));
    }, wait);
    looking.timer.unref();
  }
}
