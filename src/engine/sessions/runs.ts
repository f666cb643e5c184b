// The sessions this node runs: their starts in the background (with the displays viewers may join
// early), the runtime behind each running session, their byte meters, and their ends. Moves each
// session through the lifecycle (lifecycle.ts) as its runtime starts, fails or stops. A session's
// resume and end take turns (issue 53): an end during a resume stops what the resume started.
import type { ArchiveSource, RecordingSpec, SessionEnds } from '../runtime/index.js';
import type { SessionRow, Store } from '../store/store.js';
import { timeZoneFor, upstreamFor, type ExitSettings } from './exits.js';
import type { MoveCause, SessionStatus } from './lifecycle.js';
import type { NodeRuntime, SessionSpec } from './node-runtime.js';
import type { ProfileService } from '../profiles/profiles.js';
import type { HibernationStates } from '../profiles/hibernation-state.js';
import { StartTrace } from './start-trace.js';

/** An archive of nothing (two zero blocks): a profile never saved, read while the display started. */
const emptyArchive: ArchiveSource = async (sink) => void sink.end(Buffer.alloc(1024));

/**
 * Moves a session's status (the service's move: store, then followers); false when it was in none
 * of `from`. A start's trace, when given, times the write and the telling (start-trace.ts).
 */
export type Move = (id: string, cause: MoveCause, from: SessionStatus[], to: SessionStatus, fields?: Partial<SessionRow>, trace?: StartTrace) => Promise<boolean>;

export interface NodeRunsOptions {
  store: Store;
  runtime: NodeRuntime;
  exits: ExitSettings;
  now: () => number;
  move: Move;
  /** Where a recorded session's recording goes, and who hears of its recorder (recordings/recordings.ts); absent: this node records nothing. */
  recording?: (sessionId: string) => RecordingSpec;
  /** Bytes written to the meters since the last write: all egress, and the residential part. */
  onBytes?: (egress: number, residential: number) => void;
  /** Saved profiles (decisions.md 85-89): restored at the start, written back at a normal end. */
  profiles?: Pick<ProfileService, 'archiveForSession' | 'save' | 'release'>;
  /** This node's id: a hibernated session (no node's) it ends becomes its own until the end is done. */
  nodeId: string;
  /** Hibernated sessions' saved states: one that ends hibernated writes its saved profile back from its state (decisions.md 179). */
  hibernationStates?: Pick<HibernationStates, 'capture' | 'drop'>;
}

export class NodeRuns {
  /** Session id -> runtime session id, for sessions whose runtime is up in this process. */
  private readonly live = new Map<string, string>();
  private readonly starting = new Set<Promise<void>>();
  /** Starts in progress, so that removing a starting session can end its start at once. */
  private readonly startAborts = new Map<string, AbortController>();
  /** The ends of sessions still starting (their display): a viewer may connect before the first page is ready. */
  private readonly startingEnds = new Map<string, SessionEnds>();
  /** The session of each runtime still starting here: its events (a first page) may come before its start resolves. */
  private readonly startingRuntimes = new Map<string, string>();
  /** Resumes under way: an end of the session cuts its start short. */
  private readonly resumes = new Map<string, AbortController>();
  /**
   * Each session's life, one step at a time (a resume, an end): the last step queued, gone once it
   * is done. Without it an end that finds no runtime yet lets a resume's browser run on uncounted.
   */
  private readonly lives = new Map<string, Promise<void>>();

  constructor(private readonly options: NodeRunsOptions) {}

  /** Whether this node starts or runs the session now. */
  has(sessionId: string): boolean {
    return this.startAborts.has(sessionId) || this.resumes.has(sessionId) || this.live.has(sessionId);
  }

  /** Runs `step` once the session's earlier steps are done; the session's turn is free again after it. */
  private inTurn<T>(sessionId: string, step: () => Promise<T>): Promise<T> {
    const done = (this.lives.get(sessionId) ?? Promise.resolve()).then(step);
    const last = done.then(() => undefined, () => undefined);
    this.lives.set(sessionId, last);
    void last.then(() => {
      if (this.lives.get(sessionId) === last) this.lives.delete(sessionId);
    });
    return done;
  }

  /** The session a runtime session belongs to, if it runs here. */
  sessionOfRuntime(runtimeId: string): string | undefined {
    return [...this.live].find(([, id]) => id === runtimeId)?.[0] ?? this.startingRuntimes.get(runtimeId);
  }

  /** What a session running or starting here has for the channels (runtime/session/session-ends.ts), or undefined. */
  endsOf(sessionId: string): SessionEnds | undefined {
    const runtimeId = this.live.get(sessionId);
    return runtimeId ? this.options.runtime.get(runtimeId)?.ends : this.startingEnds.get(sessionId);
  }

  /** Whether any session's runtime is up here. */
  runsAny(): boolean {
    return this.live.size > 0;
  }

  /** The runtime id of a session running here. */
  runtimeOf(sessionId: string): string | undefined {
    return this.live.get(sessionId);
  }

