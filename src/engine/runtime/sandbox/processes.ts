// Process supervision for session runtimes: spawn every part in its own process group, tagged
// with the session's marker so that stragglers (crash handlers that detach) can be found and ended.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { basename, dirname } from 'node:path';
import { readWithinBudget } from './read-budget.js';

/** Environment variable set on every process of a session; its value is `sessionMarker(dir)`. */
export const SESSION_MARKER = 'RBK_SESSION';

/** A digest of the runtime root: the session can read its marker, and learns no path of the engine's. */
function rootToken(root: string): string {
  return createHash('sha256').update(root).digest('hex').slice(0, 16);
}

/** The marker's value for the session directory `dir`: its runtime root's digest and its own name. */
export function sessionMarker(dir: string): string {
  return `${rootToken(dirname(dir))}/${basename(dir)}`;
}

/** How much of a process's error output the engine reads a second (it keeps the last 4,000 characters). */
const STDERR_BYTES_PER_SECOND = 64 * 1024;

export interface SupervisedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves when the process has exited (never rejects). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Last lines the process wrote to stderr, for error messages. */
  stderrTail(): string;
}

export function spawnSupervised(
  name: string,
  command: string,
  args: string[],
  options: SpawnOptions & { env: NodeJS.ProcessEnv },
): SupervisedProcess {
  const child = spawn(command, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...options,
    // Own process group: stop can signal the whole group, and the engine's own signals do not reach it.
    detached: true,
  });
  let tail = '';
  // A process of the session can write into a part's error output: it is read at a bounded pace.
  if (child.stderr) readWithinBudget(child.stderr, STDERR_BYTES_PER_SECOND, (chunk) => {
    tail = (tail + chunk.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  // A spawn that failed (ENOENT comes as an 'error' event) has no pid: 0 lets callers tell.
  return { name, child, pid: child.pid ?? 0, exited, stderrTail: () => tail.trim().split('\n').slice(-8).join('\n') };
}

/** Sends a signal to a process group, ignoring groups that are already gone. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  if (pid <= 0) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

/**
 * Signals a supervised process's group while the process has not exited yet: once it has, its pid
 * (and group) may already belong to some other process.
 */
export function signalProcess(process: SupervisedProcess, signal: NodeJS.Signals): void {
  if (process.child.exitCode !== null || process.child.signalCode !== null) return;
  signalGroup(process.pid, signal);
}

export interface MarkedProcess {
  pid: number;
  /** Process group id: every part of a session is spawned as the leader of its own group. */
  group: number;
  command: string;
  zombie: boolean;
  /** The session directory named by the marker, or null when the process has none (Chromium's
   *  zygote and renderers overwrite their environment with their process title). */
  marker: string | null;
}

/** Reads every process of this host once: pid, group, state, command and session marker. */
export async function listProcesses(): Promise<MarkedProcess[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const prefix = Buffer.from(`${SESSION_MARKER}=`);
  const found = await Promise.all(
    entries.map(async (entry): Promise<MarkedProcess | null> => {
      if (!/^\d+$/.test(entry)) return null;
      const pid = Number(entry);
      if (pid === process.pid) return null;
      try {
        const [stat, cmdline, environ] = await Promise.all([
          readFile(`/proc/${entry}/stat`, 'utf8'),
          readFile(`/proc/${entry}/cmdline`, 'utf8'),
          readFile(`/proc/${entry}/environ`).catch(() => Buffer.alloc(0)),
        ]);
        // Fields after the command name (which may hold spaces and parentheses): state ppid pgrp ...
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const at = environ.indexOf(prefix);
        const markerEnd = at === -1 ? -1 : environ.indexOf(0, at);
        return {
          pid,
          group: Number(fields[2]),
          command: cmdline.replaceAll('\0', ' ').trim(),
          zombie: fields[0] === 'Z' || fields[0] === 'X',
          marker: at === -1 ? null : environ.subarray(at + prefix.length, markerEnd === -1 ? undefined : markerEnd).toString(),
        };
      } catch {
        return null;
      }
    }),
  );
  return found.filter((p): p is MarkedProcess => p !== null);
}

function belongs(process: MarkedProcess, match: { root?: string; dir?: string }): boolean {
  if (process.marker === null) return false;
  return match.dir ? process.marker === sessionMarker(match.dir) : match.root ? process.marker.startsWith(`${rootToken(match.root)}/`) : false;
}

/**
 * Live processes of a session (`dir`) or of every session under `root`: those carrying the marker
 * (crash handlers that called setsid() and were re-parented away keep it), and every member of a
 * process group whose members carry it (renderers that overwrote theirs).
 */
export async function findMarkedProcesses(match: { root?: string; dir?: string }): Promise<MarkedProcess[]> {
  const all = await listProcesses();
  const groups = new Set(all.filter((p) => belongs(p, match)).map((p) => p.group));
  return all.filter((p) => belongs(p, match) || (groups.has(p.group) && p.group > 1));
}

/** SIGKILLs every live process of the session(s) and waits (bounded) until none is left. */
export async function killMarkedProcesses(match: { root?: string; dir?: string }, timeoutMs = 2000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let killed = 0;
  for (;;) {
    const live = (await findMarkedProcesses(match)).filter((p) => !p.zombie);
    if (live.length === 0 || Date.now() > deadline) return killed;
    for (const p of live) {
      try {
        process.kill(p.pid, 'SIGKILL');
        killed++;
      } catch {
        /* gone between the scan and the kill */
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits for a promise, or rejects with a message naming what was too slow. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Rejects as soon as `signal` aborts; what the promise still produces afterwards is handed to
 * `discard` (a display that came up too late is stopped, not leaked).
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, discard?: (late: T) => Promise<void>): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) {
    void promise.then((late) => discard?.(late), () => undefined);
    return Promise.reject(new Error('the start was cancelled'));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      void promise.then((late) => discard?.(late), () => undefined);
      reject(new Error('the start was cancelled'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
