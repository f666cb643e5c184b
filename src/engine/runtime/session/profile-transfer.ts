// A saved profile into and out of a session (decisions.md 89), as its files are moved
// (session-files.ts): through `tar` started inside the session as its uid, under the exec guard
// (it may run nothing else), over a pipe. The engine never opens a path of the session: what tar
// unpacks lands where the session's own uid may write in its own mount view, and what it packs is
// what that uid may read there. The archive going in was checked by the engine first
// (profiles/profile-archive.ts); the one coming out is checked again before it is kept.
import type { SessionSandbox } from '../sandbox/confinement.js';
import { signalProcess, withTimeout } from '../sandbox/processes.js';

const TAR = '/usr/bin/tar';

function profileDir(sandbox: SessionSandbox): string {
  return `${sandbox.dir}/profile`;
}

/** Unpacks `archive` into the session's (fresh) profile directory before its browser starts. */
export async function restoreProfile(sandbox: SessionSandbox, archive: Buffer, timeoutMs: number): Promise<void> {
  if (sandbox.ended()) throw new Error("the session's sandbox has ended");
  const tar = sandbox.spawn('profile-restore', TAR, ['-x', '-f', '-', '-C', profileDir(sandbox), '--no-same-owner', '--no-same-permissions', '--no-overwrite-dir'], {
    env: sandbox.env,
    stdio: ['pipe', 'ignore', 'pipe'],
    mayRun: [],
  });
  tar.child.once('error', () => undefined);
  tar.child.stdin!.on('error', () => undefined);
  tar.child.stdin!.end(archive);
  const { code, signal } = await withTimeout(tar.exited, timeoutMs, 'restoring the profile').catch((error: Error) => {
    signalProcess(tar, 'SIGKILL');
    throw error;
  });
  if (code !== 0) throw new Error(`restoring the profile failed: ${tar.stderrTail() || (signal ?? `exit ${code}`)}`);
}

/**
 * Packs `paths` (relative to the profile directory; missing ones skipped) and answers the archive;
 * refuses one over `maxBytes` (the program is ended as soon as it passes).
 */
export async function captureProfile(sandbox: SessionSandbox, paths: readonly string[], maxBytes: number, timeoutMs: number): Promise<Buffer> {
  if (sandbox.ended()) throw new Error("the session's sandbox has ended");
  const tar = sandbox.spawn('profile-save', TAR, ['-c', '-f', '-', '-C', profileDir(sandbox), '--ignore-failed-read', '--one-file-system', '--format=gnu', '--', ...paths], {
    env: sandbox.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    mayRun: [],
  });
  tar.child.once('error', () => undefined);
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  const stdout = tar.child.stdout!;
  stdout.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) {
      over = true;
      signalProcess(tar, 'SIGKILL');
      return;
    }
    chunks.push(chunk);
  });
  const drained = new Promise<void>((resolve) => stdout.once('close', () => resolve()));
  const [{ code, signal }] = await withTimeout(Promise.all([tar.exited, drained]), timeoutMs, 'saving the profile').catch((error: Error) => {
    signalProcess(tar, 'SIGKILL');
    throw error;
  });
  if (over) throw new ProfileTooLarge(maxBytes);
  // 1: some file changed while it was read (the browser has ended, so only a stray helper's); the archive is whole.
  if (code !== 0 && code !== 1) throw new Error(`saving the profile failed: ${tar.stderrTail() || (signal ?? `exit ${code}`)}`);
  return Buffer.concat(chunks);
}

/** The session's profile is larger than it may be saved. */
export class ProfileTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the profile is larger than ${Math.floor(maxBytes / (1024 * 1024))} MB`);
  }
}
