// Clean-up of whatever an earlier run of the engine left in its runtime root (it crashed, or was
// killed): the sessions' processes, cgroups, uid claims, directories and X display files. Each
// session directory holds a runtime record, written as its parts start, that says what to end.
import { createHash } from 'node:crypto';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { reapSessionCgroups, thawSessionCgroups } from '../sandbox/cgroups.js';
import { removeDisplayFiles } from '../display/display.js';
import { forgetFirefoxBuilds } from '../browser/firefox-launcher.js';
import { killMarkedProcesses } from '../sandbox/processes.js';
import { reapUidClaims } from '../sandbox/session-uids.js';

export interface ReapReport {
  processes: number;
  directories: number;
}

/** What a later run needs to end a session after a crash: `<session dir>/runtime.json`. */
export interface RuntimeRecord {
  id: string;
  /** A confined display's files were in its own namespace, never in the host's /tmp. */
  confined: boolean;
  displayNumber: number;
  pids: number[];
}

/** Files shared read-only with every confined session (browser policies, the Firefox launcher). */
export const SHARED_DIR = '.shared';

/** A short name of a runtime root, unique on this host: it prefixes the root's cgroups. */
export function rootKey(root: string): string {
  return `rbk-${createHash('sha256').update(root).digest('hex').slice(0, 10)}`;
}

export async function writeRuntimeRecord(dir: string, record: RuntimeRecord): Promise<void> {
  await writeFile(join(dir, 'runtime.json'), JSON.stringify(record));
}

/** Ends processes and removes directories and X display files an earlier run left in `root`. */
export async function reapRoot(root: string): Promise<ReapReport> {
  // Sessions an engine killed with -9 left in standby are thawed first: a frozen process dies only once thawed.
  await thawSessionCgroups(`${rootKey(root)}-`);
  const processes = await killMarkedProcesses({ root });
  await reapSessionCgroups(`${rootKey(root)}-`);
  await reapUidClaims();
  forgetFirefoxBuilds(root);
  let directories = 0;
  let entries: string[] = [];
  try {
    entries = await readdir(root);
  } catch {
    return { processes, directories };
  }
  for (const entry of entries) {
    const dir = join(root, entry);
    if (entry === SHARED_DIR) {
      await rm(dir, { recursive: true, force: true });
      continue;
    }
    try {
      const record = JSON.parse(await readFile(join(dir, 'runtime.json'), 'utf8')) as RuntimeRecord;
      if (!record.confined && Number.isInteger(record.displayNumber)) await removeDisplayFiles(record.displayNumber);
    } catch {
      /* no record: the session died before its display started */
    }
    await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    directories++;
  }
  return { processes, directories };
}
