// Hibernation (issue 46, decisions.md 165-168): a session in standby for `standby.hibernateAfterMinutes`
// (or its plan's `standby_hibernate_after_minutes`) has its state saved with the profile machinery
// (cookies, storage, saved logins, permissions and its open tabs, sealed in the store:
// profiles/hibernation-state.ts), then its processes end and its uid, display and memory go back
// to the node. It stays `running`, keeps its id, links, owner and limits, and no node holds it
// (its row's node_id is null), so the first attachment on ANY node resumes it there: the same door
// as standby's wake (`wake()`), a warm display, its state restored and its tabs reopened with the
// same one active. Many arrivals at once share one resume. A state that does not open, or passes
// the caps, ends the session with the reason. Its downloads and uploads are in the state too
// (decisions.md 177), restored into its folders by the resume; a session whose state with them is
// past the cap is not hibernated: it stays in standby. A session on a saved profile is hibernated
// too, its profile still held by it; if it ends asleep, its profile is written back from the
// state (decisions.md 179).
import { profileFamily, type BrowserTab } from '../runtime/index.js';
import type { HibernationStates } from '../profiles/hibernation-state.js';
import type { SessionRow, Store } from '../store/store.js';
import type { NodeRuntime } from './node-runtime.js';
import type { NodeRuns } from './runs.js';
import type { Standby } from './standby.js';

/** The tabs a session had when it was hibernated, as its row keeps them. */
interface SavedTabs {
  urls: string[];
  active: number;
}

/** How long a resume waits for the restored tabs before it puts the saved active one on screen. */
const TABS_WAIT_MS = 5_000;

export interface HibernationOptions {
  store: Store;
  nodeId: string;
  runtime: Pick<NodeRuntime, 'freeze' | 'captureProfile' | 'measureProfile' | 'image'>;
  runs: Pick<NodeRuns, 'runtimeOf' | 'endsOf' | 'resume' | 'hibernated' | 'flushBytes'>;
  standby: Pick<Standby, 'isFrozen' | 'setAside'>;
  states: HibernationStates;
  /** Minutes in standby before the session is hibernated; null: never (off, or by its plan). */
  afterMinutes(row: SessionRow): Promise<number | null>;
  /** Ends a session whose state could not be saved or resumed, with why (the service suspends it). */
  end(sessionId: string, reason: string): Promise<void>;
  /** A resume done (`resumed`, with its ms) or failed. */
  onResume?(outcome: 'resumed' | 'failed', ms: number): void;
  /** The session was hibernated (`asleep`: true) or resumed, its n-th wake (logs, the `session.resumed` webhook). */
  told?(sessionId: string, hibernated: boolean, ordinal: number): void;
}

export class Hibernation {
  /** Since when (performance.now()) each session of this node has been in standby, as ticks saw it. */
  private readonly asleepSince = new Map<string, number>();
  private readonly after = new Map<string, number | null>();
  /** Sessions that stay in standby here (a state that could not be kept). */
  private readonly kept = new Set<string>();
  /** Hibernations under way: a wake meanwhile waits for it, then resumes. */
  private readonly going = new Map<string, Promise<void>>();
  /** Resumes under way on this node: every arrival meanwhile waits for the same one. */
  private readonly resuming = new Map<string, Promise<void>>();

  constructor(private readonly options: HibernationOptions) {}

  /** Whether hibernation can happen on this node at all (profiles on, with a key; the runtime captures). */
  get enabled(): boolean {
    return this.options.states.enabled && this.options.runtime.captureProfile !== undefined;
  }

  /**
   * Makes the session run: waits for a hibernation under way, then wakes it from standby (it runs
   * here) or resumes it (hibernated). Rejects when it could not be resumed: it then ends with why.
   */
  async wake(sessionId: string, fromStandby: (id: string) => Promise<void>): Promise<void> {
    await this.going.get(sessionId);
    if (this.options.runs.runtimeOf(sessionId)) return fromStandby(sessionId);
    let resuming = this.resuming.get(sessionId);
    if (!resuming) {
      resuming = this.resume(sessionId).finally(() => this.resuming.delete(sessionId));
      this.resuming.set(sessionId, resuming);
    }
    return resuming;
  }

