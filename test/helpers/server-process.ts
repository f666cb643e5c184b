// Test helpers for throwaway servers run as child processes (Postgres, nginx): a free port to give
// one, waiting until it answers (with its log when it does not), and stopping it by its pid.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Calls `probe` until it succeeds; fails with the server's log when the server exits first or
 * the time is up.
 */
export async function waitUntilServing(name: string, child: ChildProcess, logFile: string, probe: () => Promise<void>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before it answered; its log:\n${readLog(logFile)}`);
    }
    try {
      await probe();
      return;
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`${name} did not answer within ${timeoutMs} ms (${(lastError as Error)?.message}); its log:\n${readLog(logFile)}`);
}

/** Sends `signal` to the child and waits for it to exit; SIGKILL when it takes too long. */
export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals, timeoutMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(timer);
}

function readLog(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim() || '(empty)';
  } catch {
    return '(no log)';
  }
}