  /**
   * Starts a session's runtime in the background; its outcome moves the session on. Nothing waits
   * between this call and the runtime's: the first await is the runtime's own start.
   */
  start(row: SessionRow, trace: StartTrace = new StartTrace('placed'), profileArchive?: ArchiveSource | null): void {
    const { runtime, now, move } = this.options;
    const abort = new AbortController();
    this.startAborts.set(row.id, abort);
    trace.step('handoff');
    const task = runtime
      .startSession({ ...this.specOf(row, abort), ...(row.url ? { url: row.url } : {}), ...this.profileOf(row, profileArchive) })
      .then(
        async (started) => {
          trace.step('runtime');
          trace.ranStart(started);
          let moved: boolean;
          try {
            moved = await move(row.id, 'ready', ['starting'], 'running', { running_at: now(), ever_ran: true, runtime_id: started.id }, trace);
          } catch {
            // The store failed (locked, disk full, unreachable): the browser ends, the session stays
            // `starting` in the store and is started again once the store answers (a heartbeat
            // finds it), or ends as `error` at the next restart.
            await runtime.stopSession(started.id).catch(() => undefined);
            return;
          }
          if (moved) {
            this.live.set(row.id, started.id);
            return;
          }
          // Removed while it was starting: end it now.
          await runtime.stopSession(started.id);
          await move(row.id, 'stopped', ['stopping'], 'deleted', { ended_at: now() });
        },
        async (error: Error) => {
          const reason = error.message.split('\n')[0]!.slice(0, 500);
          if (abort.signal.aborted) {
            // Removed while starting: a session the caller ended, not one that failed.
            await move(row.id, 'stopped', ['stopping'], 'deleted');
          } else if (!(await move(row.id, 'start-failed', ['starting'], 'error', { counted: false, end_reason: reason, ended_at: now() }))) {
            await move(row.id, 'stopped', ['stopping'], 'deleted', { counted: false, end_reason: reason, ended_at: now() });
          }
        },
      )
      // A store that fails while the start's outcome is written leaves the row for recovery; the
      // process goes on.
      .catch(() => undefined)
      .finally(() => {
        this.starting.delete(task);
        this.startAborts.delete(row.id);
        this.startingEnds.delete(row.id);
        for (const [runtimeId, sessionId] of this.startingRuntimes) if (sessionId === row.id) this.startingRuntimes.delete(runtimeId);
      });
    this.starting.add(task);
  }

  /** What the runtime starts for the session (its first page and profile aside); its ends are known while it starts. */
  private specOf(row: SessionRow, abort: AbortController): SessionSpec {
    const upstreamProxyUrl = upstreamFor(this.options.exits, row);
    return {
      signal: abort.signal,
      onEnds: (ends, runtimeId) => {
        this.startingEnds.set(row.id, ends);
        this.startingRuntimes.set(runtimeId, row.id);
      },
      browser: row.browser,
      language: row.language,
      timeZone: timeZoneFor(this.options.exits, row),
      layout: row.layout,
      ...(upstreamProxyUrl ? { upstreamProxyUrl } : {}),
      ...(row.app_window ? { window: 'app' as const } : {}),
      ...(row.automation ? { automation: true } : {}),
      ...(row.recorded && this.options.recording ? { recording: this.options.recording(row.id) } : {}),
    };
  }

  /**
   * Starts a hibernated session again on its saved state, its tabs restored (hibernation.ts,
   * decisions.md 166), and `commit`s its runtime id to its row in the same turn, so an end waits
   * for both. Resolves with the runtime id once the browser is ready and the row says it runs here;
   * with null when the session ended meanwhile (its start cut short, or the commit found it no
   * longer `running`), what it started stopped; or rejects with why (a start that failed, a commit
   * that threw: its browser is stopped too). Its status does not move: it was `running` all along.
   */
  resume(row: SessionRow, archive: ArchiveSource, commit: (runtimeId: string) => Promise<boolean>): Promise<string | null> {
    const { runtime } = this.options;
    const abort = new AbortController();
    this.resumes.set(row.id, abort);
    return this.inTurn(row.id, async () => {
      let runtimeId: string | undefined;
      try {
        // An end came first: nothing is started for a session that no longer runs.
        if (abort.signal.aborted) return null;
        runtimeId = (await runtime.startSession({ ...this.specOf(row, abort), profile: { archive, tabs: true, files: true } })).id;
        this.live.set(row.id, runtimeId);
        if (!abort.signal.aborted && (await commit(runtimeId))) return runtimeId;
      } catch (error) {
        if (!abort.signal.aborted || runtimeId) {
          await this.dropResumed(row.id, runtimeId);
          throw error;
        }
      } finally {
        if (this.resumes.get(row.id) === abort) this.resumes.delete(row.id);
        this.startingEnds.delete(row.id);
        for (const [id, sessionId] of this.startingRuntimes) if (sessionId === row.id) this.startingRuntimes.delete(id);
      }
      // Ended meanwhile: nothing it started outlives it, before the end goes on.
      await this.dropResumed(row.id, runtimeId);
      return null;
    });
  }

