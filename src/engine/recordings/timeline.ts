// A recording's timeline (`timeline.jsonl` beside its media; decisions.md 96, 125): what goes in
// and how it is read back, bounded whatever a page does (issue 47, findings 3 and 5). A page
// decides how often its address and title change and how long they are, so each entry is cut, each
// tab's entries are limited a second, the whole file is limited, and what is left out is said once
// in an entry of its own; addresses keep their origin and path only, unless the plan opts in.
import { createReadStream, statSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import type { RecordingTimelineEntry } from '../../protocol/index.js';
import { MAX_TITLE } from '../runtime/index.js';

/** The longest web address an entry keeps (characters), full or not. */
export const TIMELINE_URL_MAX = 2048;
/** The longest of any other text an entry keeps (a reason, a target, a channel). */
const TEXT_MAX = 2048;
/** Entries one tab may add a second (a navigation and its title are two); more are left out. Entries with no tab are counted by their type. */
export const TIMELINE_ENTRIES_PER_S = 10;
/** The timeline's size by default (`recordings.timelineKb`): about 15,000 navigations of ordinary addresses. */
export const DEFAULT_TIMELINE_KB = 4096;
/**
 * Room past the cap for the entries that close or explain the timeline (the `dropped` notes, the
 * session's end): each is written at most once and is a few hundred bytes,
 * so a timeline file is never larger than its cap and this.
 */
export const TIMELINE_CLOSING_BYTES = 16 * 1024;
/** Read a chunk at a time: each is parsed in its own turn of the event loop. */
const READ_CHUNK = 64 * 1024;

type Entry = Omit<RecordingTimelineEntry, 'time'>;
/** Why entries were left out: too many a second from one tab, or the timeline is full. */
export type DropReason = 'rate' | 'total';

/** A web address as the timeline keeps it: its origin and path (no query, no fragment) unless `full`; always cut to TIMELINE_URL_MAX. */
export function addressAsKept(url: string, full: boolean): string {
  if (full) return url.slice(0, TIMELINE_URL_MAX);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.split(/[?#]/, 1)[0]!.slice(0, TIMELINE_URL_MAX);
  }
  // `data:` carries the page itself after its comma: only its media type is kept.
  if (parsed.protocol === 'data:') return `data:${parsed.pathname.split(',', 1)[0]}`.slice(0, TIMELINE_URL_MAX);
  const origin = parsed.host ? `${parsed.protocol}//${parsed.host}` : parsed.protocol;
  return `${origin}${parsed.pathname}`.slice(0, TIMELINE_URL_MAX);
}

/** The entry with its texts cut to their caps and its address kept as the plan says. */
function boundedEntry(entry: Entry, fullUrls: boolean): Entry {
  const bounded: Entry = { ...entry };
  for (const [field, value] of Object.entries(bounded) as Array<[keyof Entry, unknown]>) {
    if (typeof value === 'string' && value.length > TEXT_MAX) (bounded as Record<string, unknown>)[field] = value.slice(0, TEXT_MAX);
  }
  if (entry.url !== undefined) bounded.url = addressAsKept(entry.url, fullUrls);
  if (entry.title !== undefined) bounded.title = entry.title.slice(0, MAX_TITLE);
  return bounded;
}

export interface TimelineOptions {
  /** The timeline file (the recording's directory exists). */
  path: string;
  /** The most bytes of ordinary entries it keeps. */
  maxBytes: number;
  now: () => number;
  /** Whether the session's plan keeps whole addresses (`recording_full_urls`). */
  fullUrls: () => Promise<boolean>;
}

/** One recorded session's timeline as this process writes it: entries in order, each bounded. */
export class Timeline {
  private writing: Promise<void> = Promise.resolve();
  /** Bytes in the file (what an earlier process wrote counts). */
  private bytes: number;
  /** Entries this second, by tab (or type). */
  private readonly seconds = new Map<string, { second: number; count: number }>();
  private readonly told = new Set<DropReason>();
  private fullUrls: Promise<boolean> | null = null;

  constructor(private readonly options: TimelineOptions) {
    this.bytes = statSync(options.path, { throwIfNoEntry: false })?.size ?? 0;
  }

  /**
   * Adds an entry, unless its tab is past its rate or the timeline is full (then the first such
   * drop is noted). A `closing` entry (the session's end) is kept past the cap, within TIMELINE_CLOSING_BYTES.
   */
  add(entry: Entry, closing = false): void {
    const time = this.options.now();
    if (!closing && !this.withinRate(entry.tab ?? entry.type, time)) return this.dropped('rate', time, entry.tab);
    this.writing = this.writing.then(async () => {
      this.fullUrls ??= this.options.fullUrls().catch(() => false);
      const line = `${JSON.stringify({ time: new Date(time).toISOString(), ...boundedEntry(entry, await this.fullUrls) })}\n`;
      const bytes = Buffer.byteLength(line);
      if (!closing && this.bytes + bytes > this.options.maxBytes) return this.tellDropped('total', time);
      if (closing && this.bytes + bytes > this.options.maxBytes + TIMELINE_CLOSING_BYTES) return;
      await this.append(line, bytes);
    });
  }

  /** Resolves once every entry added so far is on disk (or given up). */
  written(): Promise<void> {
    return this.writing;
  }

  private withinRate(key: string, time: number): boolean {
    const second = Math.floor(time / 1000);
    const current = this.seconds.get(key);
    if (current?.second === second) return ++current.count <= TIMELINE_ENTRIES_PER_S;
    // Only this second's counts matter: the others go, so the map holds the tabs active now.
    for (const [other, { second: at }] of this.seconds) if (at !== second) this.seconds.delete(other);
    this.seconds.set(key, { second, count: 1 });
    return true;
  }

  private dropped(reason: DropReason, time: number, tab?: string): void {
    if (this.told.has(reason)) return;
    this.writing = this.writing.then(() => this.tellDropped(reason, time, tab));
  }

  /** The one note per reason that entries were left out from here on. */
  private async tellDropped(reason: DropReason, time: number, tab?: string): Promise<void> {
    if (this.told.has(reason)) return;
    this.told.add(reason);
    const line = `${JSON.stringify({ time: new Date(time).toISOString(), type: 'dropped', reason, ...(tab ? { tab } : {}) })}\n`;
    await this.append(line, Buffer.byteLength(line));
  }

  private async append(line: string, bytes: number): Promise<void> {
    await appendFile(this.options.path, line, { mode: 0o600 }).then(() => (this.bytes += bytes), () => undefined);
  }
}

/**
 * A timeline file's entries, each title folded into the navigation of its tab it names (the title
 * came later). Read a chunk at a time and never past `maxBytes` and the closing room, so a file an
 * earlier version wrote without a cap is read up to there, with a `dropped` note at its end.
 * Addresses are kept again as the plan says now (a file from before the plan's choice).
 */
export async function readTimeline(path: string, options: { maxBytes: number; fullUrls: boolean }): Promise<RecordingTimelineEntry[]> {
  const limit = options.maxBytes + TIMELINE_CLOSING_BYTES;
  const entries: RecordingTimelineEntry[] = [];
  const lastNavigation = new Map<string, RecordingTimelineEntry>();
  const take = (line: string) => {
    if (!line) return;
    let entry: RecordingTimelineEntry;
    try {
      entry = JSON.parse(line) as RecordingTimelineEntry;
    } catch {
      return; // A line cut off by a crash.
    }
    if (typeof entry !== 'object' || entry === null || typeof entry.type !== 'string') return;
    entry = { time: entry.time, ...boundedEntry(entry, options.fullUrls) };
    if (entry.type === 'title') {
      const navigation = lastNavigation.get(entry.tab ?? '');
      if (navigation && navigation.url === entry.url) navigation.title = entry.title;
      return;
    }
    if (entry.type === 'navigation') lastNavigation.set(entry.tab ?? '', entry);
    entries.push(entry);
  };
  let rest = '';
  let read = 0;
  try {
    for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: READ_CHUNK, end: limit - 1 })) {
      read += Buffer.byteLength(chunk as string);
      const lines = (rest + (chunk as string)).split('\n');
      rest = lines.pop()!;
      for (const line of lines) take(line);
    }
  } catch {
    return entries; // No timeline yet, or it was removed meanwhile.
  }
  if (read >= limit) entries.push({ time: entries.at(-1)?.time ?? new Date(0).toISOString(), type: 'dropped', reason: 'total' });
  else take(rest);
  return entries;
}
