// Standby (issue 46, decisions.md 141): a running session with nothing attached costs no CPU. After
// `standby.afterSeconds` (or its plan's `standby_after_seconds`) with no viewer, listener, watcher
// or program counted by presence and no files or tabs call under way, a session this node runs,
// that is not recorded, has its whole process tree frozen with the cgroup freezer
// (runtime/sandbox/cgroups.ts). Any attachment wakes it before it is served: the router's open
// path and the files and tabs calls wait for `wake()`. Many arrivals at once wake it once. Waking
// is counted (the session's row, the metrics); a session that cannot be woken ends with a reason,
// never left a frozen corpse. The store's `standby` flag tells vm/data, on any node.
import type { Presence } from '../channels/presence.js';
import type { SessionRow, Store } from '../store/store.js';
import type { NodeRuntime } from './node-runtime.js';

export interface StandbyOptions {
  runtime: Pick<NodeRuntime, 'freeze'>;
  presence: Presence;
  store: Store;
  /** The runtime id of a session running here, or undefined. */
  runtimeOf(sessionId: string): string | undefined;
  /** Seconds with nothing attached before the session goes into standby; null: never (off, or by its plan). */
  afterSeconds(row: SessionRow): Promise<number | null>;
  /** Ends a session that could not be frozen safely or woken, with why (the service suspends it). */
  end(sessionId: string, reason: string): Promise<void>;
  /** A wake done (`woken`, with its ms) or failed (`failed`). */
  onWake?(outcome: 'woken' | 'failed', ms: number): void;
  /**
   * The session went into standby (`asleep`) or was woken from it, once its row says so (logs,
   * webhooks); `ordinal`: its n-th standby, and the wake that ends it, share n.
   */
  told?(sessionId: string, asleep: boolean, ordinal: number): void;
}

export class Standby {
  /** Sessions frozen now, with which standby of theirs it is (1 the first; the row's wakes + 1). */
  private readonly frozen = new Map<string, number>();
  /** A freeze under way, per session: a wake asked meanwhile waits for it, then thaws. */
  private readonly freezing = new Map<string, Promise<void>>();
  /** A wake under way, per session: every arrival meanwhile waits for the same one. */
  private readonly waking = new Map<string, Promise<void>>();
  /** Files and tabs calls under way, per session. */
  private readonly busy = new Map<string, number>();
  /** Since when (performance.now()) nothing has been attached, per session running here. */
  private readonly quietSince = new Map<string, number>();
  /** Each session's wait before standby (its plan's, read once), null: never. */
  private readonly after = new Map<string, number | null>();
  /** Sessions whose sandbox cannot be frozen (unconfined, no freezer): not tried again. */
  private readonly unfreezable = new Set<string>();
  /** Sessions set aside while they are hibernated (hibernation.ts): neither frozen nor thawed here. */
  private readonly aside = new Set<string>();

  constructor(private readonly options: StandbyOptions) {
    // Any attachment (whatever path counted it) wakes the session; the router also waits for it.
    options.presence.on('attachment', ({ id, joined }) => {
      this.quietSince.set(id, performance.now());
      if (joined) this.wake(id).catch(() => undefined);
    });
  }

  /** Whether the session is in standby here now. */
  isFrozen(sessionId: string): boolean {
    return this.frozen.has(sessionId);
  }

  /** Sessions in standby on this node (the metrics' gauge). */
  count(): number {
    return this.frozen.size;
  }

  /**
   * Thaws the session if it is in standby (or going into it); resolves once its processes run.
   * Rejects when it could not be woken: it is then being ended with the reason.
   */
  async wake(sessionId: string): Promise<void> {
    await this.freezing.get(sessionId);
    if (!this.frozen.has(sessionId)) return;
    let waking = this.waking.get(sessionId);
    if (!waking) {
      waking = this.thaw(sessionId).finally(() => this.waking.delete(sessionId));
      this.waking.set(sessionId, waking);
    }
    return waking;
  }

  /** Wakes the session and keeps it awake until the answer's release (a files or tabs call). */
  async hold(sessionId: string): Promise<() => void> {
    this.busy.set(sessionId, (this.busy.get(sessionId) ?? 0) + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (this.busy.get(sessionId) ?? 1) - 1;
      if (left > 0) this.busy.set(sessionId, left);
      else this.busy.delete(sessionId);
      this.quietSince.set(sessionId, performance.now());
    };
    try {
      await this.wake(sessionId);
    } catch (error) {
      release();
      throw error;
    }
    return release;
  }

