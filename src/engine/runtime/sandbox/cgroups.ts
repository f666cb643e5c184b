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
  /** Whether this host can freeze the group (v1 `freezer` mounted, or v2's `cgroup.freeze`). */
  readonly freezable: boolean;
  /**
   * Freezes (true) or thaws (false) every process of the group and resolves once the kernel says
   * it is done (v1 `freezer.state` FROZEN or THAWED, v2 `cgroup.events` frozen 0/1); rejects when
   * it is not done within `timeoutMs` or the host cannot freeze.
   */
  freeze(frozen: boolean, timeoutMs?: number): Promise<void>;
  /** Whether the group is frozen now, as the kernel says (false where it cannot freeze). */
  frozen(): boolean;
  /** Thaws, kills every process still in the group and removes the group. */
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
    // The cpu controller caps CPU time where it is mounted, the freezer puts a session in standby
    // (decisions.md 141) where it is; memory and pids are required.
    const cpu = existsSync('/sys/fs/cgroup/cpu/cpu.cfs_quota_us') ? [{ controller: 'cpu', mount: '/sys/fs/cgroup/cpu' }] : [];
    const freezer = existsSync('/sys/fs/cgroup/freezer/cgroup.procs') ? [{ controller: 'freezer', mount: '/sys/fs/cgroup/freezer' }] : [];
    return {
      hierarchies: [...v1, ...cpu, ...freezer].map(({ controller, mount }) => ({ version: 1, parent: join(mount, own.get(controller) ?? '/', GROUP_DIR) })),
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
      } else if (existsSync(join(dir, 'freezer.state'))) {
        // Nothing to set: a new group is THAWED.
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
  const freezeFile = freezeFileOf(dirs);
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
    freezable: freezeFile !== null,
    frozen() {
      if (!freezeFile) return false;
      try {
        return isFrozen(freezeFile);
      } catch {
        return false;
      }
    },
    async freeze(frozen, timeoutMs = 5000) {
      if (!freezeFile) throw new Error('this host cannot freeze cgroups (no v1 freezer controller, no v2 cgroup.freeze)');
      await writeFile(freezeFile.file, freezeFile.version === 2 ? (frozen ? '1' : '0') : frozen ? 'FROZEN' : 'THAWED');
      // The kernel finishes asynchronously (v1 says FREEZING meanwhile; a task in an uninterruptible
      // sleep holds it there): done when it says so, or failed after the time.
      const deadline = Date.now() + timeoutMs;
      while (isFrozen(freezeFile) !== frozen) {
        if (Date.now() > deadline) throw new Error(`the session's processes were not ${frozen ? 'frozen' : 'thawed'} within ${timeoutMs} ms`);
        // v1 retries a FREEZING group only when asked again.
        if (freezeFile.version === 1) await writeFile(freezeFile.file, frozen ? 'FROZEN' : 'THAWED');
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async remove() {
      // A frozen task holds a SIGKILL until it thaws (v1): thawed first, so the kill ends it.
      if (freezeFile) await writeFile(freezeFile.file, freezeFile.version === 2 ? '0' : 'THAWED').catch(() => undefined);
      await Promise.all(dirs.map(({ dir }) => removeGroup(dir)));
    },
  };
}

/** The file that freezes a group: v1 `freezer.state`, v2 `cgroup.freeze`. */
interface FreezeFile {
  version: 1 | 2;
  file: string;
  /** What says whether it is frozen: v1 the same file, v2 `cgroup.events`. */
  state: string;
}

function freezeFileOf(dirs: ReadonlyArray<{ dir: string; version: 1 | 2 }>): FreezeFile | null {
  for (const { dir, version } of dirs) {
    if (version === 1 && existsSync(join(dir, 'freezer.state'))) return { version, file: join(dir, 'freezer.state'), state: join(dir, 'freezer.state') };
    if (version === 2 && existsSync(join(dir, 'cgroup.freeze'))) return { version, file: join(dir, 'cgroup.freeze'), state: join(dir, 'cgroup.events') };
  }
  return null;
}

function isFrozen(freeze: FreezeFile): boolean {
  const text = readFileSync(freeze.state, 'utf8');
  return freeze.version === 1 ? text.trim() === 'FROZEN' : /^frozen 1$/m.test(text);
}

/** Whether this host can freeze a session's processes (standby, decisions.md 141): doctor says so. */
export function canFreeze(): { available: boolean; reason: string | null } {
  const { hierarchies, reason } = findHierarchies();
  if (hierarchies.length === 0) return { available: false, reason };
  if (hierarchies.some(({ version, parent }) => version === 2 || parent.startsWith('/sys/fs/cgroup/freezer/'))) return { available: true, reason: null };
  return { available: false, reason: 'cgroup v1 without the freezer controller mounted' };
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

/** Thaws the groups an earlier run left frozen (standby) for the sessions whose names start with `prefix`: their processes can then be killed. */
export async function thawSessionCgroups(prefix: string): Promise<void> {
  for (const { parent } of findHierarchies().hierarchies) {
    const entries = await readdir(parent).catch(() => [] as string[]);
    for (const entry of entries.filter((name) => name.startsWith(prefix))) {
      await writeFile(join(parent, entry, 'freezer.state'), 'THAWED').catch(() => undefined);
      await writeFile(join(parent, entry, 'cgroup.freeze'), '0').catch(() => undefined);
    }
  }
}

/** Removes the groups an earlier run left behind for the sessions whose names start with `prefix`. */
export async function reapSessionCgroups(prefix: string): Promise<number> {
  // A group left frozen is thawed first: its tasks could not die frozen.
  await thawSessionCgroups(prefix);
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