  /** A resume that does not stand: its runtime, if it came up, stops and runs here no more. */
  private async dropResumed(sessionId: string, runtimeId: string | undefined): Promise<void> {
    if (!runtimeId) return;
    if (this.live.get(sessionId) === runtimeId) this.live.delete(sessionId);
    await this.options.runtime.stopSession(runtimeId).catch(() => undefined);
  }

  /** A session hibernated here: its runtime stopped after its state was saved; it runs nowhere now. */
  async hibernated(id: string): Promise<void> {
    const runtimeId = this.live.get(id);
    this.live.delete(id);
    if (runtimeId) await this.options.runtime.stopSession(runtimeId).catch(() => undefined);
  }

  /**
   * The saved profile a session starts on: the stream of the archive the create checked, or
   * (placed here by another node) the one read while the display starts. A profile never saved
   * starts fresh.
   */
  private profileOf(row: SessionRow, archive: ArchiveSource | null | undefined): { profile?: { archive: ArchiveSource | Promise<ArchiveSource>; tabs: boolean } } {
    const { profiles } = this.options;
    if (!row.profile_id || !profiles || archive === null) return {};
    const tabs = row.profile_tabs === true;
    if (archive) return { profile: { archive, tabs } };
    const reading = profiles.archiveForSession(row);
    reading.catch(() => undefined);
    return { profile: { archive: reading.then((read) => read ?? emptyArchive), tabs } };
  }

  /** Ends a start in progress; false when none is (the session was placed here but not begun). */
  abortStart(sessionId: string): boolean {
    const start = this.startAborts.get(sessionId);
    start?.abort();
    return start !== undefined;
  }

  /**
   * Stops a session's runtime after its meters are written (and, at a normal end, its saved
   * profile written back: decisions.md 89); then moves it on to `then`. A resume under way is cut
   * short, and the end waits for it: its browser is stopped before the end looks for one.
   */
  end(id: string, then: 'deleted' | null, saveProfile = false): Promise<void> {
    this.resumes.get(id)?.abort();
    return this.inTurn(id, () => this.ended(id, then, saveProfile));
  }

  private async ended(id: string, then: 'deleted' | null, saveProfile: boolean): Promise<void> {
    const { profiles, runtime, store, hibernationStates } = this.options;
    const row = await store.session(id);
    const runtimeId = this.live.get(id) ?? row?.runtime_id;
    this.live.delete(id);
    if (row) await this.flushBytes(row, runtimeId);
    // Ended while hibernated: nothing runs, its state is what it had. The row is this node's until
    // the end is done (an engine killed meanwhile ends it at its restart, and frees its profile).
    const asleep = row?.hibernated === true && !runtimeId;
    if (asleep) await store.updateSession(id, { node_id: this.options.nodeId }).catch(() => undefined);
    if (row?.profile_id && profiles) {
      if (saveProfile && row.profile_save && runtimeId && runtime.captureProfile) await profiles.save(row, (capture, consume) => runtime.captureProfile!(runtimeId, capture, consume));
      // Its saved profile is written back from its hibernated state, by the same save (decisions.md 179).
      else if (saveProfile && row.profile_save && asleep && hibernationStates) await profiles.save(row, (_capture, consume) => hibernationStates.capture(row, consume));
      await profiles.release(row).catch(() => undefined);
    }
    if (row?.hibernated) await hibernationStates?.drop(id).catch(() => undefined);
    if (runtimeId) await this.options.runtime.stopSession(runtimeId).catch(() => undefined);
    if (then) await this.options.move(id, 'stopped', ['stopping'], then);
  }

  /** Writes the session's egress byte meters when they changed since the last write. */
  async flushBytes(row: Pick<SessionRow, 'id' | 'egress' | 'egress_bytes'>, runtimeId: string | null | undefined, store: Store = this.options.store): Promise<void> {
    const session = runtimeId ? this.options.runtime.get(runtimeId) : undefined;
    if (!session) return;
    const { sent, received } = session.egress.bytes();
    if (sent + received === row.egress_bytes) return;
    await store.updateSession(row.id, { egress_bytes: sent + received, ...(row.egress === 'residential' ? { residential_bytes: sent + received } : {}) });
    const added = Math.max(0, sent + received - Number(row.egress_bytes));
    this.options.onBytes?.(added, row.egress === 'residential' ? added : 0);
  }

  /** Ends every start and runtime here without moving any session (the store already ended them). */
  async abandonAll(): Promise<void> {
    for (const abort of [...this.startAborts.values(), ...this.resumes.values()]) abort.abort();
    const ending = [...this.live].map(async ([sessionId, runtimeId]) => {
      this.live.delete(sessionId);
      await this.options.runtime.stopSession(runtimeId).catch(() => undefined);
    });
    await Promise.allSettled([...ending, ...this.starting]);
  }

  /** Ends starts in progress (their displays and browsers with them) and waits for them. */
  async close(): Promise<void> {
    for (const abort of [...this.startAborts.values(), ...this.resumes.values()]) abort.abort();
    await Promise.allSettled([...this.starting]);
  }
}
