// What a session's sandbox is (SessionSandbox: where a session's processes run, confined or not),
// what every session's directory starts with, and the unconfined sandbox: processes run as the
// engine, in the session directory on the host, as they did before confinement existed (an
// operator's explicit opt-in, insecure.unconfined). The confined sandbox is confinement.ts.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StdioOptions } from 'node:child_process';
import { connect as connectSocket } from 'node:net';
import type { Duplex } from 'node:stream';
import { SESSION_MARKER, sessionMarker, signalProcess, spawnSupervised, type SupervisedProcess } from './processes.js';

export interface SpawnInSession {
  env: NodeJS.ProcessEnv;
  stdio?: StdioOptions;
  /**
   * Programs (paths, or directories of them) this program may start, besides itself. Confined,
   * nothing else can execute in its process tree (the exec guard); the default is nothing.
   */
  mayRun?: readonly string[];
  /**
   * One of the session's own processes (its display, window manager, browser, sound server): it
   * runs in the session's process space, where the session's other processes see it. Anything
   * else the engine starts in a session (a relay, an encoder, a command it runs) carries a stream
   * to the engine, and runs outside that space (decisions.md 140): the session's processes cannot
   * see, trace or signal it, nor take its descriptors to write into the engine's stream.
   */
  part?: boolean;
}

/** A session's place to run processes, confined or not. */
export interface SessionSandbox {
  readonly confined: boolean;
  /** The session's uid when confined. */
  readonly uid: number | null;
  /** Whether Debian Chromium finds the session's policies (managed policy directory mounted). */
  readonly chromiumPolicies: boolean;
  /** The session directory as the session's processes see it. */
  readonly dir: string;
  /** The engine's own directory for the session (runtime record, egress socket), on the host. */
  readonly hostDir: string;
  /** The proxy address the browser is given: a relay to the egress route, or the route itself. */
  readonly proxyUrl: string;
  /** The directory of files the engine shares read-only with the session, as the session sees it. */
  readonly sharedDir: string;
  /** The same directory on the host, where the engine writes them. */
  readonly sharedHostDir: string;
  /** Environment for every process of the session (HOME, XDG dirs, TMPDIR, session marker). */
  readonly env: NodeJS.ProcessEnv;
  /** The engine's path to a file the session sees at `path` (inside the session directory). */
  hostPath(path: string): string;
  spawn(name: string, command: string, args: string[], options: SpawnInSession): SupervisedProcess;
  /**
   * A byte stream to a socket of the session (a unix socket path as the session sees it, or a port
   * on its own loopback). Confined, a relay running as the session uid inside its namespaces opens
   * it: the engine never opens a path of the session as root, so nothing the session leaves there
   * (a link to a host socket, say) can lead the engine anywhere. The relay runs outside the
   * session's process space (`SpawnInSession.part`): the session cannot write into the stream.
   */
  connect(target: string | number): Duplex;
  /**
   * Runs a short program in the session and resolves with its output (at most `RUN_OUTPUT_BYTES`;
   * a program that writes more is ended, and the run rejects); rejects with its error output.
   */
  run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs?: number): Promise<string>;
  /** Whether the session's namespaces are gone (confined: its sandbox ended, whoever ended it). */
  ended(): boolean;
  /** Times the kernel ended one of the session's processes at the memory limit. */
  oomKills(): number;
  /** Periods in which the session had used up its CPU cap and waited. */
  cpuThrottled(): number;
  /** Memory the session holds now, in bytes (its cgroup's count); null unconfined (not counted). */
  memoryBytes(): number | null;
  /**
   * Freezes (true) or thaws (false) every process of the session with the cgroup freezer (standby,
   * decisions.md 141); absent where the session cannot be frozen (unconfined, or a host without a
   * freezer). Resolves once the kernel says it is done.
   */
  freeze?(frozen: boolean): Promise<void>;
  /** Whether its processes are frozen now, as the kernel says. */
  frozen?(): boolean;
  /** Ends every process of the session (thawed first) and releases its uid, cgroup and namespaces. */
  stop(): Promise<void>;
}

/** Directories every session's processes expect under the session directory. */
export const SESSION_SUBDIRS = ['home', 'config', 'cache', 'tmp', 'profile', 'downloads', 'uploads', 'config/gtk-3.0', 'profile/Default'];

/**
 * Files a session starts with, so that the browser's file dialog opens in its uploads folder
 * (issue 23) and offers its two folders and nothing else by name: Chromium's last selected
 * folder, the XDG folders (Firefox opens its upload dialog on the desktop folder; GTK lists them)
 * and GTK's bookmarks. Written before any program of the session runs.
 */