  /** Runs `work` with the session awake (a files or tabs call). */
  async awake<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const release = await this.hold(sessionId);
    try {
      return await work();
    } finally {
      release();
    }
  }

  /** The session ended here: nothing more about it (its runtime thaws it before it stops). */
  forget(sessionId: string): void {
    for (const map of [this.quietSince, this.after, this.busy]) map.delete(sessionId);
    this.frozen.delete(sessionId);
    this.unfreezable.delete(sessionId);
    this.aside.delete(sessionId);
  }

  /** Hibernation takes the session (true): standby forgets it and leaves it alone until it is given back (false). */
  setAside(sessionId: string, aside: boolean): void {
    if (!aside) return void this.aside.delete(sessionId);
    this.aside.add(sessionId);
    this.frozen.delete(sessionId);
    this.quietSince.delete(sessionId);
  }

  /** One look at this node's running sessions (every second): those quiet long enough go into standby. */
  async tick(rows: readonly SessionRow[]): Promise<void> {
    const now = performance.now();
    const running = new Set(rows.map((row) => row.id));
    for (const id of this.quietSince.keys()) if (!running.has(id)) this.quietSince.delete(id);
    for (const row of rows) {
      const id = row.id;
      if (this.frozen.has(id) || this.freezing.has(id) || this.waking.has(id) || this.unfreezable.has(id) || this.aside.has(id)) continue;
      // A recorded session records on; an attended or busy one is in use.
      if (row.recorded || this.options.presence.attended(id) || this.busy.has(id) || !this.options.runtimeOf(id)) {
        this.quietSince.set(id, now);
        continue;
      }
      const since = this.quietSince.get(id);
      if (since === undefined) {
        this.quietSince.set(id, now);
        continue;
      }
      if (!this.after.has(id)) this.after.set(id, await this.options.afterSeconds(row));
      const after = this.after.get(id);
      if (after === null || after === undefined || now - since < after * 1000) continue;
      const freezing = this.freeze(id, (row.wakes ?? 0) + 1).finally(() => this.freezing.delete(id));
      this.freezing.set(id, freezing);
      await freezing;
    }
  }

  /** Freezes the session's processes; an attachment that came meanwhile thaws it again at once. */
  private async freeze(sessionId: string, ordinal: number): Promise<void> {
    const runtimeId = this.options.runtimeOf(sessionId);
    if (!runtimeId || !this.options.runtime.freeze) return;
    try {
      if (!(await this.options.runtime.freeze(runtimeId, true))) {
        this.unfreezable.add(sessionId);
        return;
      }
    } catch (error) {
      // Part of it may be frozen: thawed (it stays awake from then on), or it ends rather than stay half asleep.
      this.unfreezable.add(sessionId);
      await this.options.runtime.freeze(runtimeId, false).catch(async (thawError: Error) => {
        await this.options.end(sessionId, `the session could not be thawed after a failed standby (${(error as Error).message}): ${thawError.message}`).catch(() => undefined);
      });
      return;
    }
    this.frozen.set(sessionId, ordinal);
    await this.options.store.updateSession(sessionId, { standby: true }).catch(() => undefined);
    this.options.told?.(sessionId, true, ordinal);
  }

  private async thaw(sessionId: string): Promise<void> {
    const began = performance.now();
    const runtimeId = this.options.runtimeOf(sessionId);
    try {
      if (!runtimeId || !this.options.runtime.freeze) throw new Error('the session no longer runs here');
      await this.options.runtime.freeze(runtimeId, false);
    } catch (error) {
      this.frozen.delete(sessionId);
      this.options.onWake?.('failed', performance.now() - began);
      const reason = `the session could not be woken from standby: ${(error as Error).message}`;
      await this.options.end(sessionId, reason).catch(() => undefined);
      throw new Error(reason);
    }
    const ordinal = this.frozen.get(sessionId) ?? 0;
    this.frozen.delete(sessionId);
    this.quietSince.set(sessionId, performance.now());
    this.options.onWake?.('woken', performance.now() - began);
    await this.options.store.sessionWoke(sessionId).catch(() => undefined);
    this.options.told?.(sessionId, false, ordinal);
  }
}