  /** The session ended: its saved states go, and nothing more about it here. */
  forget(sessionId: string): void {
    this.asleepSince.delete(sessionId);
    this.after.delete(sessionId);
    this.kept.delete(sessionId);
    // One on a saved profile keeps its state until its end has written the profile back from it (runs.ts).
    this.options.states.dropEnded(sessionId).catch(() => undefined);
  }

  /** One look at this node's running sessions (after standby's): those in standby long enough are hibernated. */
  async tick(rows: readonly SessionRow[]): Promise<void> {
    if (!this.enabled) return;
    const now = performance.now();
    for (const row of rows) {
      const id = row.id;
      if (!this.options.standby.isFrozen(id)) {
        this.asleepSince.delete(id);
        continue;
      }
      if (this.kept.has(id) || this.going.has(id)) continue;
      const since = this.asleepSince.get(id) ?? now;
      this.asleepSince.set(id, since);
      if (!this.after.has(id)) this.after.set(id, await this.options.afterMinutes(row));
      const after = this.after.get(id);
      if (after === null || after === undefined || now - since < after * 60_000) continue;
      const going = this.hibernate(row).finally(() => this.going.delete(id));
      this.going.set(id, going);
      await going;
    }
  }

  /** Saves the session's state (its files too) and ends its processes; one past the cap stays in standby. */
  private async hibernate(row: SessionRow): Promise<void> {
    const { runtime, runs, standby, states, store } = this.options;
    const id = row.id;
    const runtimeId = runs.runtimeOf(id);
    const image = runtime.image(row.browser);
    if (!runtimeId || !image || !runtime.freeze || !runtime.captureProfile) return;
    // Its state is measured by a program inside it, which needs it thawed; one the kernel does not thaw is left to standby's wake.
    if (!(await runtime.freeze(runtimeId, false).then(() => true, () => false))) return void this.kept.add(id);
    const ends = runs.endsOf(id);
    // A state past the cap (its files count) could not be kept, and its browser would be closed for nothing: it stays in standby.
    const fits = !runtime.measureProfile || (await runtime.measureProfile(runtimeId, { tabs: true, files: true, maxBytes: states.cap }).then(() => true, () => false));
    if (!fits) {
      this.kept.add(id);
      // Back to sleep, unless an attachment woke it meanwhile.
      if (standby.isFrozen(id)) await runtime.freeze(runtimeId, true).catch(() => undefined);
      return;
    }
    // An attachment that came meanwhile woke it: it stays awake.
    if (!standby.isFrozen(id)) return;
    const tabs = ends?.tabs?.list() ?? [];
    const saved: SavedTabs = { urls: tabs.map((tab) => tab.url), active: Math.max(0, tabs.findIndex((tab) => tab.active)) };
    // From here a wake waits for this hibernation (wake()), then resumes.
    standby.setAside(id, true);
    try {
      await runs.flushBytes(row, runtimeId);
      const written = await states.write(id, profileFamily(image), (capture, consume) => runtime.captureProfile!(runtimeId, capture, consume));
      const fields = { hibernated: true, hibernation_state: written.stateId, hibernation_chunks: written.chunks, hibernation_tabs: JSON.stringify(saved), node_id: null, runtime_id: null };
      // Its processes end first: once the API says hibernated, they are gone.
      await runs.hibernated(id);
      if (!(await store.updateRunningSession(id, fields))) {
        await states.drop(id);
        return;
      }
      await states.drop(id, written.stateId);
      this.asleepSince.delete(id);
      this.options.told?.(id, true, (row.wakes ?? 0) + 1);
    } catch (error) {
      // Its browser was closed to save it: it cannot go back to standby, so it ends, saying why.
      await this.options.end(id, `the session could not be hibernated: ${(error as Error).message}`).catch(() => undefined);
    } finally {
      standby.setAside(id, false);
    }
  }

