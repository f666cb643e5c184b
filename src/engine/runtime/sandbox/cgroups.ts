// Resource caps of one session: a control group (cgroup v1 memory + pids controllers, or cgroup v2
// with both enabled) that every process of the session joins before it runs, so a page that
// allocates without end or forks without end meets the kernel's limit, not the host's.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface ResourceLimits {
  /** Memory of every process of the session together (page cache and shared memory included). */
  memoryMb: number;
  /** Processes and threads together (the kernel's pids controller counts both). */
  processes: number;
  /**
   * CPU time: at most this many cores' worth, or null for no cap. Either way each session is one
   * group of the cpu controller (where the host has one), so sessions share the CPU fairly, one
   * share each, however many processes and threads a page starts.
   */
  cpus: number | null;
}

export interface SessionCgroup {
  /** The `cgroup.procs` files a process writes its own pid into to join (one per hierarchy). */
  readonly procsFiles: readonly string[];
  /** Times the kernel ended a process of the session because the memory limit was reached. */
  oomKills(): number;
  /** Periods in which the session used up its CPU share and had to wait (0 without a cpu controller). */
  cpuThrottled(): number;
  /** Memory the session's processes and files hold now, in bytes (its memory controller's count). */
  memoryBytes(): number;
  /** Kills every process still in the group and removes the group. */
  remove(): Promise<void>;
}

/** Where this host keeps the groups of a controller, and how the engine's own group is named there. */
interface Hierarchy {
  version: 1 | 2;
  /** Directory under which session groups are made: the engine's own group + `remote-browser-kit`. */
  parent: string;
}

const GROUP_DIR = 'remote-browser-kit';
const CPU_PERIOD_US = 100_000;

/** The engine's own group path in each hierarchy, from /proc/self/cgroup (`N:controllers:/path`). */
function ownGroups(): Map<string, string> {
  const groups = new Map<string, string>();
  let text = '';
  try {
    text = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return groups;
  }
  for (const line of text.trim().split('\n')) {
    const [, controllers, path] = line.split(/:(.*?):/);
    if (path === undefined || controllers === undefined) continue;
    if (controllers === '') groups.set('', path);
    for (const name of controllers.split(',')) if (name) groups.set(name, path);
  }
  return groups;
}

/**
 * The hierarchies that can cap a session here: v1 `memory` and `pids` when both are mounted, else
 * v2 when /sys/fs/cgroup is the unified hierarchy and offers both controllers. Null: no caps here.
 */
export function findHierarchies(): { hierarchies: Hierarchy[]; reason: string | null } {
  const own = ownGroups();
  const v1 = ['memory', 'pids'].map((controller) => ({ controller, mount: `/sys/fs/cgroup/${controller}` }));
  if (v1.every(({ mount }) => existsSync(join(mount, 'cgroup.procs')))) {
    // The cpu controller caps CPU time where it is mounted; memory and pids are required.
    const cpu = existsSync('/sys/fs/cgroup/cpu/cpu.cfs_quota_us') ? [{ controller: 'cpu', mount: '/sys/fs/cgroup/cpu' }] : [];
    return {
      hierarchies: [...v1, ...cpu].map(({ controller, mount }) => ({ version: 1, parent: join(mount, own.get(controller) ?? '/', GROUP_DIR) })),
      reason: null,
    };
  }
  const unified = '/sys/fs/cgroup';
  if (existsSync(join(unified, 'cgroup.controllers'))) {
    const base = join(unified, own.get('') ?? '/');
    const available = readFileSync(join(unified, 'cgroup.controllers'), 'utf8');
    if (/\bmemory\b/.test(available) && /\bpids\b/.test(available)) {
      // v2 keeps processes out of inner groups: session groups go beside the engine's, under its
      // parent (or under the root, which may hold processes, when the engine is in the root group).
      const beside = base === unified || base === `${unified}/` ? unified : join(base, '..');
      return { hierarchies: [{ version: 2, parent: join(beside, GROUP_DIR) }], reason: null };
    }
    return { hierarchies: [], reason: 'cgroup v2 without the memory and pids controllers' };
  }
  return { hierarchies: [], reason: 'no cgroup memory and pids controllers are mounted' };
}

async function writeSetting(dir: string, file: string, value: string | number): Promise<void> {
  await writeFile(join(dir, file), String(value));
}

