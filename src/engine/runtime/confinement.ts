// Where a session's processes run: the sandbox that makes a session a throwaway computer of its
// own (docs/security.md). Confined, every process of a session runs as an unprivileged uid of its
// own, in namespaces made by bubblewrap: system files read-only, a size-capped /session as the only
// writable place, no network but a relay to the session's egress route, its own process and IPC
// space, and a cgroup that caps memory and processes. Unconfined (an operator's explicit opt-in),
// the processes run as the engine, as they did before confinement existed.
import { existsSync, lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { chown, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSessionCgroup, findHierarchies, type ResourceLimits, type SessionCgroup } from './cgroups.js';
import { SESSION_MARKER, sessionMarker, signalProcess, spawnSupervised, withTimeout, type SupervisedProcess } from './processes.js';
import type { StdioOptions } from 'node:child_process';
import { connect as connectSocket } from 'node:net';
import { guardedCommand, probeExecGuard } from './exec-guard.js';
import { claimUid, type UidRange } from './session-uids.js';
import { Duplex } from 'node:stream';

export interface ConfinementSettings extends ResourceLimits {
  /** Size of the session's writable directory (its profile, downloads and temporary files). */
  diskMb: number;
  /** Range of uids handed to sessions, one each; no account of the host should use them. */
  uids: UidRange;
}

export const DEFAULT_CONFINEMENT: ConfinementSettings = {
  memoryMb: 2048,
  processes: 512,
  // No hard cap by default: a cap slows every start (one core: cold ready ~+100 ms on two cores),
  // and fair shares already keep one session from starving the others.
  cpus: null,
  diskMb: 1024,
  uids: { first: 2_000_000_000, count: 65_536 },
};

/** Where the session's own directory is, as its processes see it when confined. */
export const CONFINED_SESSION_DIR = '/session';
/** The in-sandbox address of the relay to the egress route (the sandbox's own loopback). */
const CONFINED_PROXY_URL = 'http://127.0.0.1:3128';
/** Files the engine shares read-only with every session (browser policies, the Firefox launcher). */
const CONFINED_SHARED_DIR = '/run/remote-browser-kit/shared';
/** The session's egress socket directory inside the sandbox. */
const CONFINED_EGRESS_DIR = '/run/remote-browser-kit/egress';

export interface SpawnInSession {
  env: NodeJS.ProcessEnv;
  stdio?: StdioOptions;
  /**
   * Programs (paths, or directories of them) this program may start, besides itself. Confined,
   * nothing else can execute in its process tree (the exec guard); the default is nothing.
   */
  mayRun?: readonly string[];
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
   * (a link to a host socket, say) can lead the engine anywhere.
   */
  connect(target: string | number): Duplex;
  /** Runs a short program in the session and resolves with its output; rejects with its error output. */
  run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs?: number): Promise<string>;
  /** Whether the session's namespaces are gone (confined: its sandbox ended, whoever ended it). */
  ended(): boolean;
  /** Times the kernel ended one of the session's processes at the memory limit. */
  oomKills(): number;
  /** Periods in which the session had used up its CPU cap and waited. */
  cpuThrottled(): number;
  /** Memory the session holds now, in bytes (its cgroup's count); null unconfined (not counted). */
  memoryBytes(): number | null;
  /** Ends every process of the session and releases its uid, cgroup and namespaces. */
  stop(): Promise<void>;
}

/** What confining sessions needs on this host, checked once; `missing` says what to do. */
export interface ConfinementProbe {
  available: boolean;
  missing: string[];
}

// Absolute paths: root runs these with a session's mount namespace around it, where nothing found
// through PATH may be trusted.
const BWRAP = '/usr/bin/bwrap';
const SOCAT = '/usr/bin/socat';
const SETPRIV = '/usr/bin/setpriv';
const NSENTER = '/usr/bin/nsenter';
const SH = '/bin/sh';
const MOUNT = '/usr/bin/mount';

/** Every place in the sandbox a session's process can write: mounted noexec once made. */
const WRITABLE_MOUNTS = [CONFINED_SESSION_DIR, '/tmp', '/dev'];

/** `guardedCommand` as one argv. */
function guardedArgv(command: string, args: readonly string[], mayRun: readonly string[] = []): string[] {
  const [guard, guardArgs] = guardedCommand(command, args, mayRun);
  return [guard, ...guardArgs];
}

const TOOLS: Array<[string, string, string]> = [
  ['bubblewrap', BWRAP, 'bubblewrap'],
  ['socat (relays to the egress route, DevTools and the display)', SOCAT, 'socat'],
  ['setpriv (drops to the session uid)', SETPRIV, 'util-linux'],
  ['nsenter (starts processes in the session)', NSENTER, 'util-linux'],
];

