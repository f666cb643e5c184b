// A saved profile into and out of a session (decisions.md 89), as its files are moved
// (session-files.ts): through `tar` started inside the session as its uid, under the exec guard
// (it may run nothing else), over a pipe, as a stream (decisions.md 138): neither end holds the
// archive whole. The engine never opens a path of the session: what tar
// unpacks lands where the session's own uid may write in its own mount view, and what it packs is
// what that uid may read there. The archive going in is checked by the engine as it streams
// (profiles/archive-checker.ts); the one coming out is checked again as it streams, before it is kept.
import type { Writable } from 'node:stream';
import type { SessionSandbox } from '../sandbox/confinement.js';
import { SESSION_FILE_FOLDERS } from '../browser/profile-contents.js';
import { signalProcess } from '../sandbox/processes.js';

const TAR = '/usr/bin/tar';
/** A transfer ends here whatever it moves: a profile at the cap moves far faster (decisions.md 138). */
const TRANSFER_CEILING_MS = 15 * 60_000;

/**
 * Waits for `work`, or rejects once no byte moved for `idleMs` (a program that hangs, a pipe nobody
 * reads) or after TRANSFER_CEILING_MS in all. A stream's time grows with its size and with the
 * engine's load (brotli), so its deadline is its progress, not a fixed time for the whole.
 */
async function whileMoving<T>(work: Promise<T>, moved: () => number, idleMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const began = Date.now();
  let last = moved();
  let lastAt = began;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        const check = () => {
          const now = Date.now();
          const count = moved();
          if (count !== last) [last, lastAt] = [count, now];
          if (now - lastAt >= idleMs) return reject(new Error(`${what} did not happen: nothing moved for ${idleMs} ms`));
          if (now - began >= TRANSFER_CEILING_MS) return reject(new Error(`${what} did not happen within ${TRANSFER_CEILING_MS} ms`));
          timer = setTimeout(check, Math.min(1000, idleMs));
        };
        timer = setTimeout(check, Math.min(1000, idleMs));
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Writes a checked archive into `sink` (a session's tar) and ends it; rejects when it could not. */
export type ArchiveSource = (sink: Writable) => Promise<void>;
/** Reads the archive a session's tar hands back, as it comes; rejects to stop it. */
export type ArchiveConsumer = (archive: AsyncIterable<Buffer>) => Promise<void>;

function profileDir(sandbox: SessionSandbox): string {
  return `${sandbox.dir}/profile`;
}

/**
 * Where tar unpacks: the profile directory; with `files` (a hibernated state, decisions.md 177) the
 * session's directory, every entry under `profile/` but those of its file folders, which land in
 * its own `downloads` and `uploads` (GNU tar's transforms, in order; symlink targets untouched).
 */
function restoreTarget(sandbox: SessionSandbox, files: boolean): string[] {
  if (!files) return ['-C', profileDir(sandbox)];
  const folders = SESSION_FILE_FOLDERS.join('\\|');
  return ['-C', sandbox.dir, '--transform=s,^,profile/,S', `--transform=s,^profile/\\(${folders}\\)\\(/\\|$\\),\\1\\2,S`];
}

/**
 * Unpacks the archive `source` streams into the session's (fresh) profile directory before its
 * browser starts; with `files`, its file folders' entries into the session's own folders.
 */
export async function restoreProfile(sandbox: SessionSandbox, source: ArchiveSource, timeoutMs: number, files = false): Promise<void> {
  if (sandbox.ended()) throw new Error("the session's sandbox has ended");
  const tar = sandbox.spawn('profile-restore', TAR, ['-x', '-f', '-', ...restoreTarget(sandbox, files), '--no-same-owner', '--no-same-permissions', '--no-overwrite-dir'], {
    env: sandbox.env,
    stdio: ['pipe', 'ignore', 'pipe'],
    mayRun: [],
  });
  tar.child.once('error', () => undefined);
  const stdin = tar.child.stdin!;
  stdin.on('error', () => undefined);
  // The source's refusal (a damaged or tampered version) is the reason given; tar is ended. A
  // pipe that broke because tar itself failed gives tar's own words.
  const written = source(stdin).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED' || error.code === 'ERR_STREAM_PREMATURE_CLOSE') {
      const { code, signal } = await tar.exited;
      if (code !== 0) throw new Error(`restoring the profile failed: ${tar.stderrTail() || (signal ?? `exit ${code}`)}`);
    }
    signalProcess(tar, 'SIGKILL');
    throw error;
  });
  const [, { code, signal }] = await whileMoving(Promise.all([written, tar.exited]), () => (stdin as Writable & { bytesWritten?: number }).bytesWritten ?? 0, timeoutMs, 'restoring the profile').catch((error: Error) => {
    signalProcess(tar, 'SIGKILL');
    throw error;
  });
  if (code !== 0) throw new Error(`restoring the profile failed: ${tar.stderrTail() || (signal ?? `exit ${code}`)}`);
}

/**
 * Packs `paths` (relative to the profile directory; missing ones skipped) and, with `files`, the
 * session's file folders beside it (`downloads/…`, `uploads/…`: a hibernated state, decisions.md
 * 177), and hands the archive to `consume` as it streams; refuses one over `maxBytes` (the program
 * is ended as soon as it passes). `consume`'s own refusal is the answer, and ends the program.
 */
export async function captureProfile(sandbox: SessionSandbox, paths: readonly string[], maxBytes: number, timeoutMs: number, consume: ArchiveConsumer, files = false): Promise<void> {
  if (sandbox.ended()) throw new Error("the session's sandbox has ended");
  // The paths are the engine's own constants (none begins with `-`): a second `-C` among them is tar's option.
  const what = files ? ['-C', profileDir(sandbox), ...paths, '-C', sandbox.dir, ...SESSION_FILE_FOLDERS] : ['-C', profileDir(sandbox), '--', ...paths];
  const tar = sandbox.spawn('profile-save', TAR, ['-c', '-f', '-', '--ignore-failed-read', '--one-file-system', '--format=gnu', ...what], {
    env: sandbox.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    mayRun: [],
  });
  tar.child.once('error', () => undefined);
  const stdout = tar.child.stdout!;
  let size = 0;
  async function* counted(): AsyncGenerator<Buffer> {
    for await (const chunk of stdout) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        signalProcess(tar, 'SIGKILL');
        throw new ProfileTooLarge(maxBytes);
      }
      yield chunk as Buffer;
    }
  }
  const consumed = consume(counted()).catch((error: Error) => {
    signalProcess(tar, 'SIGKILL');
    stdout.destroy();
    throw error;
  });
  const [, { code, signal }] = await whileMoving(Promise.all([consumed, tar.exited]), () => size, timeoutMs, 'saving the profile').catch((error: Error) => {
    signalProcess(tar, 'SIGKILL');
    stdout.destroy();
    throw error;
  });
  // 1: some file changed while it was read (the browser has ended, so only a stray helper's); the archive is whole.
  if (code !== 0 && code !== 1) throw new Error(`saving the profile failed: ${tar.stderrTail() || (signal ?? `exit ${code}`)}`);
}

/** The session's profile is larger than it may be saved. */
export class ProfileTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the profile is larger than ${Math.floor(maxBytes / (1024 * 1024))} MB`);
  }
}
