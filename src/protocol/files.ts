// Files in and out of a session (issue 23, decisions.md 55-57): the rule for a file's name, the
// entries every list carries (the API's `vm/files`, the share link's `files` channel), and the
// files channel's message. Pure TS without zod, so the engine, the proxy route and the viewer read
// them the same way.

/** Which folder of the session a file is in: what its browser downloaded, or what was given to it. */
export type FileKind = 'download' | 'upload';

export const FILE_KINDS: readonly FileKind[] = ['download', 'upload'];

/** One file of a session. */
export interface SessionFileEntry {
  /** Its plain name (one path segment, 1-255 bytes of UTF-8). */
  name: string;
  /** Bytes; while a download is still arriving, the bytes so far. */
  size: number;
  kind: FileKind;
  /** When it was last written (ISO 8601 UTC). */
  created: string;
  /** `downloading` while the remote browser is still writing it (it cannot be fetched yet). */
  state: 'complete' | 'downloading';
}

/** `GET /v8/vm/files?id=` */
export interface FilesListResponse {
  status: 'ok';
  files: SessionFileEntry[];
}

/** `POST /v8/vm/files/upload?id=&name=` */
export interface FileUploadResponse {
  status: 'ok';
  name: string;
  size: number;
}

/** What the share link's `files` channel sends, as JSON text, whenever a session's files change (and once at the start). */
export interface FilesChannelMessage {
  type: 'files';
  files: SessionFileEntry[];
  /** Whether this session's files may be fetched (downloads) and given (uploads): the service's and the plan's switches. */
  downloads: boolean;
  uploads: boolean;
  /** The largest upload, and what the session's uploads may add up to (bytes). */
  maxFileBytes: number;
  maxSessionBytes: number;
}

/** Longest name, in bytes of UTF-8 (what Linux file systems take). */
export const MAX_FILE_NAME_BYTES = 255;

/**
 * How the names of an upload's temporary files begin, while the engine writes them in a session's
 * uploads folder (decisions.md 77). No file may be given such a name: it would be hidden from the
 * lists and, among the engine's own, taken for a temporary.
 */
export const UPLOAD_TEMPORARY_PREFIX = '.rbk-upload-';

/**
 * Checks a file name: one plain name, 1-255 bytes of UTF-8, no `/`, no NUL, not `.` or `..`, not
 * beginning as the engine's temporary files do. Answers null when it is one, else why not (a
 * message naming the field `name`).
 */
export function fileNameProblem(name: string | null | undefined): string | null {
  if (name === null || name === undefined || name === '') return 'name: give the file\'s name (?name=)';
  if (name.includes('\0')) return 'name: must not contain a NUL character';
  if (name.includes('/')) return 'name: must be one plain file name, without "/" (no folders or paths)';
  if (name === '.' || name === '..') return `name: "${name}" is not a file name`;
  if (/[\uD800-\uDFFF]/u.test(name.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/gu, ''))) return 'name: must be valid UTF-8 text';
  const bytes = new TextEncoder().encode(name).length;
  if (bytes > MAX_FILE_NAME_BYTES) return `name: at most ${MAX_FILE_NAME_BYTES} bytes of UTF-8 (this one has ${bytes})`;
  if (name.startsWith(UPLOAD_TEMPORARY_PREFIX)) return `name: names beginning with "${UPLOAD_TEMPORARY_PREFIX}" are kept for the service's own temporary files; choose another`;
  return null;
}

/** Reads a files channel message (JSON text, or the same bytes through a forwarding node); anything else gives `null`. */
export function parseFilesChannelMessage(text: string): FilesChannelMessage | null {
  let value: Partial<FilesChannelMessage> | null;
  try {
    value = JSON.parse(text) as Partial<FilesChannelMessage> | null;
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || value.type !== 'files' || !Array.isArray(value.files)) return null;
  const files = value.files.filter(
    (file): file is SessionFileEntry =>
      typeof file === 'object' && file !== null && typeof file.name === 'string' && typeof file.size === 'number' &&
      FILE_KINDS.includes(file.kind) && typeof file.created === 'string' && (file.state === 'complete' || file.state === 'downloading'),
  );
  return {
    type: 'files',
    files,
    downloads: value.downloads === true,
    uploads: value.uploads === true,
    maxFileBytes: typeof value.maxFileBytes === 'number' ? value.maxFileBytes : 0,
    maxSessionBytes: typeof value.maxSessionBytes === 'number' ? value.maxSessionBytes : 0,
  };
}

/**
 * A `Content-Disposition: attachment` header that gives the file's own name: an ASCII fallback
 * (`filename=`, quotes and non-ASCII replaced) and the exact name as RFC 5987 `filename*`.
 */
export function attachmentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const exact = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}
