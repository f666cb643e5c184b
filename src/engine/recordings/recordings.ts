// Recordings of sessions (issue 35, decisions.md 96): where each is kept (`<data>/recordings/<id>/`:
// the picture and sound the runtime's recorder writes, `media.mkv`, and the timeline beside it,
// `timeline.jsonl`), what goes into the timeline as it happens, and the use cases the API calls:
// read one, hand out its media, remove it. The timeline holds what happened, never what was on a
// page or typed: a tab's web address and title, tabs opening and closing, viewers and programs
// coming and going with what their link let them do, refusals by category, and the session's end
// (timeline.ts bounds it).
import { existsSync, mkdirSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { RecordingInfo, RecordingTimelineEntry } from '../../protocol/index.js';
import type { AttachmentChange, Presence } from '../channels/presence.js';
import { RECORDING_CLOSED, RECORDING_FILES, RECORDING_MEDIA, RECORDING_START, RECORDING_TIMELINE, type RecordingSpec, type RuntimeEvent } from '../runtime/index.js';
import type { SessionService } from '../sessions/service.js';
import type { SessionRow, Store } from '../store/store.js';
import { readTimeline, Timeline } from './timeline.js';

/** Why a recording stopped while its session ran on (caps.ts): the plan's field or the node's floor, as the timeline names it. */
export type StopReason = 'recording_mb_limit' | 'recording_minutes_limit' | 'free_space_floor';
/** Statuses of a session that has ended (its recorder closes as its runtime stops). */
const ENDED = new Set(['suspended', 'deleted', 'error', 'stopping']);
/** A recording whose session ended without its recorder closing it (the engine was killed) is taken as whole once unchanged this long. */
const SETTLED_MS = 3000;
/** The same for a recorder of this process that has not closed its file yet (its stop failed): a minute. */
const SETTLED_HERE_MS = 60_000;

export interface RecordingsOptions {
  /** The directory that holds one directory per recorded session (root-only, the engine's own). */
  dir: string;
  now: () => number;
  store: Pick<Store, 'recordedSessions' | 'session' | 'updateSession'>;
  /** Days a recording is kept after its session ended: its plan's `recording_days`, else the service's. */
  retentionDays(row: SessionRow): Promise<number>;
  /** Whether a session's plan keeps whole web addresses in its timeline (`recording_full_urls`); else origin and path. */
  fullUrls(sessionId: string): Promise<boolean>;
  /** The most bytes of entries one timeline keeps (`recordings.timelineKb`). */
  timelineBytes: number;
  /** Tells a session's viewers its state changed (a recording stopped: the share state drops `recording`). */
  tell?: (sessionId: string) => void;
}

export type RecordingOutcome = { status: 'ok'; recording: RecordingInfo } | { status: 'denied' | 'error'; message: string };

/**
 * The recordings as the API reaches them, whichever node keeps one: here (media.ts
 * `recordingsHere`) or, in a cluster, the node that ran the session (recordings-link.ts).
 * The caller's key and its session were checked before any of these.
 */
export interface RecordingsAccess {
  read(row: SessionRow): Promise<RecordingOutcome>;
  remove(row: SessionRow): Promise<{ status: 'ok' } | { status: 'denied' | 'error'; message: string }>;
  /** The account's recordings' meter, over every node that keeps one of them. */
  meters(accountId: string): Promise<{ recording_mb_kept: number }>;
  /** Answers a media request (its `Range` header, if any): the MP4, or why not in the interface's envelope. */
  sendMedia(range: string | undefined, response: ServerResponse, row: SessionRow): Promise<void>;
}

export class Recordings {
  /** The timelines this process writes to, by session. */
  private readonly timelines = new Map<string, Timeline>();
  /** Sessions this process's runtime records (recordHere): their recorder is ours to close. */
  private readonly recordedHere = new Set<string>();
  /** The recorders running here, by session, with when each started (a plan's caps stop them: caps.ts). */
  private readonly recorders = new Map<string, { recorder: { close(): Promise<void> }; startedAt: number }>();
  /** Sessions whose recording stopped while they ran on: their timeline notes nothing more (their viewers were told it is not recorded). */
  private readonly stopped = new Set<string>();

  constructor(private readonly options: RecordingsOptions) {}

  /** Days a session's recording is kept after it ended (its plan's, else the service's). */
  readonly retentionDays = (row: SessionRow): Promise<number> => this.options.retentionDays(row);

  /** Where a session's recording is kept (the runtime's recorder makes it when the session starts recorded). */
  dirOf(sessionId: string): string {
    return join(this.options.dir, sessionId);
  }

  /**
   * Where this process's runtime records a session it starts recorded: its recorder closes the
   * file with a mark (recorder.ts), so until then the recording is not taken as whole however long
   * the file stays unchanged (a slow stop on a busy machine), unlike one an engine that is gone left.
   */
  recordHere(sessionId: string): RecordingSpec {
    this.recordedHere.add(sessionId);
    // Made now, before the runtime starts: what the timeline hears while the browser starts (its
    // first navigation, on a cold start) is kept, not dropped for want of a directory.
    const dir = this.dirOf(sessionId);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return { dir, started: (recorder) => void this.recorders.set(sessionId, { recorder, startedAt: this.options.now() }) };
  }

  /** The recordings this process's runtime writes now (their sessions run; none was stopped). */
  running(): Array<{ sessionId: string; startedAt: number }> {
    return [...this.recorders].map(([sessionId, { startedAt }]) => ({ sessionId, startedAt }));
  }

  /**
   * Stops a recording while its session runs on (a plan's cap or the node's floor, caps.ts): the
   * timeline says why and then notes nothing more, the recorder closes its file (whole), the
   * session's row says it stopped (the share state drops `recording`) and its viewers are told.
   */
  async stopRecording(sessionId: string, reason: StopReason): Promise<void> {
    const running = this.recorders.get(sessionId);
    if (!running) return;
    this.recorders.delete(sessionId);
    this.note(sessionId, { type: 'stopped', reason }, true);
    this.stopped.add(sessionId);
    await running.recorder.close();
    await this.options.store.updateSession(sessionId, { recording_stopped: reason });
    this.options.tell?.(sessionId);
  }

  /** Adds an entry to a recorded session's timeline (nothing for a session that is not recorded here); `closing` ones are kept past its caps. */
  note(sessionId: string, entry: Omit<RecordingTimelineEntry, 'time'>, closing = false): void {
    if (this.stopped.has(sessionId)) return;
    let timeline = this.timelines.get(sessionId);
    if (!timeline) {
      const dir = this.dirOf(sessionId);
      if (!/^[0-9a-f]{32}$/.test(sessionId) || !existsSync(dir)) return;
      timeline = new Timeline({ path: join(dir, RECORDING_TIMELINE), maxBytes: this.options.timelineBytes, now: this.options.now, fullUrls: () => this.options.fullUrls(sessionId) });
      this.timelines.set(sessionId, timeline);
    }
    timeline.add(entry, closing);
  }

  /** What the runtime reports of a recorded session's tabs and refusals. */
  noteRuntime(sessionId: string, event: RuntimeEvent): void {
    if (event.kind === 'page' && event.detail) {
      const page = event.detail;
      if (!('url' in page)) this.note(sessionId, { type: page.change === 'opened' ? 'tab-opened' : 'tab-closed', tab: page.tab });
      else this.note(sessionId, { type: page.change === 'navigated' ? 'navigation' : 'title', tab: page.tab, url: page.url, title: page.title });
    } else if (event.kind === 'refused' && event.detail) {
      this.note(sessionId, { type: 'refused', target: event.detail.target, category: event.detail.category });
    }
  }

  /** A viewer, listener or program came or went. */
  noteAttachment(change: AttachmentChange): void {
    const type = change.kind === 'program' ? (change.joined ? 'program-attached' : 'program-left') : change.joined ? 'viewer-joined' : 'viewer-left';
    this.note(change.id, { type, channel: change.channel ?? change.kind, ...(change.rights ? { rights: change.rights } : {}) });
  }

  /** The session moved to an end. */
  noteEnd(row: SessionRow): void {
    this.recorders.delete(row.id);
    this.note(row.id, { type: 'ended', status: row.status, reason: row.end_reason ?? 'unknown' }, true);
    this.stopped.delete(row.id);
    // Written, this process follows the timeline no more (an entry after the end opens it again).
    const timeline = this.timelines.get(row.id);
    void timeline?.written().then(() => {
      if (this.timelines.get(row.id) === timeline) this.timelines.delete(row.id);
    });
  }

  /** A session's recording: its state, start, length, bytes and timeline. */
  async read(row: SessionRow): Promise<RecordingOutcome> {
    if (!row.recorded) return { status: 'denied', message: 'id: this session was not recorded (create it with record: true, on a plan that records)' };
    const dir = this.dirOf(row.id);
    await this.timelines.get(row.id)?.written();
    // Whether it is whole first, then its size: a recorder closing in between leaves a whole file's size, never an earlier one.
    const whole = await this.isWhole(row);
    const media = await stat(join(dir, RECORDING_MEDIA)).catch(() => null);
    const timeline = await readTimeline(join(dir, RECORDING_TIMELINE), { maxBytes: this.options.timelineBytes, fullUrls: await this.options.fullUrls(row.id).catch(() => false) });
    if (!media && !existsSync(dir)) return { status: 'denied', message: 'id: this session\'s recording was removed' };
    // The media's time 0 as the recorder noted it; a file from before that note, its creation.
    const noted = Date.parse(await readFile(join(dir, RECORDING_START), 'utf8').catch(() => ''));
    const started = Number.isFinite(noted) ? noted : media?.birthtimeMs || row.created_at;
    const ended = whole ? (media?.mtimeMs ?? row.ended_at ?? started) : this.options.now();
    return {
      status: 'ok',
      recording: {
        state: whole ? 'ended' : ENDED.has(row.status) ? 'ending' : row.status === 'running' ? 'recording' : 'starting',
        started: new Date(started).toISOString(),
        duration_ms: Math.max(0, Math.round(ended - started)),
        bytes: media?.size ?? 0,
        timeline,
      },
    };
  }

  /** The media file of a session's recording, or why there is none. */
  async mediaOf(row: SessionRow): Promise<{ path: string; whole: boolean } | { status: 'denied'; message: string }> {
    if (!row.recorded) return { status: 'denied', message: 'id: this session was not recorded (create it with record: true, on a plan that records)' };
    const path = join(this.dirOf(row.id), RECORDING_MEDIA);
    if (!existsSync(path)) {
      return { status: 'denied', message: existsSync(this.dirOf(row.id)) ? 'id: this session\'s recording has no media yet (the session has not shown a picture)' : 'id: this session\'s recording was removed' };
    }
    return { path, whole: await this.isWhole(row) };
  }

  /** Whether a recording is whole: its recorder closed it, or its session ended and the file has not changed since (a killed engine). */
  private async isWhole(row: SessionRow): Promise<boolean> {
    const dir = this.dirOf(row.id);
    if (existsSync(join(dir, RECORDING_CLOSED))) {
      this.recordedHere.delete(row.id);
      return true;
    }
    if (!ENDED.has(row.status) || row.status === 'stopping') return false;
    const media = await stat(join(dir, RECORDING_MEDIA)).catch(() => null);
    return !media || Date.now() - media.mtimeMs > (this.recordedHere.has(row.id) ? SETTLED_HERE_MS : SETTLED_MS);
  }

  /** The account's recordings' meter: megabytes kept here (one decimal). */
  async meters(accountId: string): Promise<{ recording_mb_kept: number }> {
    return { recording_mb_kept: Math.round(((await this.bytesKept(accountId)) / (1024 * 1024)) * 10) / 10 };
  }

  /** Bytes the account's recordings keep here: media and timelines, running ones as far as written. */
  async bytesKept(accountId: string): Promise<number> {
    let bytes = 0;
    for (const row of await this.options.store.recordedSessions(accountId)) {
      for (const file of RECORDING_FILES) bytes += (await stat(join(this.dirOf(row.id), file)).catch(() => null))?.size ?? 0;
    }
    return bytes;
  }

  /** Removes the recordings kept past their retention (days after their session ended); answers how many. */
  async forgetOld(): Promise<number> {
    let removed = 0;
    for (const row of await this.options.store.recordedSessions()) {
      // A recording stopped by a cap is whole while its session runs on: its days count from the session's end.
      if (!ENDED.has(row.status) || !existsSync(this.dirOf(row.id)) || !(await this.isWhole(row))) continue;
      const endedAt = row.ended_at ?? row.created_at;
      if (this.options.now() - endedAt < (await this.options.retentionDays(row)) * 86_400_000) continue;
      await rm(this.dirOf(row.id), { recursive: true, force: true });
      removed++;
    }
    return removed;
  }

  /** Removes the recordings past their retention now and every hour after, until the answer is called. */
  forgetOldHourly(warn: (error: unknown) => void): () => void {
    const round = () => void this.forgetOld().catch(warn);
    round();
    const timer = setInterval(round, 3_600_000).unref();
    return () => clearInterval(timer);
  }

  /** Removes a recording of a session that has ended. */
  async remove(row: SessionRow): Promise<{ status: 'ok' } | { status: 'denied'; message: string }> {
    if (!row.recorded) return { status: 'denied', message: 'id: this session was not recorded' };
    if (!ENDED.has(row.status)) return { status: 'denied', message: 'id: the session is still running; remove the session first (POST /v8/vm/remove), then its recording' };
    if (!(await this.isWhole(row))) return { status: 'denied', message: 'id: the end of the recording is still being written; try again in a few seconds' };
    await this.timelines.get(row.id)?.written();
    this.timelines.delete(row.id);
    await rm(this.dirOf(row.id), { recursive: true, force: true });
    return { status: 'ok' };
  }
}

/** What a recording's timeline follows on this node. */
export interface RecordedSources {
  sessions: Pick<SessionService, 'on' | 'sessionOfRuntime'>;
  runtime: { on(event: 'event', listener: (event: RuntimeEvent) => void): unknown };
  presence: Pick<Presence, 'on'>;
  store: Pick<Store, 'session'>;
}

/** Follows the session's tabs and refusals (the runtime), who comes and goes (presence) and its end (the service). */
export function followRecordedSessions(recordings: Recordings, sources: RecordedSources): void {
  sources.runtime.on('event', (event) => {
    const id = sources.sessions.sessionOfRuntime(event.sessionId);
    if (id) recordings.noteRuntime(id, event);
  });
  sources.presence.on('attachment', (change) => recordings.noteAttachment(change));
  // The end is noted once: at `stopping` when the session passes it, else at the status it ends in.
  const stopping = new Set<string>();
  sources.sessions.on('moved', (move) => {
    if (!ENDED.has(move.to)) return;
    if (move.to === 'stopping') stopping.add(move.id);
    else if (stopping.delete(move.id)) return;
    void sources.store.session(move.id).then((row) => row && recordings.noteEnd(row), () => undefined);
  });
}
