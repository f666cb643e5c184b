// The tar format as the engine reads and writes a profile's archive (decisions.md 89): the header
// fields, the checks of a path, and the one plain form the engine writes (ustar headers, GNU long
// names for paths over 99 bytes). archive-checker.ts reads with these; profile-archive.ts and the
// streams write with them.

export const BLOCK = 512;

export interface ArchiveLimits {
  /** The files' bytes together. */
  maxBytes: number;
  maxEntries: number;
}

export const DEFAULT_ARCHIVE_ENTRIES = 50_000;
export const MAX_PATH = 1024;
export const MAX_PATH_BYTES = 4 * MAX_PATH;
/** Stands for a long name past MAX_PATH_BYTES, which is not read: checkedPath refuses it. */
export const TOO_LONG = '\u0000too long';

/** Why an archive was refused, in words a caller reads. */
export class ArchiveRefusal extends Error {}

export function text(header: Buffer, start: number, length: number): string {
  const field = header.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end < 0 ? length : end).toString('utf8');
}

export function octal(header: Buffer, start: number, length: number, what: string): number {
  if (header[start]! & 0x80) throw new ArchiveRefusal(`the archive's ${what} field is in a form not accepted (base-256)`);
  const value = text(header, start, length).trim();
  if (value === '') return 0;
  if (!/^[0-7]+$/.test(value)) throw new ArchiveRefusal(`the archive's ${what} field is not a number`);
  return parseInt(value, 8);
}

/**
 * An entry's time, or 0 where it is not a plain octal number (GNU tar writes a time before 1970 or
 * past 2242 in base-256): the time matters to nobody, and an odd one must not stop a save.
 */
export function mtimeOf(header: Buffer): number {
  try {
    return octal(header, 136, 12, 'time');
  } catch {
    return 0;
  }
}

export function checksumOf(header: Buffer): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : header[i]!;
  return sum;
}

/** The relative path a header names, or why it is refused. */
export function checkedPath(raw: string, folder: boolean): string {
  let path = raw.startsWith('./') ? raw.slice(2) : raw;
  if (folder && path.endsWith('/')) path = path.slice(0, -1);
  if (path === '' || path === '.') return '';
  if (path.length > MAX_PATH) throw new ArchiveRefusal(`a path in the archive is longer than ${MAX_PATH} characters`);
  if (path.includes('\u0000')) throw new ArchiveRefusal('a path in the archive holds a NUL character');
  if (path.startsWith('/')) throw new ArchiveRefusal(`an absolute path in the archive: "${path.slice(0, 100)}"`);
  for (const part of path.split('/')) {
    if (part === '..') throw new ArchiveRefusal(`a path in the archive leaves its folder: "${path.slice(0, 100)}"`);
    if (part === '' || part === '.') throw new ArchiveRefusal(`a path in the archive is not in plain form: "${path.slice(0, 100)}"`);
  }
  return path;
}

export const KIND_WORDS: Record<string, string> = { '1': 'a hard link', '2': 'a symbolic link', '3': 'a character device', '4': 'a block device', '6': 'a FIFO', K: 'a long link name', g: 'a global header', S: 'a sparse file', V: 'a volume label' };

/** The largest time 11 octal digits hold. */
const MAX_MTIME = 8 ** 11 - 1;

function header(name: string, kind: 'file' | 'folder' | 'long-name', size: number, mtime: number): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name.slice(0, 100), 0, 100, 'utf8');
  block.write(kind === 'folder' ? '0000700\0' : '0000600\0', 100, 8, 'latin1');
  block.write('0000000\0', 108, 8, 'latin1');
  block.write('0000000\0', 116, 8, 'latin1');
  block.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 12, 'latin1');
  block.write(`${Math.min(MAX_MTIME, Math.max(0, Math.floor(mtime))).toString(8).padStart(11, '0')}\0`, 136, 12, 'latin1');
  block.write(kind === 'folder' ? '5' : kind === 'long-name' ? 'L' : '0', 156, 1, 'latin1');
  block.write('ustar\u000000', 257, 8, 'latin1');
  block.write(`${checksumOf(block).toString(8).padStart(6, '0')}\0 `, 148, 8, 'latin1');
  return block;
}

/** An entry's header as the engine writes it: a GNU long name first for a path over 99 bytes. */
export function entryHeader(path: string, kind: 'file' | 'folder', size: number, mtime: number): Buffer {
  const name = kind === 'folder' ? `${path}/` : path;
  if (Buffer.byteLength(name) <= 99) return header(name, kind, size, mtime);
  const long = Buffer.from(`${name}\u0000`, 'utf8');
  return Buffer.concat([header('././@LongLink', 'long-name', long.length, 0), long, padding(long.length), header(Buffer.from(name).subarray(0, 99).toString('utf8'), kind, size, mtime)]);
}

/** The zeros after `size` bytes of data, to the end of their block. */
export function padding(size: number): Buffer {
  const rest = size % BLOCK;
  return rest === 0 ? Buffer.alloc(0) : Buffer.alloc(BLOCK - rest);
}

/** An archive's end: two zero blocks. */
export function archiveEnd(): Buffer {
  return Buffer.alloc(2 * BLOCK);
}
