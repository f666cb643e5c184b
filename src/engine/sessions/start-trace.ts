// Where one session's start spends its time, create to running (issue 37): the engine's own
// milliseconds per step, taken as the start goes, logged at debug level by the session observer
// (operations/session-observer.ts) and read back by `npm run bench -- api`. Clock reads only: a
// trace costs nothing the caller waits for.

/** The steps of a start, in the order they happen. */
export type StartStep =
  /** The create's checks before its transaction (browser, language, exit, plan). */
  | 'admission'
  /** The create's transaction: idempotency, the quota re-read, placement, the row (placement is also given alone). */
  | 'transaction'
  /** From the transaction's commit to the runtime being asked to start the session. */
  | 'handoff'
  /** The runtime's start as the service sees it: asked, to resolved (the runtime's own parts beside it). */
  | 'runtime'
  /** The `running` status written to the store. */
  | 'statusWrite'
  /** Followers told: share-link viewers, long-polls of vm/data, other nodes (their synchronous part). */
  | 'told';

/** A step measured inside another: placement runs inside the create's transaction. */
export type InnerStep = 'placement';

export interface StartTraceReport {
  /** Where the trace began: a create on this node, or a session another node placed here. */
  from: 'create' | 'placed';
  /** Milliseconds per step, in the order of StartStep; a step that did not happen is absent. */
  steps: Partial<Record<StartStep | InnerStep, number>>;
  /** The runtime's own account of its start, when it gave one. */
  runtime?: { start: string; readyMs: number; parts?: Record<string, number> };
  /** From the trace's beginning to followers told. */
  totalMs: number;
}

const round = (ms: number) => Math.round(ms * 10) / 10;

export class StartTrace {
  private readonly began = performance.now();
  private last = this.began;
  private readonly steps: StartTraceReport['steps'] = {};
  private runtime: StartTraceReport['runtime'];

  constructor(readonly from: StartTraceReport['from']) {}

  /** Ends `step` now: it lasted since the previous step ended (or the trace began). */
  step(step: StartStep): void {
    const now = performance.now();
    this.steps[step] = round(now - this.last);
    this.last = now;
  }

  /** Times `work` as an inner step, without ending the step it runs in. */
  async within<T>(step: InnerStep, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.steps[step] = round(performance.now() - started);
    }
  }

  /** What the runtime said of its own start (runtime.ts: start kind, ready ms, its parts). */
  ranStart(runtime: { start?: string; readyMs?: number; startParts?: Record<string, number> }): void {
    if (runtime.start === undefined || runtime.readyMs === undefined) return;
    this.runtime = { start: runtime.start, readyMs: round(runtime.readyMs), ...(runtime.startParts ? { parts: runtime.startParts } : {}) };
  }

  report(): StartTraceReport {
    return { from: this.from, steps: { ...this.steps }, ...(this.runtime ? { runtime: this.runtime } : {}), totalMs: round(this.last - this.began) };
  }
}