export function probeConfinement(): ConfinementProbe {
  const missing: string[] = [];
  if (process.platform !== 'linux') missing.push(`Linux namespaces (this is ${process.platform})`);
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    missing.push('root: the engine gives each session a uid of its own, which only root can do (run `remote-browser-kit serve` as root)');
  }
  for (const [name, file, pkg] of TOOLS) if (!existsSync(file)) missing.push(`${name}: apt-get install -y ${pkg}`);
  try {
    const max = Number(readFileSync('/proc/sys/user/max_user_namespaces', 'utf8').trim());
    if (!(max > 0)) missing.push('user namespaces for the browsers\' own sandboxes: sysctl -w user.max_user_namespaces=15000');
  } catch {
    missing.push('user namespaces (no /proc/sys/user/max_user_namespaces)');
  }
  const { hierarchies, reason } = findHierarchies();
  if (hierarchies.length === 0) missing.push(`memory and process caps: ${reason}`);
  const guard = probeExecGuard();
  if (!guard.available) missing.push(guard.reason!);
  return { available: missing.length === 0, missing };
}

/** Directories every session's processes expect under the session directory. */
const SESSION_SUBDIRS = ['home', 'config', 'cache', 'tmp', 'profile', 'downloads', 'uploads', 'config/gtk-3.0', 'profile/Default'];

/**
 * Files a session starts with, so that the browser's file dialog opens in its uploads folder
 * (issue 23) and offers its two folders and nothing else by name: Chromium's last selected
 * folder, the XDG folders (Firefox opens its upload dialog on the desktop folder; GTK lists them)
 * and GTK's bookmarks. Written before any program of the session runs.
 */
function sessionStartFiles(dir: string): Array<[string, string]> {
  return [
    ['config/user-dirs.dirs', `XDG_DESKTOP_DIR="${dir}/uploads"\nXDG_DOWNLOAD_DIR="${dir}/downloads"\n`],
    ['config/gtk-3.0/bookmarks', `file://${dir}/uploads\nfile://${dir}/downloads\n`],
    ['profile/Default/Preferences', `${JSON.stringify({ selectfile: { last_directory: `${dir}/uploads` }, savefile: { default_directory: `${dir}/downloads` } })}\n`],
  ];
}

function sessionEnvironment(dir: string, hostDir: string): NodeJS.ProcessEnv {
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

function runProcess(process: SupervisedProcess, command: string, timeoutMs: number): Promise<string> {
  let out = '';
  process.child.stdout?.setEncoding('utf8');
  process.child.stdout?.on('data', (chunk: string) => (out += chunk));
  const timer = setTimeout(() => signalProcess(process, 'SIGKILL'), timeoutMs);
  return process.exited.then(({ code, signal }) => {
    clearTimeout(timer);
    if (code === 0) return out;
    throw new Error(`${command} failed: ${process.stderrTail() || (signal ?? `exit ${code}`)}`);
  });
}

// Unconfined ------------------------------------------------------------------------------------

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

// Confined --------------------------------------------------------------------------------------

/** The host's top-level directories that are links into /usr (merged /usr) or directories. */
function systemRoots(): string[] {
  const args: string[] = [];
  for (const name of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) {
    const path = `/${name}`;
    let stat;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(path), path);
    else if (stat.isDirectory()) args.push('--ro-bind', path, path);
  }
  return args;
}

export interface ConfinedSandboxOptions {
  settings: ConfinementSettings;
  /** The engine's directory for the session: `egress/` (the route's socket) lives there. */
  hostDir: string;
  /** Read-only files shared with every session (policies, the Firefox launcher). */
  sharedHostDir: string;
  /** Host-wide unique name of the session's cgroup. */
  cgroupName: string;
  /** Directory of the egress route's socket on the host: made here, 0700 and the session uid's. */
  egressHostDir: string;
  /** Chromium's managed-policy directory on the host (its policies file inside `sharedHostDir`). */
  chromiumPolicyDir?: string;
  timeoutMs: number;
}

/**
 * Starts the session's sandbox: claims a uid, makes the cgroup, and starts bubblewrap with the
 * session's namespaces. Its first process is the relay from the sandbox's loopback to the egress
 * route's unix socket; every later process of the session joins its namespaces with nsenter.
 */
