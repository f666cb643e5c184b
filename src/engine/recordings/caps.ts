// What a node's recordings may take (issue 47, finding 4; decisions.md 131-132): a plan's
// `recording_mb_limit` (the megabytes the account's recordings keep together, every node's) and
// `recording_minutes_limit` (the longest one recording runs), and the node's free-space floor
// (`recordings.freeSpaceFloorMb`) on the file system that keeps its recordings, the database's
// too by default. Checked when a session asks to be recorded (admission.ts: `denied` naming the
// field) and every few seconds while recordings run here: past a cap or the floor, the recording
// stops (its timeline says why, the share state drops `recording`) and the session runs on.
import { mkdirSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import type { SessionRow, Store } from '../store/store.js';
import type { Recordings, StopReason } from './recordings.js';

/** How often running recordings are checked against their caps and the floor. */
export const CAPS_CHECK_MS = 2000;
/** What other nodes keep of an account (a cluster's call) is asked again after this long at most. */
const ELSEWHERE_FRESH_MS = 60_000;
const MB = 1024 * 1024;

/** A plan's recording caps (config.ts): absent or null, none. */
export interface RecordingPlanCaps {
  recording_mb_limit?: number | null;
  recording_minutes_limit?: number | null;
}

export interface RecordingCapsOptions {
  /** The recordings this node keeps: those its runtime writes now, what an account keeps here, and their stop. */
  recordings: Pick<Recordings, 'dirOf' | 'running' | 'bytesKept' | 'stopRecording'>;
  store: Pick<Store, 'session'>;
  /** The plan a recorded session takes its slot from. */
  planOf(row: SessionRow): Promise<RecordingPlanCaps | undefined>;
  /** The free space, in MB, under which the node records nothing. */
  floorMb: number;
  now: () => number;
  /** Megabytes the account's recordings keep on other nodes (a cluster); absent on one machine. */
  keptElsewhereMb?: (accountId: string) => Promise<number>;
}

export class RecordingCaps {
  private readonly elsewhere = new Map<string, { at: number; mb: Promise<number> }>();

  /** The directory the node keeps recordings in (made here): its file system's free space is what the floor is about. */
  private readonly dir: string;

  constructor(private readonly options: RecordingCapsOptions) {
    this.dir = options.recordings.dirOf('');
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** Bytes free to an unprivileged writer on the recordings' file system. */
  async freeBytes(): Promise<number> {
    const stats = await statfs(this.dir);
    return stats.bavail * stats.bsize;
  }

  /** Whether the node is under its free-space floor. */
  async belowFloor(): Promise<boolean> {
    return (await this.freeBytes()) < this.options.floorMb * MB;
  }

  /**
   * Megabytes the account's recordings keep, every node's. The other nodes' part is asked afresh
   * when `fresh` (a create: rare, and what it admits is what the caller sees), else at most a minute old (the running checks).
   */
  async keptMb(accountId: string, fresh = false): Promise<number> {
    return (await this.options.recordings.bytesKept(accountId)) / MB + (await this.elsewhereMb(accountId, fresh));
  }

  /** One round: every recording running here against the floor, its plan's minutes and its account's megabytes. */
  async check(): Promise<void> {
    const running = await this.running();
    if (running.length === 0) return;
    const stop = (sessionId: string, reason: StopReason) => this.options.recordings.stopRecording(sessionId, reason);
    if (await this.belowFloor()) {
      await Promise.all(running.map(({ row }) => stop(row.id, 'free_space_floor')));
      return;
    }
    const kept = new Map<string, Promise<number>>();
    const now = this.options.now();
    for (const { row, startedAt } of running) {
      const plan = await this.options.planOf(row);
      const minutes = plan?.recording_minutes_limit;
      if (typeof minutes === 'number' && now - startedAt >= minutes * 60_000) {
        await stop(row.id, 'recording_minutes_limit');
        continue;
      }
      const limitMb = plan?.recording_mb_limit;
      if (typeof limitMb !== 'number') continue;
      // One look at an account's files a round, however many of its recordings run here.
      if (!kept.has(row.account_id)) kept.set(row.account_id, this.keptMb(row.account_id));
      if ((await kept.get(row.account_id)!) >= limitMb) await stop(row.id, 'recording_mb_limit');
    }
  }

  /** The recordings this node's runtime writes now whose sessions run (not starting, not ending). */
  private async running(): Promise<Array<{ row: SessionRow; startedAt: number }>> {
    const running: Array<{ row: SessionRow; startedAt: number }> = [];
    for (const { sessionId, startedAt } of this.options.recordings.running()) {
      const row = await this.options.store.session(sessionId);
      if (row?.status === 'running') running.push({ row, startedAt });
    }
    return running;
  }

  /** Checks every CAPS_CHECK_MS until the answer is called; a failed round is told and the next one tries again. */
  checkEvery(warn: (error: unknown) => void, everyMs = CAPS_CHECK_MS): () => void {
    let round: Promise<void> | null = null;
    const timer = setInterval(() => {
      if (round) return; // A slow round (a busy disk) is not overlapped.
      round = this.check().catch(warn).finally(() => (round = null));
    }, everyMs).unref();
    return () => clearInterval(timer);
  }

  private elsewhereMb(accountId: string, fresh: boolean): Promise<number> {
    const ask = this.options.keptElsewhereMb;
    if (!ask) return Promise.resolve(0);
    const known = this.elsewhere.get(accountId);
    if (!fresh && known && this.options.now() - known.at < ELSEWHERE_FRESH_MS) return known.mb;
    // A node that does not answer adds nothing until it is back, as in the account's meter (recordings-link.ts).
    const mb = ask(accountId).catch(() => 0);
    this.elsewhere.set(accountId, { at: this.options.now(), mb });
    // Only accounts asked for lately are kept.
    for (const [id, { at }] of this.elsewhere) if (this.options.now() - at >= ELSEWHERE_FRESH_MS) this.elsewhere.delete(id);
    return mb;
  }
}
