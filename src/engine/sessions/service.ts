// Sessions as the service sees them: create (admission.ts, then creation.ts's quota and
// idempotency transaction with placement.ts's node, then the runtime starts in the background:
// runs.ts), list, remove, meters, the lifecycle (lifecycle.ts, decisions.md 1-6), limits over
// time (sweeper.ts), recovery after a restart (presence lives in channels/presence.ts). Answers domain outcomes
// (outcomes.ts); each API version words them at its edge (http/).
import { EventEmitter } from 'node:events';
import { SESSION_LIST_MAX, SESSION_LIST_WINDOW_DAYS, type CreateRequest } from '../../protocol/index.js';
import type { Accounts } from '../accounts/accounts.js';
import type { AccountUsage } from '../accounts/usage.js';
import type { EngineConfig, Plan } from '../config.js';
import type { ArchiveSource, RecordingSpec, SessionEnds } from '../runtime/index.js';
import type { AccountRow, NodeWithLoad, SessionRow, SessionSummaryRow, Store } from '../store/store.js';
import { admit, type RecordingAdmission } from './admission.js';
import { createSession } from './creation.js';
import { movableFrom, nodeGoneMoves, type MoveCause, type SessionStatus } from './lifecycle.js';
import type { NodeRuntime } from './node-runtime.js';
import type { ProfileService } from '../profiles/profiles.js';
import type { ClusterLink } from './cluster-link.js';
import type { Presence } from '../channels/presence.js';
import { sessionOwner } from '../store/owner.js';
import type { CreateOutcome, CreateTerms, NodeAnswer, RemoveOutcome } from './outcomes.js';
import { placeSession } from './placement.js';
import { NodeRuns } from './runs.js';
import { StartTrace, type StartTraceReport } from './start-trace.js';
import { nextMoveOf, WakeTurns } from './status-wait.js';
import { Standby } from './standby.js';
import { Hibernation } from './hibernation.js';
import { HibernationStates } from '../profiles/hibernation-state.js';
import { every, sweep } from './sweeper.js';

export type { ClusterLink, NodeAnswer as Reply };

const DAY_MS = 86_400_000;
/** A wait of standby or hibernation as configured: `0` or `false` turns it off (null). */
const offWhenZero = (after: number | false): number | null => (after === false || after === 0 ? null : after);
/** What a session id looks like (vm/create makes them): anything else is no session, without a look-up. */
const SESSION_ID = /^[0-9a-f]{32}$/;

export interface SessionServiceOptions {
  store: Store;
  /** This node's id: the sessions it runs carry it. */
  nodeId: string;
  cluster?: ClusterLink;
  /** Who is attached to each session (channels/presence.ts): an attended session is not idle. */
  presence: Presence;
  accounts: Accounts;
  /** An account's pools, meters and programmatic access (accounts/usage.ts): the create's quota reads its pools. */
  usage: AccountUsage;
  config: EngineConfig;
  runtime: NodeRuntime;
  now: () => number;
  /** Where share links point (the viewer site). */
  shareBase: () => string;
  secret: string;
  /** Where a recorded session's recording goes, and who hears of its recorder (recordings/recordings.ts). */
  recording?: (sessionId: string) => RecordingSpec;
  /** A recording's caps (recordings/caps.ts): a `record: true` create is checked against the node's floor and the account's megabytes. */
  recordingCaps?: RecordingAdmission;
  /** Egress bytes of this node's sessions as they are written (the metrics count them). */
  onBytes?: (egress: number, residential: number) => void;
  /** Saved profiles (decisions.md 85-89); absent: a create with `profile` is refused. */
  profiles?: ProfileService;
  /** A wake from standby done or failed, with its ms (the metrics count them). */
  onWake?: (outcome: 'woken' | 'failed', ms: number) => void;
  /** A resume from hibernation done or failed, with its ms (the metrics count them). */
  onResume?: (outcome: 'resumed' | 'failed', ms: number) => void;
}

