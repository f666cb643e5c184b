// A profile's archive checked as it streams (decisions.md 89, 129, 138): a push parser that reads a
// tar stream header by header, whatever sizes its pieces come in, and hands on only plain files
// and folders under relative paths, each as a header and its bytes, never holding more than one
// header or extended header at a time. `strict` (a restore, and the last check of a save) refuses
// anything else; otherwise (what a session hands back, which its user could have filled with
// anything) it is left out and counted. profile-archive.ts builds the whole-buffer reader on it;
// checkedArchive() writes what passes again in the engine's one plain form as it goes.
import { archiveEnd, ArchiveRefusal, BLOCK, checkedPath, checksumOf, entryHeader, KIND_WORDS, MAX_PATH, MAX_PATH_BYTES, mtimeOf, octal, padding, text, TOO_LONG, type ArchiveLimits } from './archive-format.js';

/** The most an extended header (pax) may hold. */
const MAX_EXTENDED = 64 * 1024;

/** An entry that passed, before its bytes. */
export interface CheckedEntry {
  path: string;
  kind: 'file' | 'folder';
  /** Seconds since the epoch. */
  mtime: number;
  size: number;
}

/** Where a checker hands what passes: an entry, its bytes in pieces, then its end. */
export interface CheckedSink {
  entry(entry: CheckedEntry): void;
  data(bytes: Buffer): void;
  entryEnd(): void;
}

type State =
  | { at: 'header' }
  | { at: 'meta'; type: 'L' | 'x'; size: number; skip: number }
  | { at: 'data'; left: number; keep: boolean; pad: number }
  | { at: 'pad'; left: number }
  | { at: 'done' };

export class ArchiveChecker {
  private state: State = { at: 'header' };
  /** Bytes of a header or extended header not complete yet. */
  private held: Buffer[] = [];
  private heldBytes = 0;
  private longName: string | undefined;
  private paxPath: string | undefined;
  entries = 0;
  dropped = 0;
  /** The passed files' bytes together. */
  bytes = 0;

  constructor(
    private readonly limits: ArchiveLimits,
    private readonly strict: boolean,
    private readonly keep: (path: string) => boolean,
    private readonly sink: CheckedSink,
  ) {}

  /** Reads the next piece of the archive. Throws ArchiveRefusal. */
  push(chunk: Buffer): void {
    let rest = chunk;
    while (rest.length > 0) {
      const state = this.state;
      if (state.at === 'done') return;
      if (state.at === 'data') {
        const take = Math.min(state.left, rest.length);
        if (state.keep && take > 0) this.sink.data(rest.subarray(0, take));
        state.left -= take;
        rest = rest.subarray(take);
        if (state.left === 0) {
          if (state.keep) this.sink.entryEnd();
          this.state = { at: 'pad', left: state.pad };
        }
        continue;
      }
      if (state.at === 'pad') {
        const take = Math.min(state.left, rest.length);
        state.left -= take;
        rest = rest.subarray(take);
        if (state.left === 0) this.state = { at: 'header' };
        continue;
      }
      // A header, or an extended header's text: gathered whole (each is small and capped).
      const want = state.at === 'header' ? BLOCK : state.size + state.skip;
      const take = Math.min(want - this.heldBytes, rest.length);
      this.held.push(rest.subarray(0, take));
      this.heldBytes += take;
      rest = rest.subarray(take);
      if (this.heldBytes < want) continue;
      const whole = Buffer.concat(this.held, this.heldBytes);
      this.held = [];
      this.heldBytes = 0;
      if (state.at === 'header') this.header(whole);
      else this.meta(state.type, whole.subarray(0, state.size), state.size);
    }
  }

  /** The archive's end: it must have ended with its zero block. Throws ArchiveRefusal. */
  end(): void {
    // GNU tar ends with two zero blocks; a stream cut before them is damaged.
    if (this.state.at !== 'done') throw new ArchiveRefusal('the archive ends in the middle of an entry');
  }

