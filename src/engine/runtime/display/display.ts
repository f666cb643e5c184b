// The session's display: one TigerVNC Xvnc (an X server and a VNC server in one process) reached
// only through a 0600 unix socket in the session directory, plus a window manager that keeps the
// browser window filling the screen, with the session's keyboard layout applied.
import { randomBytes } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import type { SessionSandbox } from '../sandbox/confinement.js';
import { signalProcess, withTimeout, type SupervisedProcess } from '../sandbox/processes.js';

export interface DisplayOptions {
  /** Where the display's processes run; the VNC socket is created in its session directory. */
  sandbox: SessionSandbox;
  width: number;
  height: number;
  /** X keyboard layout name, e.g. `us`, `de`. */
  layout: string;
  startTimeoutMs?: number;
}

export interface Display {
  /** X display number (`:N`). */
  readonly number: number;
  /**
   * The RFB (VNC) unix socket's path as seen from the host, mode 0600: for tests and diagnostics.
   * Viewers are joined with `connect()`, never by opening this path as root.
   */
  readonly rfbSocketPath: string;
  /** A new RFB connection to the display, opened from inside the session (SessionSandbox.connect). */
  connect(): Duplex;
  /** Environment for X clients of this display (DISPLAY, XAUTHORITY and the session's own). */
  readonly env: NodeJS.ProcessEnv;
  /**
   * Starts an X client of this display inside the session, as its uid, under the exec guard with
   * nothing else it may run (the video encoder, runtime/capture/video.ts); stdout and stderr are pipes.
   */
  spawnClient(name: string, command: string, args: string[]): SupervisedProcess;
  readonly server: SupervisedProcess;
  readonly windowManager: SupervisedProcess;
  layout: string;
  setLayout(layout: string): Promise<void>;
  stop(): Promise<void>;
}

const RFB_SOCKET = 'rfb.sock';
const X_AUTHORITY = '.Xauthority';
// Every viewer sees this as the desktop's name (Xvnc would say user@host).
const DESKTOP_NAME = 'Remote browser';
/** The keyboard layout Xvnc starts with. */
const XVNC_LAYOUT = 'us';
// sun_path is 108 bytes on Linux; a longer path would make Xvnc fail with an obscure error.
const MAX_SOCKET_PATH = 107;

/**
 * An X authority file holding one MIT-MAGIC-COOKIE-1 for any display (family "wild"): X clients
 * of the session present it, so the X server answers no one who cannot read the session's files.
 */
function xAuthority(cookie: Buffer): Buffer {
  const field = (value: Buffer) => Buffer.concat([Buffer.from([value.length >> 8, value.length & 0xff]), value]);
  return Buffer.concat([Buffer.from([0xff, 0xff]), field(Buffer.alloc(0)), field(Buffer.alloc(0)), field(Buffer.from('MIT-MAGIC-COOKIE-1')), field(cookie)]);
}