/** A move this node made (or, for `node-gone`, made for a lost node): logs, metrics and webhooks follow it. */
export interface SessionMove {
  id: string;
  to: SessionStatus;
  cause: MoveCause;
  /** A start's trace, on the move to running made here (start-trace.ts; logged at debug level). */
  trace?: StartTraceReport;
}

export interface SessionServiceEvents {
  /** A session's status moved (share links follow this). */
  status: [{ id: string; status: string }];
  /** A move made here, with its cause (operations/session-observer.ts). */
  moved: [SessionMove];
  /** A session of this node went into standby (`asleep`) or was woken from it, its n-th time (`ordinal`; standby.ts; its row says so already). */
  standby: [{ id: string; asleep: boolean; ordinal: number; hibernated?: boolean }];
  /** A session of this node was hibernated (hibernation.ts; its row says so already); its resume is told as `standby` with `asleep: false`. */
  hibernated: [{ id: string; ordinal: number }];
}

export class SessionService extends EventEmitter<SessionServiceEvents> {
  private readonly store: Store;
  readonly nodeId: string;
  private readonly now: () => number;
  private readonly runs: NodeRuns;
  private readonly accounts: AccountUsage;
  private readonly ending = new Set<Promise<unknown>>();
  private stopSweeping: (() => void) | undefined;
  private stopStandby: (() => void) | undefined;
  /** Sessions of this node in standby (standby.ts, decisions.md 141). */
  readonly standby: Standby;
  /** Sessions hibernated, and resumed on the first touch (hibernation.ts, decisions.md 165). */
  readonly hibernation: Hibernation;
  /** Aborted at close(): reads waiting for a status change answer then. */
  private readonly closing = new AbortController();
  /** Long polls one move wakes are answered a turn at a time (status-wait.ts). */
  private readonly wakeTurns = new WakeTurns();


  constructor(private readonly options: SessionServiceOptions) {
    super();
    this.setMaxListeners(0);
    this.store = options.store;
    this.nodeId = options.nodeId;
    this.now = options.now;
    this.accounts = options.usage;
    const hibernationStates = new HibernationStates(this.store, options.profiles);
    this.runs = new NodeRuns({ store: this.store, nodeId: this.nodeId, runtime: options.runtime, exits: options.config, now: this.now, move: (...move) => this.move(...move), hibernationStates, ...(options.onBytes ? { onBytes: options.onBytes } : {}), ...(options.recording ? { recording: options.recording } : {}), ...(options.profiles ? { profiles: options.profiles } : {}) });
    this.standby = new Standby({
      runtime: options.runtime,
      presence: options.presence,
      store: this.store,
      runtimeOf: (id) => this.runs.runtimeOf(id),
      afterSeconds: async (row) => offWhenZero((await this.planOf(row))?.standby_after_seconds ?? options.config.standby.afterSeconds),
      end: (id, reason) => this.suspend(id, reason),
      ...(options.onWake ? { onWake: options.onWake } : {}),
      told: (id, asleep, ordinal) => this.emit('standby', { id, asleep, ordinal }),
    });
    this.hibernation = new Hibernation({
      store: this.store,
      nodeId: this.nodeId,
      runtime: options.runtime,
      runs: this.runs,
      standby: this.standby,
      states: hibernationStates,
      afterMinutes: async (row) => offWhenZero((await this.planOf(row))?.standby_hibernate_after_minutes ?? options.config.standby.hibernateAfterMinutes),
      end: (id, reason) => this.suspend(id, reason),
      ...(options.onResume ? { onResume: options.onResume } : {}),
      told: (id, hibernated, ordinal) => (hibernated ? this.emit('hibernated', { id, ordinal }) : this.emit('standby', { id, asleep: false, ordinal, hibernated: true })),
    });
    // A session that ends is forgotten by standby (its runtime thaws it before stopping it) and hibernation (its saved state goes).
    this.on('status', ({ id, status }) => {
      if (status === 'running' || status === 'starting') return;
      this.standby.forget(id);
      this.hibernation.forget(id);
    });
    this.options.runtime.on('event', (event) => {
      // Only events that end a session suspend it; notices (a refused navigation) do not (runtime-events.ts).
      if (!event.ends) return;
      const sessionId = this.runs.sessionOfRuntime(event.sessionId);
      if (sessionId) this.track(this.suspend(sessionId, event.message));
    });
  }

