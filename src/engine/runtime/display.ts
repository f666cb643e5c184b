// The session's display: one TigerVNC Xvnc (an X server and a VNC server in one process) reached
// only through a 0600 unix socket in the session directory, plus a window manager that keeps the
// browser window filling the screen, with the session's keyboard layout applied.
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { signalGroup, spawnSupervised, withTimeout, type SupervisedProcess } from './processes.js';

export interface DisplayOptions {
  /** The session directory; the VNC socket is created inside it. */
  dir: string;
  width: number;
  height: number;
  /** X keyboard layout name, e.g. `us`, `de`. */
  layout: string;
  /** Environment for every process of the display (carries the session marker). */
  env: NodeJS.ProcessEnv;
  startTimeoutMs?: number;
}

export interface Display {
  /** X display number (`:N`). */
  readonly number: number;
  /** The RFB (VNC) unix socket, mode 0600. */
  readonly rfbSocketPath: string;
  readonly server: SupervisedProcess;
  readonly windowManager: SupervisedProcess;
  layout: string;
  setLayout(layout: string): Promise<void>;
  stop(): Promise<void>;
}

const RFB_SOCKET = 'rfb.sock';
// sun_path is 108 bytes on Linux; a longer path would make Xvnc fail with an obscure error.
const MAX_SOCKET_PATH = 107;

export async function startDisplay(options: DisplayOptions): Promise<Display> {
  const rfbSocketPath = join(options.dir, RFB_SOCKET);
  if (Buffer.byteLength(rfbSocketPath) > MAX_SOCKET_PATH) {
    throw new Error(
      `the session directory ${options.dir} is too long for a unix socket path (at most ${MAX_SOCKET_PATH} bytes): choose a shorter data directory`,
    );
  }
  const server = spawnSupervised(
    'Xvnc',
    'Xvnc',
    [
      // Xvnc picks a free display number itself and writes it to fd 3 once it accepts clients.
      '-displayfd', '3',
      '-geometry', `${options.width}x${options.height}`,
      '-depth', '24',
      '-SecurityTypes', 'None',
      '-rfbport', '-1',
      '-rfbunixpath', rfbSocketPath,
      '-rfbunixmode', '0600',
      '-nolisten', 'tcp',
      '-AlwaysShared',
      '-AcceptSetDesktopSize=0',
      // No OpenGL in the X server: the browsers draw in software here, and GLX loads Mesa into
      // every Xvnc (about 50 MB of each display's memory).
      '-extension', 'GLX',
    ],
    { env: options.env, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
  );
  const displayNumber = new Promise<number>((resolve, reject) => {
    let text = '';
    const fd3 = server.child.stdio[3] as NodeJS.ReadableStream | null;
    fd3?.setEncoding('utf8');
    fd3?.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\n')) resolve(Number(text.trim()));
    });
    void server.exited.then(() => reject(new Error(`Xvnc exited before its display was ready: ${server.stderrTail() || 'no output'}`)));
    server.child.once('error', (error) => reject(new Error(`Xvnc could not start (${error.message}): install tigervnc-standalone-server`)));
  });
  let number: number;
  try {
    number = await withTimeout(displayNumber, options.startTimeoutMs ?? 10_000, 'the Xvnc display start');
  } catch (error) {
    signalGroup(server.pid, 'SIGKILL');
    throw error;
  }
  const env = { ...options.env, DISPLAY: `:${number}` };
  const windowManager = spawnSupervised('matchbox-window-manager', 'matchbox-window-manager', ['-use_titlebar', 'no'], { env });
  windowManager.child.once('error', () => undefined);

  const display: Display = {
    number,
    rfbSocketPath,
    server,
    windowManager,
    layout: options.layout,
    async setLayout(layout: string) {
      await runX(env, 'setxkbmap', ['-layout', layout]);
      display.layout = layout;
    },
    async stop() {
      signalGroup(windowManager.pid, 'SIGKILL');
      // SIGTERM lets Xvnc remove its lock file and X socket; SIGKILL follows if it lingers.
      signalGroup(server.pid, 'SIGTERM');
      const late = setTimeout(() => signalGroup(server.pid, 'SIGKILL'), 300);
      await Promise.all([server.exited, windowManager.exited]);
      clearTimeout(late);
      await removeDisplayFiles(number);
    },
  };
  try {
    await display.setLayout(options.layout);
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

/** Runs a short X client against the display and rejects with its error output on failure. */
export function runX(env: NodeJS.ProcessEnv, command: string, args: string[], timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('error', (error) => reject(new Error(`${command} could not run (${error.message})`)));
    child.once('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')} failed: ${err.trim() || `exit ${code}`}`)),
    );
  });
}