export async function openConfinedSandbox(options: ConfinedSandboxOptions): Promise<SessionSandbox> {
  const { settings, hostDir } = options;
  const claim = await claimUid(settings.uids, hostDir);
  const uid = claim.uid;
  let cgroup: SessionCgroup | undefined;
  let holder: SupervisedProcess | undefined;
  try {
    cgroup = await createSessionCgroup(options.cgroupName, settings);
    await mkdir(options.egressHostDir, { recursive: true, mode: 0o700 });
    await chown(options.egressHostDir, uid, uid);
    const dir = CONFINED_SESSION_DIR;
    const env = sessionEnvironment(dir, hostDir);
    const drop = [SETPRIV, `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--'];
    // Joins the session's cgroups, forbids core dumps (a host-wide core handler runs as root), then runs `command`.
    const joinCgroup = (command: string[]): [string, string[]] => [
      SH,
      ['-c', 'ulimit -c 0; n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"', 'sh', String(cgroup!.procsFiles.length), ...cgroup!.procsFiles, ...command],
    ];
    const bwrapOptions = [
      '--die-with-parent',
      '--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try',
      '--hostname', 'remote-browser',
      '--ro-bind', '/usr', '/usr',
      ...systemRoots(),
      '--ro-bind', '/etc', '/etc',
      // bubblewrap makes the parents of a mount point 0700: the session uid could not pass them.
      ...['/run', '/run/remote-browser-kit', '/var', '/var/cache', '/sys', '/sys/devices', '/sys/devices/system'].flatMap((path) => ['--perms', '0755', '--dir', path]),
      '--ro-bind-try', '/opt', '/opt',
      '--ro-bind-try', '/var/cache/fontconfig', '/var/cache/fontconfig',
      '--ro-bind-try', '/sys/devices/system/cpu', '/sys/devices/system/cpu',
      '--proc', '/proc',
      '--dev', '/dev',
      '--size', String(settings.diskMb * 1024 * 1024), '--perms', '0700', '--tmpfs', dir,
      // X sockets and lock files only; the browsers write their temporary files under /session.
      '--size', String(64 * 1024 * 1024), '--tmpfs', '/tmp',
      '--ro-bind', options.egressHostDir, CONFINED_EGRESS_DIR,
      '--ro-bind', options.sharedHostDir, CONFINED_SHARED_DIR,
      // Firefox reads policies in /etc/firefox{,-esr}/policies before its own distribution/ ones:
      // a host's file there must not replace the session's.
      ...['/etc/firefox', '/etc/firefox-esr'].filter((path) => existsSync(path)).flatMap((path) => ['--tmpfs', path, '--remount-ro', path]),
      ...(options.chromiumPolicyDir && existsSync('/etc/chromium')
        ? ['--tmpfs', '/etc/chromium', '--perms', '0755', '--dir', '/etc/chromium/policies', '--ro-bind', options.chromiumPolicyDir, '/etc/chromium/policies/managed', '--remount-ro', '/etc/chromium']
        : []),
      '--chdir', dir,
      '--info-fd', '3',
    ];
    const sessionInit = [
      // As root inside the new namespaces (nothing of the host is writable here): give the session
      // its directory; make every place it can write non-executable (nothing it writes or downloads
      // can run, nor be mapped as code); say so; then become the session uid for good and relay to
      // the egress route, under the exec guard like every process of the session.
      SH, '-c',
      `set -e; cd ${dir}; mkdir -p ${SESSION_SUBDIRS.join(' ')}; ` +
        sessionStartFiles(dir).map(([file, text]) => `printf '%s' '${text}' > ${file}; `).join('') +
        `chown -R ${uid}:${uid} ${dir} /tmp; chmod 1777 /tmp; ` +
        `for m in ${WRITABLE_MOUNTS.join(' ')}; do ${MOUNT} -o remount,bind,nosuid,nodev,noexec "$m"; done; echo ready; exec "$@"`,
      'sh',
      ...drop,
      ...guardedArgv(SOCAT, [`TCP-LISTEN:${new URL(CONFINED_PROXY_URL).port},bind=127.0.0.1,fork,reuseaddr`, `UNIX-CONNECT:${CONFINED_EGRESS_DIR}/egress.sock`]),
    ];
    // bubblewrap's arguments (the engine's paths among them) reach it through a pipe, not its
    // command line: the init of the session's pid namespace is a copy of bubblewrap, and the
    // session reads its /proc/1/cmdline.
    const [command, args] = joinCgroup([BWRAP, '--args', '4', '--', ...sessionInit]);
    holder = spawnSupervised('sandbox', command, args, { env, stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'] });
    const argsPipe = holder.child.stdio[4] as NodeJS.WritableStream;
    argsPipe.on('error', () => undefined);
    argsPipe.end(bwrapOptions.map((arg) => `${arg}\0`).join(''));
    const started = holder;
    const namespacePid = await withTimeout(
      new Promise<number>((resolve, reject) => {
        let info = '';
        let ready = false;
        let pid = 0;
        const done = () => ready && pid > 0 && resolve(pid);
        const fd3 = started.child.stdio[3] as NodeJS.ReadableStream | null;
        fd3?.setEncoding('utf8');
        fd3?.on('data', (chunk: string) => {
          info += chunk;
          const match = /"child-pid":\s*(\d+)/.exec(info);
          if (match) pid = Number(match[1]);
          done();
        });
        started.child.stdout?.setEncoding('utf8');
        started.child.stdout?.on('data', (chunk: string) => {
          if (chunk.includes('ready')) ready = true;
          done();
        });
        void started.exited.then(() => reject(new Error(`the session sandbox did not start: ${started.stderrTail() || 'no output'}`)));
      }),
      options.timeoutMs,
      'the session sandbox start',
    );
    const root = `/proc/${namespacePid}/root`;
    // Once the sandbox has ended, its namespace pid may be anyone's: nothing enters it any more.
    let ended = false;
    void started.exited.then(() => (ended = true));
    const enter = (command: string, args: string[], mayRun: readonly string[] = []) => {
      if (ended) throw new Error("the session's sandbox has ended");
      return joinCgroup([NSENTER, `--target=${namespacePid}`, '--mount', '--net', '--ipc', '--uts', '--pid', '--root', '--wd', '--', ...drop, ...guardedArgv(command, args, mayRun)]);
    };
    const ownedCgroup = cgroup;
    const sandbox: SessionSandbox = {
      confined: true,
      uid,
      chromiumPolicies: Boolean(options.chromiumPolicyDir && existsSync('/etc/chromium')),
      dir,
      hostDir,
      proxyUrl: CONFINED_PROXY_URL,
      sharedDir: CONFINED_SHARED_DIR,
      sharedHostDir: options.sharedHostDir,
      env,
      hostPath: (path) => `${root}${path}`,
      spawn(name, command, args, spawnOptions) {
        const [wrapper, wrapped] = enter(command, args, spawnOptions.mayRun);
        return spawnSupervised(name, wrapper, wrapped, { env: spawnOptions.env, ...(spawnOptions.stdio ? { stdio: spawnOptions.stdio } : {}) });
      },
      connect(target) {
        if (ended) {
          // A stream that fails at once, as a refused connection would: callers wait for 'close'.
          const gone = new Duplex({ read() {}, write(_chunk, _encoding, callback) { callback(); } });
          process.nextTick(() => gone.destroy(new Error("the session's sandbox has ended")));
          return gone;
        }
        const address = typeof target === 'number' ? `TCP:127.0.0.1:${target}` : `UNIX-CONNECT:${target}`;
        const [wrapper, wrapped] = enter(SOCAT, ['STDIO', address]);
        const relay = spawnSupervised('relay', wrapper, wrapped, { env, stdio: ['pipe', 'pipe', 'pipe'] });
        const stream = Duplex.from({ readable: relay.child.stdout!, writable: relay.child.stdin! });
        relay.child.stdin!.on('error', () => undefined);
        // Either end going away ends the other: the relay with the stream, the stream with the relay.
        stream.once('close', () => signalProcess(relay, 'SIGKILL'));
        void relay.exited.then(() => stream.destroy());
        return stream;
      },
      run(command, args, runEnv, timeoutMs = 5000) {
        if (ended) return Promise.reject(new Error("the session's sandbox has ended"));
        const [wrapper, wrapped] = enter(command, args);
        return runProcess(spawnSupervised(command, wrapper, wrapped, { env: runEnv, stdio: ['ignore', 'pipe', 'pipe'] }), command, timeoutMs);
      },
      ended: () => ended,
      oomKills: () => ownedCgroup.oomKills(),
      cpuThrottled: () => ownedCgroup.cpuThrottled(),
      memoryBytes: () => ownedCgroup.memoryBytes(),
      async stop() {
        // bubblewrap ends with its process group; its child, the init of the session's pid
        // namespace, dies with it (--die-with-parent), and the kernel then ends every other process
        // of the session, wherever it was started from. The cgroup is emptied after that. (No kill
        // of the namespace's pid itself: once it is gone, that number may be someone else's.)
        signalProcess(started, 'SIGKILL');
        await started.exited;
        await ownedCgroup.remove();
        await claim.release();
      },
    };
    return sandbox;
  } catch (error) {
    if (holder) {
      signalProcess(holder, 'SIGKILL');
      await holder.exited;
    }
    await cgroup?.remove();
    await claim.release();
    throw error;
  }
}
