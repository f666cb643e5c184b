// The data directory is the engine's alone (decisions.md 130): its database holds the share-link,
// replay and automation secrets and the profile key sits beside it, so the directory is 0700 and
// those files 0600, whether the engine made them or found them (an older engine, a copy, a restore
// from backup). The engine sets the modes at each start; `doctor` reports a directory others can read.
import { chmodSync, closeSync, openSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The SQLite database's file name in the data directory; its journal files add -wal and -shm. */
export const DATABASE_FILE = 'engine.sqlite';
/** The files that hold secrets, or say which node this is: the database and its journal, the profile key, the node's id. */
const PRIVATE_FILES = [DATABASE_FILE, `${DATABASE_FILE}-wal`, `${DATABASE_FILE}-shm`, 'profile.key', 'node-id'];
const DIRECTORY_MODE = 0o700;
const FILE_MODE = 0o600;

/** A path of the data directory whose mode lets others in. */
export interface OpenMode {
  path: string;
  mode: number;
  wanted: number;
}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/** What of the data directory others on this host may read or enter (nothing when it does not exist yet). */
export function openModes(dataDir: string): OpenMode[] {
  const found: OpenMode[] = [];
  for (const [path, wanted] of [[dataDir, DIRECTORY_MODE] as const, ...PRIVATE_FILES.map((name) => [join(dataDir, name), FILE_MODE] as const)]) {
    let mode: number;
    try {
      mode = statSync(path).mode & 0o777;
    } catch {
      continue;
    }
    if (mode & 0o077) found.push({ path, mode, wanted });
  }
  return found;
}

/** How to close what `openModes` found, as commands its owner runs. */
export function fixFor(found: readonly OpenMode[]): string {
  return found.map((open) => `chmod ${octal(open.wanted)} ${open.path}`).join(' && ');
}

/** What `openModes` found, in a sentence. */
export function describeOpenModes(found: readonly OpenMode[]): string {
  return found.map((open) => `${open.path} is ${octal(open.mode)}`).join(', ');
}

/** Makes the database file before SQLite does, 0600, so its journal files are made 0600 too (SQLite gives them the database's mode). */
export function prepareDatabaseFile(dataDir: string): string {
  const file = join(dataDir, DATABASE_FILE);
  closeSync(openSync(file, 'a', FILE_MODE));
  return file;
}

/**
 * Sets the data directory to 0700 and its private files to 0600, whatever they were; answers what
 * it changed. Throws, saying how to fix it, when it may not (a directory another user owns):
 * the engine does not start on a directory whose secrets others may read.
 */
export function makePrivate(dataDir: string): OpenMode[] {
  const found = openModes(dataDir);
  for (const open of found) {
    try {
      chmodSync(open.path, open.wanted);
    } catch (error) {
      throw new Error(
        `the data directory must be readable by this engine alone (its database holds secrets): ${describeOpenModes(found)}, and this engine cannot change that (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); as the owner run: ${fixFor(found)}`,
      );
    }
  }
  return found;
}