  private header(header: Buffer): void {
    if (header.every((byte) => byte === 0)) {
      this.state = { at: 'done' };
      return;
    }
    if (octal(header, 148, 8, 'checksum') !== checksumOf(header)) throw new ArchiveRefusal('a header of the archive is damaged (its checksum does not match)');
    const type = header[156] === 0 ? '0' : String.fromCharCode(header[156]!);
    const size = octal(header, 124, 12, 'size');
    const pad = Math.ceil(size / BLOCK) * BLOCK - size;
    if (type === 'L' || type === 'x') {
      if (type === 'x' && size > MAX_EXTENDED) throw new ArchiveRefusal('an extended header of the archive is too large');
      if (type === 'L' && size > MAX_PATH_BYTES + 1) {
        // A longer one is refused (restore) or its entry left out (a session's), whatever it names.
        if (this.strict) throw new ArchiveRefusal(`a path in the archive is longer than ${MAX_PATH} characters`);
        this.longName = TOO_LONG;
        this.state = { at: 'data', left: size, keep: false, pad };
        return;
      }
      this.state = size + pad === 0 ? { at: 'header' } : { at: 'meta', type, size, skip: pad };
      if (size + pad === 0) this.meta(type, Buffer.alloc(0), 0);
      return;
    }
    const magic = header.subarray(257, 262).toString('latin1');
    const prefix = magic === 'ustar' ? text(header, 345, 155) : '';
    const named = this.paxPath ?? this.longName ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
    this.longName = undefined;
    this.paxPath = undefined;
    const kind = type === '0' || type === '7' ? 'file' : type === '5' ? 'folder' : null;
    const skip = () => {
      this.state = size + pad === 0 ? { at: 'header' } : { at: 'data', left: size, keep: false, pad };
    };
    if (!kind) {
      if (this.strict) throw new ArchiveRefusal(`the archive holds ${KIND_WORDS[type] ?? `an entry of kind "${type}"`} ("${named.slice(0, 100)}"); only plain files and folders are restored`);
      this.dropped++;
      return skip();
    }
    let path: string;
    try {
      path = checkedPath(named, kind === 'folder');
    } catch (error) {
      if (this.strict) throw error;
      this.dropped++;
      return skip();
    }
    if (path === '' || !this.keep(path)) {
      if (path !== '') this.dropped++;
      return skip();
    }
    if (this.entries + 1 > this.limits.maxEntries) throw new ArchiveRefusal(`the archive holds more than ${this.limits.maxEntries} entries`);
    this.entries++;
    const dataSize = kind === 'file' ? size : 0;
    this.bytes += dataSize;
    if (this.bytes > this.limits.maxBytes) throw new ArchiveRefusal(`the archive's files add up to more than ${this.limits.maxBytes} bytes`);
    this.sink.entry({ path, kind, mtime: mtimeOf(header), size: dataSize });
    if (dataSize === 0) {
      this.sink.entryEnd();
      // A folder's header may still claim bytes: they are read past, not kept.
      this.state = size + pad === 0 ? { at: 'header' } : { at: 'data', left: size, keep: false, pad };
    } else {
      this.state = { at: 'data', left: size, keep: true, pad };
    }
  }

  private meta(type: 'L' | 'x', data: Buffer, size: number): void {
    this.state = { at: 'header' };
    if (type === 'L') {
      // Bytes, not characters: a path of MAX_PATH characters takes up to four bytes a character.
      this.longName = text(data, 0, size);
      return;
    }
    for (const record of data.toString('utf8').split('\n')) {
      const match = /^\d+ ([^=]+)=(.*)$/s.exec(record);
      if (!match) continue;
      if (match[1] === 'path') this.paxPath = match[2];
      else if (match[1] === 'size' || match[1] === 'linkpath') throw new ArchiveRefusal(`an extended header of the archive sets "${match[1]}"`);
    }
  }
}

/**
 * Checks an archive as it streams and answers what passes written again in the engine's plain
 * form (ustar headers, GNU long names, its own end), piece by piece. `wholeCap` caps what it
 * writes, headers and padding included (the message a restore gives: decisions.md 129).
 */
export async function* checkedArchive(source: AsyncIterable<Buffer>, options: { limits: ArchiveLimits; strict: boolean; keep?: (path: string) => boolean; wholeCap: number; counted?: (checker: ArchiveChecker) => void }): AsyncGenerator<Buffer> {
  let out: Buffer[] = [];
  let written = 0;
  let size = 0;
  const put = (bytes: Buffer) => {
    written += bytes.length;
    if (written > options.wholeCap) throw new ArchiveRefusal(`the saved state would grow past ${options.wholeCap} bytes when unpacked`);
    out.push(bytes);
  };
  const checker = new ArchiveChecker(options.limits, options.strict, options.keep ?? (() => true), {
    entry(entry) {
      size = entry.size;
      put(entryHeader(entry.path, entry.kind, entry.size, entry.mtime));
    },
    data: put,
    // Padding follows each file's bytes to its block's end.
    entryEnd() {
      const pad = padding(size);
      if (pad.length > 0) put(pad);
    },
  });
  for await (const chunk of source) {
    checker.push(chunk);
    if (out.length > 0) {
      const pieces = out;
      out = [];
      yield* pieces;
    }
  }
  checker.end();
  put(archiveEnd());
  options.counted?.(checker);
  yield* out;
}