  /** Takes a hibernated session on this node and starts it on its saved state. */
  private async resume(sessionId: string): Promise<void> {
    const { store, states, runs, runtime, nodeId } = this.options;
    const row = await store.session(sessionId);
    if (!row || row.status !== 'running' || !row.hibernated) return;
    if (!(await store.claimHibernated(sessionId, nodeId))) {
      // Another node took it (its attachment came first there): this connection is closed, the next is forwarded.
      if ((await store.session(sessionId))?.node_id !== nodeId) throw new Error('the session is being resumed on another node');
    }
    const began = performance.now();
    const fail = async (why: string): Promise<never> => {
      this.options.onResume?.('failed', performance.now() - began);
      const reason = `the session could not be resumed from hibernation: ${why}`;
      await this.options.end(sessionId, reason).catch(() => undefined);
      throw new Error(reason);
    };
    const image = runtime.image(row.browser);
    if (!image) return fail(`${row.browser} is not installed on this node`);
    // Damaged, altered or over the caps: refused before anything starts.
    await states.check(row).catch((error: Error) => fail(`its saved state was refused (${error.message})`));
    const ordinal = (row.wakes ?? 0) + 1;
    // The row is written within the resume's turn (runs.ts): an end meanwhile waits for it, or the resume stops what it started.
    let unwritten: Error | undefined;
    const commit = (runtimeId: string) =>
      store.updateRunningSession(sessionId, { hibernated: false, standby: false, hibernation_state: null, hibernation_chunks: 0, hibernation_tabs: null, runtime_id: runtimeId, wakes: ordinal, node_id: nodeId })
        .catch((error: Error) => Promise.reject((unwritten = error)));
    // A store that failed leaves the session hibernated for the next attachment; a start that failed ends it.
    const runtimeId = await runs.resume(row, states.source(row, profileFamily(image)), commit).catch((error: Error) => (error === unwritten ? Promise.reject(error) : fail(error.message.split('\n')[0]!.slice(0, 300))));
    if (runtimeId === null) return; // ended meanwhile: what the resume started is stopped
    await states.drop(sessionId);
    await this.activate(sessionId, row.hibernation_tabs);
    this.options.onResume?.('resumed', performance.now() - began);
    this.options.told?.(sessionId, false, ordinal);
  }

  /**
   * Puts the tabs back in their saved order and the one that was active on screen, once the
   * browser's restore has told them all (it opens the active one first, and may show another).
   */
  private async activate(sessionId: string, stored: string | null | undefined): Promise<void> {
    const tabs = this.options.runs.endsOf(sessionId)?.tabs;
    let saved: SavedTabs;
    try {
      saved = JSON.parse(stored ?? '') as SavedTabs;
    } catch {
      return;
    }
    if (!tabs || saved.urls.length < 2) return;
    const until = performance.now() + TABS_WAIT_MS;
    let order = match(saved.urls, tabs.list());
    while (order.includes(undefined) && performance.now() < until) {
      await new Promise<void>((resolve) => {
        const done = () => (clearTimeout(timer), tabs.off('changed', done), resolve());
        const timer = setTimeout(done, 250);
        tabs.on('changed', done);
      });
      order = match(saved.urls, tabs.list());
    }
    const ids = order.filter((id): id is string => id !== undefined);
    tabs.arrange(ids);
    const active = order[saved.active];
    if (active && !tabs.list().find((tab) => tab.id === active)?.active) await tabs.activate(active).catch(() => undefined);
  }
}

/** For each saved address in order, the id of a restored tab showing it (each tab used once), or undefined while none does. */
function match(urls: readonly string[], tabs: readonly BrowserTab[]): Array<string | undefined> {
  const free = [...tabs];
  return urls.map((url) => {
    const index = free.findIndex((tab) => tab.url === url);
    return index < 0 ? undefined : free.splice(index, 1)[0]!.id;
  });
}