export function sessionStartFiles(dir: string): Array<[string, string]> {
  return [
    ['config/user-dirs.dirs', `XDG_DESKTOP_DIR="${dir}/uploads"\nXDG_DOWNLOAD_DIR="${dir}/downloads"\n`],
    ['config/gtk-3.0/bookmarks', `file://${dir}/uploads\nfile://${dir}/downloads\n`],
    ['profile/Default/Preferences', `${JSON.stringify({ selectfile: { last_directory: `${dir}/uploads` }, savefile: { default_directory: `${dir}/downloads` } })}\n`],
  ];
}

/** The environment every process of the session starts with: nothing of the engine's own. */
export function sessionEnvironment(dir: string, hostDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Nothing of the engine's own environment (its secrets among them) reaches a session.
  for (const key of ['LANG', 'LC_ALL', 'TZ']) if (process.env[key] !== undefined) env[key] = process.env[key];
  return {
    ...env,
    // The system's programs only, whatever the engine's own PATH holds.
    PATH: '/usr/local/bin:/usr/bin:/bin',
    [SESSION_MARKER]: sessionMarker(hostDir),
    USER: 'session',
    LOGNAME: 'session',
    HOME: join(dir, 'home'),
    // Chromium's crash handler writes under XDG_CONFIG_HOME whatever --user-data-dir says.
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    XDG_DATA_HOME: join(dir, 'home'),
    TMPDIR: join(dir, 'tmp'),
    MOZ_CRASHREPORTER_DISABLE: '1',
  };
}

/**
 * The most output a short program run in a session may give (a file it reads, a list it prints):
 * the session decides what such a program reads, so what the engine keeps of it is bounded.
 */
export const RUN_OUTPUT_BYTES = 1024 * 1024;

/** Runs a short program to its end and resolves with its output (a sandbox's `run`). */
export function runProcess(process: SupervisedProcess, command: string, timeoutMs: number): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let overflow = false;
  process.child.stdout?.on('data', (chunk: Buffer) => {
    if (overflow) return;
    bytes += chunk.length;
    if (bytes > RUN_OUTPUT_BYTES) {
      overflow = true;
      chunks.length = 0;
      signalProcess(process, 'SIGKILL');
      return;
    }
    chunks.push(chunk);
  });
  const timer = setTimeout(() => signalProcess(process, 'SIGKILL'), timeoutMs);
  return process.exited.then(({ code, signal }) => {
    clearTimeout(timer);
    if (overflow) throw new Error(`${command} failed: it wrote more than ${RUN_OUTPUT_BYTES} bytes`);
    if (code === 0) return Buffer.concat(chunks).toString('utf8');
    throw new Error(`${command} failed: ${process.stderrTail() || (signal ?? `exit ${code}`)}`);
  });
}

/** Processes run as the engine, in the session directory on the host (insecure: operator opt-in). */
export async function openHostSandbox(hostDir: string, egressProxyUrl: string): Promise<SessionSandbox> {
  await Promise.all(SESSION_SUBDIRS.map((d) => mkdir(join(hostDir, d), { recursive: true })));
  await Promise.all(sessionStartFiles(hostDir).map(([file, text]) => writeFile(join(hostDir, file), text)));
  const env = sessionEnvironment(hostDir, hostDir);
  const sandbox: SessionSandbox = {
    confined: false,
    uid: null,
    chromiumPolicies: false,
    dir: hostDir,
    hostDir,
    proxyUrl: egressProxyUrl,
    sharedDir: hostDir,
    sharedHostDir: hostDir,
    env,
    hostPath: (path) => path,
    spawn: (name, command, args, options) => spawnSupervised(name, command, args, { env: options.env, ...(options.stdio ? { stdio: options.stdio } : {}) }),
    connect: (target) => (typeof target === 'number' ? connectSocket(target, '127.0.0.1') : connectSocket(target)),
    run: (command, args, runEnv, timeoutMs = 5000) =>
      runProcess(spawnSupervised(command, command, args, { env: runEnv, stdio: ['ignore', 'pipe', 'pipe'] }), command, timeoutMs),
    ended: () => false,
    oomKills: () => 0,
    cpuThrottled: () => 0,
    memoryBytes: () => null,
    async stop() {
      /* the runtime ends the processes it started */
    },
  };
  return sandbox;
}
