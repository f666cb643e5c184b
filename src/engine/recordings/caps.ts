// What a node's recordings may take (issue 47, finding 4; decisions.md 131-132): a plan's
// `recording_mb_limit` (the megabytes the account's recordings keep together, every node's) and
// `recording_minutes_limit` (the longest one recording runs), and the node's free-space floor
// (`recordings.freeSpaceFloorMb`) on the file system that keeps its recordings, the database's
// too by default. Checked when a session asks to be recorded (admission.ts: `denied` naming the
// field) and every few seconds while recordings run here: past a cap or the floor, the recording
// stops (its timeline says why, the share state drops `recording`) and the session runs on.
import { mkdirSync } from 'node:fs';
import { statfs } from 'node:fs/promises';

/** The free space a node keeps by default (MB): under it, it records nothing. */
export const DEFAULT_FREE_SPACE_FLOOR_MB = 1024;
/** How often running recordings are checked against their caps and the floor. */
export const CAPS_CHECK_MS = 2000;
/** What other nodes keep of an account (a cluster's call) is asked again after this long at most. */
const ELSEWHERE_FRESH_MS = 60_000;
const MB = 1024 * 1024;

/** Why a recording stopped while its session ran on: the plan's field or the node's floor, as the timeline names it. */
export type StopReason = 'recording_mb_limit' | 'recording_minutes_limit' | 'free_space_floor';

/** A plan's recording caps (config.ts): absent or null, none. */
export interface RecordingPlanCaps {
  recording_mb_limit?: number | null;
  recording_minutes_limit?: number | null;
}

/** A recording this node's runtime writes now. */
export interface RunningRecording {
  sessionId: string;
  accountId: string;
  /** When its recorder started (ms). */
  startedAt: number;
}

export interface RecordingCapsOptions {
  /** The directory the node keeps recordings in (made if need be): its file system's free space is what the floor is about. */
  dir: string;
  floorMb: number;
  now: () => number;
  /** The recordings running here now. */
  running(): Promise<RunningRecording[]>;
  /** The plan a recorded session takes its slot from. */
  planOf(sessionId: string): Promise<RecordingPlanCaps | undefined>;
  /** Bytes the account's recordings keep on this node (media and timelines, running ones too). */
  keptHere(accountId: string): Promise<number>;
  /** Megabytes the account's recordings keep on other nodes (a cluster); absent on one machine. */
  keptElsewhereMb?: (accountId: string) => Promise<number>;
  /** Stops one recording, its session running on. */
  stop(sessionId: string, reason: StopReason): Promise<void>;
}

export class RecordingCaps {
  private readonly elsewhere = new Map<string, { at: number; mb: Promise<number> }>();

  constructor(private readonly options: RecordingCapsOptions) {
    mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  }

  /** Bytes free to an unprivileged writer on the recordings' file system. */
  async freeBytes(): Promise<number> {
    const stats = await statfs(this.options.dir);
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
    return (await this.options.keptHere(accountId)) / MB + (await this.elsewhereMb(accountId, fresh));
  }

  /** One round: every recording running here against the floor, its plan's minutes and its account's megabytes. */
  async check(): Promise<void> {
    const running = await this.options.running();
    if (running.length === 0) return;
    if (await this.belowFloor()) {
      await Promise.all(running.map((recording) => this.options.stop(recording.sessionId, 'free_space_floor')));
      return;
    }
    const kept = new Map<string, Promise<number>>();
    const now = this.options.now();
    for (const recording of running) {
      const plan = await this.options.planOf(recording.sessionId);
      const minutes = plan?.recording_minutes_limit;
      if (typeof minutes === 'number' && now - recording.startedAt >= minutes * 60_000) {
        await this.options.stop(recording.sessionId, 'recording_minutes_limit');
        continue;
      }
      const limitMb = plan?.recording_mb_limit;
      if (typeof limitMb !== 'number') continue;
      // One look at an account's files a round, however many of its recordings run here.
      if (!kept.has(recording.accountId)) kept.set(recording.accountId, this.keptMb(recording.accountId));
      if ((await kept.get(recording.accountId)!) >= limitMb) await this.options.stop(recording.sessionId, 'recording_mb_limit');
    }
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
    // A node that does not answer adds nothing until it is back, as in the account's meter (cluster/recordings-link.ts).
    const mb = ask(accountId).catch(() => 0);
    this.elsewhere.set(accountId, { at: this.options.now(), mb });
    // Only accounts asked for lately are kept.
    for (const [id, { at }] of this.elsewhere) if (this.options.now() - at >= ELSEWHERE_FRESH_MS) this.elsewhere.delete(id);
    return mb;
  }
}