  /** Moves a session's status in the store, as the lifecycle allows, and tells whoever follows it, on every node. */
  private async move(id: string, cause: MoveCause, from: SessionStatus[], to: SessionStatus, fields: Partial<SessionRow> = {}, trace?: StartTrace): Promise<boolean> {
    const moved = await this.store.moveSession(id, movableFrom(from, to, cause), to, fields);
    trace?.step('statusWrite');
    if (moved) {
      // Followers first (viewers, long-polls, other nodes): logs, metrics and webhooks come after.
      this.moved(id, to);
      trace?.step('told');
      this.emit('moved', { id, to, cause, ...(trace ? { trace: trace.report() } : {}) });
    }
    return moved;
  }

  /** A status change made here: followers on this node hear it at once, other nodes through the cluster. */
  private moved(id: string, status: string): void {
    this.emit('status', { id, status });
    this.options.cluster?.announce(id, status);
  }

  /** A status change another node made (cluster/node-link.ts calls this). */
  movedElsewhere(id: string, status: string): void {
    this.emit('status', { id, status });
  }

  /** This node ended a session of a lost node in the store (cluster/node-link.ts): followers here, and the move's observers. */
  endedForLostNode(id: string, status: string): void {
    this.emit('status', { id, status });
    this.emit('moved', { id, to: status as SessionStatus, cause: 'node-gone' });
  }

  /** The session a runtime session of this node belongs to (runtime events name runtime sessions). */
  sessionOfRuntime(runtimeId: string): string | undefined {
    return this.runs.sessionOfRuntime(runtimeId);
  }

  /** What a session of this engine that is running or starting has for the channels (viewers join it early), or undefined. */
  endsOf(sessionId: string): SessionEnds | undefined {
    return this.runs.endsOf(sessionId);
  }

  /**
   * The plan a session takes its slot from, as configured now; undefined when it is no longer
   * configured (its switches keep their defaults). Channels read what they offer from it.
   */
  planOf(row: SessionRow): Promise<Plan | undefined> {
    return this.options.usage.planOf(row);
  }

  /** Wakes a session from standby, or resumes it from hibernation here: resolves once it runs (rejects when it could not; it then ends). */
  wake(sessionId: string): Promise<void> {
    return this.hibernation.wake(sessionId, (id) => this.standby.wake(id));
  }

  /** Wakes a session and keeps it awake until the answer's release (a files call). */
  async hold(sessionId: string): Promise<() => void> {
    await this.wake(sessionId);
    return this.standby.hold(sessionId);
  }