export async function startDisplay(options: DisplayOptions): Promise<Display> {
  const { sandbox } = options;
  const rfbSocketPath = sandbox.hostPath(join(sandbox.dir, RFB_SOCKET));
  const authority = join(sandbox.dir, X_AUTHORITY);
  // Written by root into the session's own directory: created afresh ('wx' follows no link a
  // session could have left there) and handed over through the open file.
  const file = await open(sandbox.hostPath(authority), 'wx', 0o600);
  try {
    await file.writeFile(xAuthority(randomBytes(16)));
    if (sandbox.uid !== null) await file.chown(sandbox.uid, sandbox.uid);
  } finally {
    await file.close();
  }
  if (Buffer.byteLength(rfbSocketPath) > MAX_SOCKET_PATH) {
    throw new Error(
      `the session directory ${sandbox.hostDir} is too long for a unix socket path (at most ${MAX_SOCKET_PATH} bytes): choose a shorter data directory`,
    );
  }
  const server = sandbox.spawn(
    'Xvnc',
    'Xvnc',
    [
      // Xvnc picks a free display number itself and writes it to fd 3 once it accepts clients.
      '-displayfd', '3',
      '-geometry', `${options.width}x${options.height}`,
      '-depth', '24',
      '-SecurityTypes', 'None',
      '-rfbport', '-1',
      '-rfbunixpath', join(sandbox.dir, RFB_SOCKET),
      '-rfbunixmode', '0600',
      '-nolisten', 'tcp',
      '-auth', authority,
      '-desktop', DESKTOP_NAME,
      '-AlwaysShared',
      // Viewers' SetDesktopSize reaches Xvnc only through the bridge, clamped, from the viewer
      // that controls (channels/rfb/viewer-room.ts); Xvnc resizes the screen with RandR.
      '-AcceptSetDesktopSize=1',
      // Every viewer reaches Xvnc through the same relay, so Xvnc sees one "host". Its blacklist
      // black-marks that host for every connection until one authenticates and refuses it past 5
      // ("Too many security failures", then for 10 s and longer): a sixth viewer joining at once,
      // or one viewer sending a bad security type five times, would lock out every viewer of the
      // link. Only the engine reaches the socket and there is no password to guess: no blacklist.
      '-UseBlacklist=0',
      // No OpenGL in the X server: the browsers draw in software here, and GLX loads Mesa into
      // every Xvnc (about 50 MB of each display's memory).
      '-extension', 'GLX',
    ],
    // Xvnc compiles keyboard maps with xkbcomp, through the shell (the X server's own Popen).
    { env: sandbox.env, stdio: ['ignore', 'ignore', 'pipe', 'pipe'], mayRun: ['/bin/sh', '/usr/bin/xkbcomp'], part: true },
  );
  const displayNumber = new Promise<number>((resolve, reject) => {
    let text = '';
    const fd3 = server.child.stdio[3] as NodeJS.ReadableStream | null;
    fd3?.setEncoding('utf8');
    // One short line, once: then the pipe is closed (a process of the session could write into it).
    fd3?.on('data', (chunk: string) => {
      text += chunk;
      if (!text.includes('\n') && text.length < 16) return;
      resolve(Number(text.split('\n')[0]!.trim()));
      (fd3 as unknown as { destroy(): void }).destroy();
    });
    void server.exited.then(() => reject(new Error(`Xvnc exited before its display was ready: ${server.stderrTail() || 'no output'}`)));
    server.child.once('error', (error) => reject(new Error(`Xvnc could not start (${error.message}): install tigervnc-standalone-server`)));
  });
  let number: number;
  try {
    number = await withTimeout(displayNumber, options.startTimeoutMs ?? 10_000, 'the Xvnc display start');
    if (!Number.isInteger(number) || number < 0) throw new Error('Xvnc named no display number');
  } catch (error) {
    signalProcess(server, 'SIGKILL');
    throw error;
  }
  const env = { ...sandbox.env, DISPLAY: `:${number}`, XAUTHORITY: authority };
  const windowManager = sandbox.spawn('matchbox-window-manager', 'matchbox-window-manager', ['-use_titlebar', 'no'], { env, part: true });
  windowManager.child.once('error', () => undefined);

  const display: Display = {
    number,
    rfbSocketPath,
    connect: () => sandbox.connect(join(sandbox.dir, RFB_SOCKET)),
    env,
    spawnClient: (name, command, args) => sandbox.spawn(name, command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], mayRun: [] }),
    server,
    windowManager,
    layout: options.layout,
    async setLayout(layout: string) {
      await sandbox.run('setxkbmap', ['-layout', layout], env);
      display.layout = layout;
    },
    async stop() {
      signalProcess(windowManager, 'SIGKILL');
      // SIGTERM lets Xvnc remove its lock file and X socket; SIGKILL follows if it lingers.
      signalProcess(server, 'SIGTERM');
      const late = setTimeout(() => signalProcess(server, 'SIGKILL'), 300);
      await Promise.all([server.exited, windowManager.exited]);
      clearTimeout(late);
      // A confined display's files vanish with its namespaces; the host's /tmp holds them otherwise.
      if (!sandbox.confined) await removeDisplayFiles(number);
    },
  };
  try {
    // Xvnc starts with the US layout (rules evdev, model pc105): setxkbmap, a program started in
    // the session on every start path, only runs for another one.
    if (options.layout !== XVNC_LAYOUT) await display.setLayout(options.layout);
  } catch (error) {
    await display.stop();
    throw error;
  }
  return display;
}

/** Removes the X lock file and socket of a display whose server is gone. */
export async function removeDisplayFiles(number: number): Promise<void> {
  await rm(`/tmp/.X${number}-lock`, { force: true });
  await rm(`/tmp/.X11-unix/X${number}`, { force: true });
}
