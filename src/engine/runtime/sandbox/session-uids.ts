// Session uids: one per live session on this host, claimed with a file created exclusively in a
// root-only directory, so engines on one host never hand out the same uid; released when the
// session stops, and reaped at an engine's start when the engine that claimed it is gone.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Host directory of uid claims: one file per uid in use, so engines on one host never share one. */
const UID_CLAIMS = '/run/remote-browser-kit/uids';

/** The range of uids handed to sessions. */
export interface UidRange {
  first: number;
  count: number;
}

/** Claims a uid no other live session on this host holds (a file per uid, created exclusively). */
export async function claimUid(range: UidRange, owner: string): Promise<{ uid: number; release: () => Promise<void> }> {
  await mkdir(UID_CLAIMS, { recursive: true, mode: 0o700 });
  const start = randomBytes(4).readUInt32BE() % range.count;
  for (let i = 0; i < range.count; i++) {
    const uid = range.first + ((start + i) % range.count);
    const file = join(UID_CLAIMS, String(uid));
    try {
      const handle = await open(file, 'wx', 0o600);
      await handle.writeFile(`${process.pid} ${owner}\n`);
      await handle.close();
      return { uid, release: () => rm(file, { force: true }) };
    } catch (error) {
      // Taken, or left by an engine that is gone: the next one. (Stale claims are released only
      // when an engine starts, so two engines never race to take over the same one.)
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  throw new Error(`no free session uid in ${range.first}..${range.first + range.count - 1}: raise confinement.uids.count`);
}

/** A claim is stale when the engine that made it is gone (its sessions were reaped with it). */
async function staleClaim(file: string): Promise<boolean> {
  const pid = /^(\d+) /.exec(await readFile(file, 'utf8').catch(() => ''))?.[1];
  // A claim without an engine's pid (a write cut short) belongs to nobody.
  if (!pid || Number(pid) <= 1) return true;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch {
    return true;
  }
}

/**
 * The uids that live processes of this host run as now. A zombie (killed, not yet reaped by
 * init) runs nothing: an engine restarted right after its sessions were killed would otherwise
 * keep their claims until its next start.
 */
async function uidsInUse(): Promise<Set<number>> {
  const uids = new Set<number>();
  const entries = await readdir('/proc').catch(() => [] as string[]);
  await Promise.all(entries.filter((entry) => /^\d+$/.test(entry)).map(async (entry) => {
    const status = await readFile(`/proc/${entry}/status`, 'utf8').catch(() => '');
    const uid = /^Uid:\s+(\d+)/m.exec(status)?.[1];
    if (uid && !/^State:\s+[ZX]/m.test(status)) uids.add(Number(uid));
  }));
  return uids;
}

/**
 * Releases the uid claims of engines that are gone and whose uid no process runs as any more
 * (run at start, after this engine reaped its own leftovers): a session another engine left
 * running keeps its uid until that engine's next start ends it.
 */
export async function reapUidClaims(): Promise<void> {
  let entries: string[] = [];
  try {
    entries = await readdir(UID_CLAIMS);
  } catch {
    return;
  }
  const inUse = await uidsInUse();
  await Promise.all(entries.map(async (entry) => {
    const file = join(UID_CLAIMS, entry);
    if (!inUse.has(Number(entry)) && (await staleClaim(file))) await rm(file, { force: true });
  }));
}
