// A profile's archive as the engine checks it (decisions.md 89), whole in memory: the reader and
// writer tests and small callers use. The rules are archive-checker.ts's, which the saves and
// restores apply as the archive streams (decisions.md 138): only plain files and folders under
// relative paths pass: a link, a device, a FIFO, an absolute path or `..`, a size or an entry
// count over the caps, a damaged header is refused (restore) or left out (what a session hands
// back). What passes is written again in one plain form (archive-format.ts), so the archive a
// session unpacks is the engine's own.
import { ArchiveChecker } from './archive-checker.js';
import { archiveEnd, entryHeader, padding, type ArchiveLimits } from './archive-format.js';

export { ArchiveRefusal, DEFAULT_ARCHIVE_ENTRIES, type ArchiveLimits } from './archive-format.js';

export interface ArchiveEntry {
  path: string;
  kind: 'file' | 'folder';
  /** Seconds since the epoch. */
  mtime: number;
  data: Buffer;
}

/**
 * Reads and checks an archive. `strict` (a restore) refuses anything but plain files and folders;
 * otherwise (what a session hands back) those are left out and counted in `dropped`. `keep`
 * leaves out paths a profile does not hold. Throws ArchiveRefusal with what was wrong.
 */
export function readArchive(archive: Buffer, limits: ArchiveLimits, strict: boolean, keep: (path: string) => boolean = () => true): { entries: ArchiveEntry[]; dropped: number; bytes: number } {
  const entries: ArchiveEntry[] = [];
  let pieces: Buffer[] = [];
  const checker = new ArchiveChecker(limits, strict, keep, {
    entry: ({ path, kind, mtime }) => void entries.push({ path, kind, mtime, data: Buffer.alloc(0) }),
    data: (bytes) => void pieces.push(bytes),
    entryEnd() {
      entries[entries.length - 1]!.data = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
      pieces = [];
    },
  });
  checker.push(archive);
  checker.end();
  return { entries, dropped: checker.dropped, bytes: checker.bytes };
}

/** Writes entries as one plain archive: ustar headers, GNU long names for paths over 99 bytes. */
export function writeArchive(entries: readonly ArchiveEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const size = entry.kind === 'file' ? entry.data.length : 0;
    parts.push(entryHeader(entry.path, entry.kind, size, entry.mtime));
    if (size > 0) parts.push(entry.data, padding(size));
  }
  parts.push(archiveEnd());
  return Buffer.concat(parts);
}
