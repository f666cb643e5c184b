// What a saved profile keeps of a browser's profile directory (decisions.md 89): the state a
// person expects back (cookies, localStorage, IndexedDB, service workers and their caches, saved
// logins, site permissions) and, when asked, the open tabs; never what can be fetched again (the
// HTTP cache, code caches, GPU caches) nor the engine's own files (Firefox's user.js).
import { fileNameProblem } from '../../../protocol/files.js';
import type { BrowserImage } from './catalog.js';

export type ProfileFamily = 'chromium' | 'firefox';

/** Paths relative to the profile directory: files (with their SQLite journals) and folders (with what they hold). */
interface Contents {
  files: readonly string[];
  folders: readonly string[];
}

const CHROMIUM: Contents = {
  files: ['Local State', 'Default/Cookies', 'Default/Login Data', 'Default/Login Data For Account', 'Default/Preferences', 'Default/Secure Preferences'],
  folders: ['Default/Local Storage', 'Default/IndexedDB', 'Default/Service Worker', 'Default/WebStorage', 'Default/databases', 'Default/File System'],
};
const CHROMIUM_TABS: Contents = { files: [], folders: ['Default/Sessions', 'Default/Session Storage'] };

const FIREFOX: Contents = {
  files: ['cookies.sqlite', 'webappsstore.sqlite', 'storage.sqlite', 'permissions.sqlite', 'logins.json', 'key4.db', 'cert9.db', 'content-prefs.sqlite'],
  folders: ['storage/default', 'storage/permanent'],
};
const FIREFOX_TABS: Contents = { files: ['sessionstore.jsonlz4'], folders: ['sessionstore-backups'] };

/** SQLite's journals beside a database file: a copy without them may lose what was last written. */
const SIDECARS = ['', '-journal', '-wal', '-shm'];

export function profileFamily(image: Pick<BrowserImage, 'family'>): ProfileFamily {
  return image.family === 'chromium' ? 'chromium' : 'firefox';
}

function contents(family: ProfileFamily, tabs: boolean): Contents {
  const base = family === 'chromium' ? CHROMIUM : FIREFOX;
  const extra = family === 'chromium' ? CHROMIUM_TABS : FIREFOX_TABS;
  return tabs ? { files: [...base.files, ...extra.files], folders: [...base.folders, ...extra.folders] } : base;
}

/** The paths a program in the session archives (some may not exist: the archiver skips those). */
export function profilePaths(family: ProfileFamily, tabs: boolean): string[] {
  const { files, folders } = contents(family, tabs);
  return [...files.flatMap((file) => SIDECARS.map((suffix) => `${file}${suffix}`)), ...folders];
}

/**
 * The session's file folders (beside its profile directory) that a hibernated state keeps too
 * (decisions.md 177): their archive entries are `downloads/<name>` and `uploads/<name>`.
 */
export const SESSION_FILE_FOLDERS = ['downloads', 'uploads'] as const;

/** Downloads still arriving: never kept (uploads' temporaries are names the files API refuses). */
const ARRIVING = /\.(crdownload|part)$/;

/** Whether a path of a hibernated state's archive is kept: the profile's with its tabs, and the files directly in the two folders. */
export function keepsHibernationPath(family: ProfileFamily): (path: string) => boolean {
  const profile = keepsProfilePath(family, true);
  return (path) => {
    if (profile(path)) return true;
    const [folder, name, ...deeper] = path.replace(/\/$/, '').split('/');
    if (!(SESSION_FILE_FOLDERS as readonly string[]).includes(folder!)) return false;
    return name === undefined || (deeper.length === 0 && fileNameProblem(name) === null && !ARRIVING.test(name));
  };
}

/** Whether a path of an archive is one the profile keeps (the folders leading to them included). */
export function keepsProfilePath(family: ProfileFamily, tabs: boolean): (path: string) => boolean {
  const { files, folders } = contents(family, tabs);
  const exact = new Set(files.flatMap((file) => SIDECARS.map((suffix) => `${file}${suffix}`)));
  const parents = new Set<string>();
  for (const path of [...exact, ...folders]) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) parents.add(parts.slice(0, i).join('/'));
  }
  return (path) => exact.has(path) || parents.has(path) || folders.some((folder) => path === folder || path.startsWith(`${folder}/`));
}
