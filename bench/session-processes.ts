// What the standby and hibernation benches read of a session's processes (issue 46): the members
// of the freezer groups an engine makes (one per session or warm slot, named `<prefix><runtime
// id>`), their CPU time from /proc, and their memory (PSS, shared pages split between their users;
// RSS, each process's resident pages counted whole).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const FREEZER = '/sys/fs/cgroup/freezer/remote-browser-kit';

/** The freezer groups whose names start with `prefix` (an engine's: its sessions' and its warm pool's). */
export function groups(prefix: string): string[] {
  return readdirSync(FREEZER).filter((entry) => entry.startsWith(prefix));
}

/** The freezer group of a runtime session, or undefined once it is gone. */
export function groupOf(runtimeId: string): string | undefined {
  return readdirSync(FREEZER).find((entry) => entry.endsWith(`-${runtimeId}`));
}

/** The processes of a group (none once it went with its session). */
export function procs(group: string): number[] {
  try {
    return readFileSync(join(FREEZER, group, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** CPU time (ms, user + system) the processes have used so far. */
export function cpuMs(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
      total += (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      // A process that ended meanwhile used what it used before.
    }
  }
  return total;
}

/** The processes' memory, MB: `Pss` (shared pages split) or `Rss` (each counted whole), from smaps_rollup. */
export function memoryMb(pids: number[], field: 'Pss' | 'Rss' = 'Pss'): number {
  const pattern = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm');
  let kb = 0;
  for (const pid of pids) {
    try {
      kb += Number(pattern.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      // ended meanwhile
    }
  }
  return kb / 1024;
}
