// Where a session's processes run: the sandbox that makes a session a throwaway computer of its
// own (docs/security.md). Confined, every process of a session runs as an unprivileged uid of its
// own, in namespaces made by bubblewrap: system files read-only, a size-capped /session as the only
// writable place, no network but a relay to the session's egress route, its own process and IPC
// space, and a cgroup that caps memory and processes. Unconfined (an operator's explicit opt-in),
// the processes run as the engine, as they did before confinement existed: that sandbox, and what
// every sandbox offers, are session-sandbox.ts.
import { existsSync, lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { chown, mkdir } from 'node:fs/promises';
import { Duplex } from 'node:stream';
import { createSessionCgroup, findHierarchies, type ResourceLimits, type SessionCgroup } from './cgroups.js';
import { guardedCommand, MEMFD_NOEXEC, probeExecGuard } from './exec-guard.js';
import { signalProcess, spawnSupervised, withTimeout, type SupervisedProcess } from './processes.js';
import { claimUid, type UidRange } from './session-uids.js';
import { runProcess, SESSION_SUBDIRS, sessionEnvironment, sessionStartFiles, type SessionSandbox } from './session-sandbox.js';

export { openHostSandbox, type SessionSandbox, type SpawnInSession } from './session-sandbox.js';

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
      // can run, nor be mapped as code); make every memfd of the session's pid namespace
      // non-executable where the kernel can (vm.memfd_noexec, exec-guard.ts: only root here can set
      // it, and nothing started later can lower it; a failure ends the start); say so; then become
      // the session uid for good and relay to the egress route, under the exec guard like every
      // process of the session.
      SH, '-c',
      `set -e; cd ${dir}; mkdir -p ${SESSION_SUBDIRS.join(' ')}; ` +
        sessionStartFiles(dir).map(([file, text]) => `printf '%s' '${text}' > ${file}; `).join('') +
        `chown -R ${uid}:${uid} ${dir} /tmp; chmod 1777 /tmp; ` +
        `for m in ${WRITABLE_MOUNTS.join(' ')}; do ${MOUNT} -o remount,bind,nosuid,nodev,noexec "$m"; done; ` +
        `if [ -e ${MEMFD_NOEXEC} ]; then echo 2 > ${MEMFD_NOEXEC}; fi; echo ready; exec "$@"`,
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
    // A session's own part enters its process space too; anything else the engine starts there (a
    // relay, an encoder, a command) stays in the engine's, where no process of the session can
    // find it: not in its /proc, not by kill, ptrace or pidfd_open, which all need a pid it can name
    // (decisions.md 140). It still runs as the session uid, in its cgroup, files and network.
    const enter = (command: string, args: string[], mayRun: readonly string[] = [], part = false) => {
      if (ended) throw new Error("the session's sandbox has ended");
      const spaces = ['--mount', '--net', '--ipc', '--uts', ...(part ? ['--pid'] : [])];
      return joinCgroup([NSENTER, `--target=${namespacePid}`, ...spaces, '--root', '--wd', '--', ...drop, ...guardedArgv(command, args, mayRun)]);
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
        const [wrapper, wrapped] = enter(command, args, spawnOptions.mayRun, spawnOptions.part);
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
      ...(ownedCgroup.freezable ? { freeze: (frozen: boolean) => ownedCgroup.freeze(frozen), frozen: () => ownedCgroup.frozen() } : {}),
      async stop() {
        // A frozen process holds a SIGKILL until it thaws (cgroup v1): thawed first, or the kill
        // below would wait for ever on a session in standby.
        if (ownedCgroup.frozen()) await ownedCgroup.freeze(false).catch(() => undefined);
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
