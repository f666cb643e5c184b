// A profile's archive as the engine checks it (decisions.md 89): a tar stream read here, header by
// header, before any byte of it reaches a session. Only plain files and folders under relative
// paths pass: a link, a device, a FIFO, an absolute path or `..`, a size or an entry count over
// the caps, a damaged header is refused (restore) or left out (what a session hands back, which
// its user could have filled with anything). What passes is written again in one plain form
// (ustar headers, GNU long names), so the archive a session unpacks is the engine's own.

const BLOCK = 512;

export interface ArchiveLimits {
  /** The files' bytes together. */
  maxBytes: number;
  maxEntries: number;
}

export const DEFAULT_ARCHIVE_ENTRIES = 50_000;
const MAX_PATH = 1024;
const MAX_PATH_BYTES = 4 * MAX_PATH;
/** Stands for a long name past MAX_PATH_BYTES, which is not read: checkedPath refuses it. */
const TOO_LONG = '\u0000too long';

export interface ArchiveEntry {
  path: string;
  kind: 'file' | 'folder';
  /** Seconds since the epoch. */
  mtime: number;
  data: Buffer;
}

/** Why an archive was refused, in words a caller reads. */
export class ArchiveRefusal extends Error {}

function text(header: Buffer, start: number, length: number): string {
  const field = header.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end < 0 ? length : end).toString('utf8');
}

function octal(header: Buffer, start: number, length: number, what: string): number {
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
function mtimeOf(header: Buffer): number {
  try {
    return octal(header, 136, 12, 'time');
  } catch {
    return 0;
  }
}

function checksumOf(header: Buffer): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : header[i]!;
  return sum;
}

/** The relative path a header names, or why it is refused. */
function checkedPath(raw: string, folder: boolean): string {
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

const KIND_WORDS: Record<string, string> = { '1': 'a hard link', '2': 'a symbolic link', '3': 'a character device', '4': 'a block device', '6': 'a FIFO', K: 'a long link name', g: 'a global header', S: 'a sparse file', V: 'a volume label' };

/**
 * Reads and checks an archive. `strict` (a restore) refuses anything but plain files and folders;
 * otherwise (what a session hands back) those are left out and counted in `dropped`. `keep`
 * leaves out paths a profile does not hold. Throws ArchiveRefusal with what was wrong.
 */
export function readArchive(archive: Buffer, limits: ArchiveLimits, strict: boolean, keep: (path: string) => boolean = () => true): { entries: ArchiveEntry[]; dropped: number; bytes: number } {
  const entries: ArchiveEntry[] = [];
  let dropped = 0;
  let bytes = 0;
  let longName: string | undefined;
  let paxPath: string | undefined;
  let offset = 0;
  for (;;) {
    if (offset + BLOCK > archive.length) {
      // GNU tar ends with two zero blocks; a stream cut before them is damaged.
      throw new ArchiveRefusal('the archive ends in the middle of an entry');
    }
    const header = archive.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    if (octal(header, 148, 8, 'checksum') !== checksumOf(header)) throw new ArchiveRefusal('a header of the archive is damaged (its checksum does not match)');
    const type = String.fromCharCode(header[156]!) === '\u0000' ? '0' : String.fromCharCode(header[156]!);
    const size = octal(header, 124, 12, 'size');
    const dataStart = offset + BLOCK;
    const dataEnd = dataStart + size;
    if (dataEnd > archive.length) throw new ArchiveRefusal('the archive ends in the middle of an entry');
    offset = dataStart + Math.ceil(size / BLOCK) * BLOCK;
    const data = archive.subarray(dataStart, dataEnd);
    if (type === 'L') {
      // Bytes, not characters: a path of MAX_PATH characters takes up to four bytes a character.
      // A longer one is refused (restore) or its entry left out (a session's), whatever it names.
      if (size > MAX_PATH_BYTES + 1) {
        if (strict) throw new ArchiveRefusal(`a path in the archive is longer than ${MAX_PATH} characters`);
        longName = TOO_LONG;
      } else {
        longName = text(data, 0, data.length);
      }
      continue;
    }
    if (type === 'x') {
      if (size > 64 * 1024) throw new ArchiveRefusal('an extended header of the archive is too large');
      for (const record of data.toString('utf8').split('\n')) {
        const match = /^\d+ ([^=]+)=(.*)$/s.exec(record);
        if (!match) continue;
        if (match[1] === 'path') paxPath = match[2];
        else if (match[1] === 'size' || match[1] === 'linkpath') throw new ArchiveRefusal(`an extended header of the archive sets "${match[1]}"`);
      }
      continue;
    }
    const magic = header.subarray(257, 262).toString('latin1');
    const prefix = magic === 'ustar' ? text(header, 345, 155) : '';
    const named = paxPath ?? longName ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
    longName = undefined;
    paxPath = undefined;
    const kind = type === '0' || type === '7' ? 'file' : type === '5' ? 'folder' : null;
    if (!kind) {
      if (strict) throw new ArchiveRefusal(`the archive holds ${KIND_WORDS[type] ?? `an entry of kind "${type}"`} ("${named.slice(0, 100)}"); only plain files and folders are restored`);
      dropped++;
      continue;
    }
    let path: string;
    try {
      path = checkedPath(named, kind === 'folder');
    } catch (error) {
      if (strict) throw error;
      dropped++;
      continue;
    }
    if (path === '' || !keep(path)) {
      if (path !== '') dropped++;
      continue;
    }
    if (entries.length + 1 > limits.maxEntries) throw new ArchiveRefusal(`the archive holds more than ${limits.maxEntries} entries`);
    bytes += kind === 'file' ? size : 0;
    if (bytes > limits.maxBytes) throw new ArchiveRefusal(`the archive's files add up to more than ${limits.maxBytes} bytes`);
    entries.push({ path, kind, mtime: mtimeOf(header), data: kind === 'file' ? data : Buffer.alloc(0) });
  }
  return { entries, dropped, bytes };
}

/** The largest time 11 octal digits hold. */
const MAX_MTIME = 8 ** 11 - 1;

function header(name: string, kind: ArchiveEntry['kind'] | 'long-name', size: number, mtime: number): Buffer {
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

function padded(data: Buffer): Buffer[] {
  const rest = data.length % BLOCK;
  return rest === 0 ? [data] : [data, Buffer.alloc(BLOCK - rest)];
}

/** Writes entries as one plain archive: ustar headers, GNU long names for paths over 99 bytes. */
export function writeArchive(entries: readonly ArchiveEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const name = entry.kind === 'folder' ? `${entry.path}/` : entry.path;
    if (Buffer.byteLength(name) > 99) {
      const long = Buffer.from(`${name}\u0000`, 'utf8');
      parts.push(header('././@LongLink', 'long-name', long.length, 0), ...padded(long));
    }
    parts.push(header(Buffer.byteLength(name) > 99 ? Buffer.from(name).subarray(0, 99).toString('utf8') : name, entry.kind, entry.kind === 'file' ? entry.data.length : 0, entry.mtime));
    if (entry.kind === 'file') parts.push(...padded(entry.data));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}