/** Creates the session's group(s) with its limits. `name` is unique on this host (root key + session id). */
export async function createSessionCgroup(name: string, limits: ResourceLimits): Promise<SessionCgroup> {
  const { hierarchies, reason } = findHierarchies();
  if (hierarchies.length === 0) throw new Error(`cannot cap the session's resources: ${reason}`);
  const dirs: Array<{ dir: string; version: 1 | 2 }> = [];
  const memoryBytes = limits.memoryMb * 1024 * 1024;
  try {
    for (const { parent, version } of hierarchies) {
      await mkdir(parent, { recursive: true });
      if (version === 2) {
        // One by one: a controller the host lacks (cpu) must not keep the others off.
        for (const controller of ['+memory', '+pids', '+cpu']) await writeSetting(parent, 'cgroup.subtree_control', controller).catch(() => undefined);
      }
      const dir = join(parent, name);
      await mkdir(dir);
      dirs.push({ dir, version });
      if (version === 2) {
        await writeSetting(dir, 'memory.max', memoryBytes);
        await writeSetting(dir, 'memory.swap.max', 0).catch(() => undefined);
        await writeSetting(dir, 'pids.max', limits.processes);
        if (limits.cpus !== null && existsSync(join(dir, 'cpu.max'))) await writeSetting(dir, 'cpu.max', `${Math.round(limits.cpus * CPU_PERIOD_US)} ${CPU_PERIOD_US}`);
      } else if (existsSync(join(dir, 'cpu.cfs_quota_us'))) {
        if (limits.cpus !== null) {
          await writeSetting(dir, 'cpu.cfs_period_us', CPU_PERIOD_US);
          await writeSetting(dir, 'cpu.cfs_quota_us', Math.round(limits.cpus * CPU_PERIOD_US));
        }
      } else if (existsSync(join(dir, 'memory.limit_in_bytes'))) {
        await writeSetting(dir, 'memory.limit_in_bytes', memoryBytes);
        // Swap is memory too: without this a session could page its way past the limit.
        if (existsSync(join(dir, 'memory.memsw.limit_in_bytes'))) await writeSetting(dir, 'memory.memsw.limit_in_bytes', memoryBytes);
      } else {
        await writeSetting(dir, 'pids.max', limits.processes);
      }
    }
  } catch (error) {
    await Promise.all(dirs.map(({ dir }) => removeGroup(dir)));
    throw new Error(`cannot cap the session's resources: ${(error as Error).message}`);
  }
  return {
    procsFiles: dirs.map(({ dir }) => join(dir, 'cgroup.procs')),
    oomKills() {
      for (const { dir, version } of dirs) {
        const file = join(dir, version === 2 ? 'memory.events' : 'memory.oom_control');
        try {
          const match = /^oom_kill (\d+)$/m.exec(readFileSync(file, 'utf8'));
          if (match) return Number(match[1]);
        } catch {
          /* not this hierarchy's file */
        }
      }
      return 0;
    },
    cpuThrottled() {
      for (const { dir } of dirs) {
        try {
          const match = /^nr_throttled (\d+)$/m.exec(readFileSync(join(dir, 'cpu.stat'), 'utf8'));
          if (match) return Number(match[1]);
        } catch {
          /* not this hierarchy's file */
        }
      }
      return 0;
    },
    memoryBytes() {
      for (const { dir, version } of dirs) {
        try {
          return Number(readFileSync(join(dir, version === 2 ? 'memory.current' : 'memory.usage_in_bytes'), 'utf8').trim()) || 0;
        } catch {
          /* not this hierarchy's file */
        }
      }
      return 0;
    },
    async remove() {
      await Promise.all(dirs.map(({ dir }) => removeGroup(dir)));
    },
  };
}

/** SIGKILLs what is left in a group, waits (bounded) until it is empty, and removes it. */
async function removeGroup(dir: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let pids: number[] = [];
    try {
      pids = (await readFile(join(dir, 'cgroup.procs'), 'utf8')).split('\n').filter(Boolean).map(Number);
    } catch {
      return; // already gone
    }
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* ended between the read and the kill */
      }
    }
    try {
      await rmdir(dir);
      return;
    } catch {
      if (Date.now() > deadline) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/** Removes the groups an earlier run left behind for the sessions whose names start with `prefix`. */
export async function reapSessionCgroups(prefix: string): Promise<number> {
  const { hierarchies } = findHierarchies();
  let removed = 0;
  for (const { parent } of hierarchies) {
    let entries: string[] = [];
    try {
      entries = await readdir(parent);
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (!entry.startsWith(prefix)) continue;
      await removeGroup(join(parent, entry));
      removed++;
    }
  }
  return removed;
}