  /** Runs `work` with the session awake (a tabs call). */
  async awake<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    await this.wake(sessionId);
    return this.standby.awake(sessionId, work);
  }

  // Create, read, remove ------------------------------------------------------------------------

  /** Creates a session under the calling interface's terms; its runtime starts in the background on the node it was placed on. */
  async create(account: AccountRow, request: CreateRequest, terms: CreateTerms): Promise<CreateOutcome> {
    const { config, cluster } = this.options;
    // A session's framing origins narrow the account's (issue 44): any other is refused before anything is taken.
    if (request.embed) {
      const allowed = await this.store.embedOrigins(account.id);
      const stranger = request.embed.origins.find((origin) => !allowed.includes(origin));
      if (stranger !== undefined) return { status: 'denied', field: 'embed', reason: 'embed-origin-not-allowed', origin: stranger, allowed };
    }
    const trace = new StartTrace('create');
    const admitted = await admit({ image: (id) => this.options.runtime.image(id), config, store: this.store, pools: () => this.accounts.pools(account), now: this.now(), ...(this.options.recordingCaps ? { recordingCaps: this.options.recordingCaps } : {}) }, account, request, terms);
    if ('reason' in admitted) return admitted;
    // A saved profile: the account's, of the browser's family, its state opened and checked (decisions.md 86-89).
    let profile: { archive: ArchiveSource | null; claim: NonNullable<Parameters<typeof createSession>[0]['profile']>['claim'] } | undefined;
    if (request.profile) {
      if (!this.options.profiles) return { status: 'denied', reason: 'profile', message: 'profile: saved profiles are not offered by this service' };
      const prepared = await this.options.profiles.prepareSession(account, request.profile, admitted.image);
      if (prepared.status !== 'ok') return { status: prepared.status, reason: 'profile', message: prepared.message };
      profile = prepared.value;
    }
    trace.step('admission');
    const { outcome, session } = await createSession({
      ...this.options,
      at: this.now(),
      usage: this.accounts,
      ...(profile && request.profile ? { profile: { id: request.profile.id, save: request.profile.save, tabs: request.profile.tabs, claim: profile.claim } } : {}),
      place: (tx) => trace.within('placement', () => placeSession(tx, { browser: admitted.image.id, language: admitted.language, nodeId: this.nodeId, capacity: config.node.capacity, ...(cluster ? { alive: (node: NodeWithLoad) => cluster.alive(node) } : {}) })),
    }, account, request, admitted, terms);
    trace.step('transaction');
    if (session) {
      if (session.node_id === this.nodeId) this.runs.start(session, trace, profile?.archive);
      else cluster?.placed(session.node_id!, session.id);
    }
    return outcome;
  }

  /** Another node placed a session here: start it, unless it started already or was removed meanwhile. */
  async startPlaced(sessionId: string): Promise<void> {
    if (this.runs.has(sessionId)) return;
    const row = await this.store.session(sessionId);
    if (!row || row.node_id !== this.nodeId || row.status !== 'starting') return;
    if (this.runs.has(sessionId)) return;
    this.runs.start(row);
  }

  /** The account's sessions of the list window (newest first), or the one with `id`. */
  async list(account: AccountRow, id: string | undefined): Promise<SessionSummaryRow[]> {
    return id === undefined
      ? await this.store.sessionSummariesOf(account.id, this.now() - SESSION_LIST_WINDOW_DAYS * DAY_MS, SESSION_LIST_MAX)
      : [SESSION_ID.test(id) ? await this.store.sessionSummary(id) : undefined].filter((row): row is SessionSummaryRow => row !== undefined && row.account_id === account.id);
  }

  /**
   * The session `id` of the account, answered as soon as it is no longer `starting`, or after
   * `waitMs` (vm/data's `wait`, decisions.md 82), or when `signal` aborts (the caller left). A
   * session that is not starting, or not the account's, is answered at once.
   */
  async readWhenStarted(account: AccountRow, id: string, waitMs: number, signal?: AbortSignal): Promise<SessionSummaryRow[]> {
    if (waitMs <= 0 || !SESSION_ID.test(id)) return this.list(account, id);
    const ended = signal ? AbortSignal.any([signal, this.closing.signal]) : this.closing.signal;
    const wait = nextMoveOf(this, id, waitMs, ended, this.wakeTurns);
    try {
      const rows = await this.list(account, id);
      if (rows[0]?.status !== 'starting') return rows;
      await wait.moved;
      return await this.list(account, id);
    } finally {
      wait.end();
    }
  }

  async remove(account: AccountRow, id: string): Promise<RemoveOutcome> {
    const row = SESSION_ID.test(id) ? await this.store.session(id) : undefined;
    if (!row || row.account_id !== account.id) return { status: 'denied', field: 'id', reason: 'unknown-session' };
    // A browser that runs (or starts) on another node is ended by that node.
    const owner = sessionOwner(row, this.nodeId);
    if (owner.at === 'node' && this.options.cluster) {
      const answer = await this.options.cluster.removeOn(owner.nodeId, account.id, id);
      return answer.status === 'ok' ? { status: 'ok' } : { status: answer.status, reason: 'relayed', message: answer.message };
    }
    const now = this.now();
    switch (row.status) {
      case 'starting':
        if (await this.move(id, 'removed', ['starting'], 'stopping', { ended_at: now, end_reason: 'removed' })) {
          // A start in progress is cancelled: its processes end now, and it moves the session on to
          // deleted. Placed here but not begun yet: nothing runs, so it is deleted at once.
          if (!this.runs.abortStart(id)) await this.move(id, 'stopped', ['stopping'], 'deleted');
        }
        break;
      case 'running':
        if (await this.move(id, 'removed', ['running'], 'stopping', { ended_at: now, end_reason: 'removed' })) this.track(this.runs.end(id, 'deleted', true));
        break;
      case 'error':
      case 'suspended':
        await this.move(id, 'removed', ['error', 'suspended'], 'deleted');
        break;
    }
    return { status: 'ok' };
  }

  /** The service ends a running session itself (decisions.md 1: suspended); `saveProfile` at a normal end (idle, maximum duration), not a crash. */
  async suspend(id: string, reason: string, saveProfile = false): Promise<void> {
    if (await this.move(id, 'suspended', ['running'], 'suspended', { ended_at: this.now(), end_reason: reason.slice(0, 500) })) {
      await this.runs.end(id, null, saveProfile);
    }
  }

  // Over time -----------------------------------------------------------------------------------

  /**
   * After a restart: this node's sessions whose runtime is gone end (decisions.md 1). Sessions of
   * an older SQLite file, from before nodes, belong to the one node there is.
   */
  async recover(): Promise<{ suspended: number; errored: number; deleted: number }> {
    if (this.store.dialect === 'sqlite') await this.store.adoptSessionsWithoutNode(this.nodeId);
    const moved = await this.store.atomically((tx) =>
      tx.endSessionsOfNode(this.nodeId, nodeGoneMoves(this.now(), { running: 'the engine restarted', starting: 'the engine restarted before the session was ready' })));
    // Their saved profiles are free again: a save cut off by the restart kept the earlier version.
    await this.options.profiles?.rows.releaseEndedOnNode(this.nodeId);
    for (const { id, status } of moved) {
      this.moved(id, status);
      this.emit('moved', { id, to: status as SessionStatus, cause: 'node-gone' });
    }
    const count = (status: string) => moved.filter((m) => m.status === status).length;
    return { suspended: count('suspended'), errored: count('error'), deleted: count('deleted') };
  }

  /**
   * This node was declared lost (it fell silent) while it still ran: its sessions have ended in the
   * store, so their browsers end here too before the node takes new ones.
   */
  abandonAll(): Promise<void> {
    return this.runs.abandonAll();
  }

  /** Enforces maximum duration and idle timeout, updates byte meters, forgets old idempotency keys. */
  async sweep(): Promise<void> {
    const ending = await sweep({
      store: this.store,
      nodeId: this.nodeId,
      now: this.now,
      plan: (id) => this.options.accounts.plan(id),
      watched: (id) => this.options.presence.attended(id),
      flushBytes: (row, tx) => this.runs.flushBytes(row, this.runs.runtimeOf(row.id), tx),
    });
    for (const [id, reason] of ending) this.track(this.suspend(id, reason, true));
  }

  startSweeping(intervalMs = 1000): void {
    this.stopSweeping = every(intervalMs, () => this.sweep());
    // Standby's look, beside the sweep (not in its transaction: a freeze takes its own time).
    this.stopStandby = every(intervalMs, async () => {
      if (!this.runs.runsAny()) return;
      const rows = await this.store.sessionsWithStatus(['running'], this.nodeId);
      await this.standby.tick(rows);
      await this.hibernation.tick(rows);
    });
  }

  /** Keeps background endings in sight, so close() can wait for them before the store closes. */
  private track(work: Promise<unknown>): void {
    const settled = work.catch(() => undefined).finally(() => this.ending.delete(settled));
    this.ending.add(settled);
  }

  async close(): Promise<void> {
    this.stopSweeping?.();
    this.stopStandby?.();
    this.closing.abort();
    // Starts in progress end now (their displays and browsers with them) instead of running on
    // to their timeout; their sessions are found by the next start's recovery.
    await Promise.allSettled([this.runs.close(), ...this.ending]);
  }

  /** Sessions this node runs or starts right now (for health). */
  async activeCount(): Promise<number> {
    return (await this.store.sessionsWithStatus(['starting', 'running'], this.nodeId)).length;
  }
}
