// Test helper for runtime sessions: X clients on a session's display (run inside the session,
// the only place its display is reachable) and polling until a probe gives what a test waits for.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine } from '../../src/engine/engine.js';
import type { RuntimeSession } from '../../src/engine/runtime/runtime.js';
import { runProcess } from '../../src/engine/runtime/sandbox/session-sandbox.js';

/** Runs an X client (xdotool, setxkbmap, ...) on the session's display, inside the session. */
export function x(session: RuntimeSession, command: string, args: string[]): Promise<string> {
  return session.sandbox.run(command, args, session.display.env);
}

/**
 * Runs a program as a process of the session itself would run: its uid, namespaces, exec guard and
 * process space (where its browser is: what a page that broke out of the browser would have).
 * The engine's own `sandbox.run` runs outside that space (decisions.md 140).
 */
export function inSession(session: RuntimeSession, command: string, args: string[], timeoutMs = 10_000): Promise<string> {
  const spawned = session.sandbox.spawn(command, command, args, { env: session.sandbox.env, stdio: ['ignore', 'pipe', 'pipe'], mayRun: [], part: true });
  return runProcess(spawned, command, timeoutMs);
}

/** Polls `probe` until `accept` takes its value or the time is up; returns the last value seen. */
export async function waitFor<T>(probe: () => Promise<T> | T, accept: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!accept(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    value = await probe();
  }
  return value;
}

/** The browser control of the engine's session `vmId`, once it runs (up to 30 s), or undefined. */
export function controlOf(engine: Engine, vmId: string) {
  return waitFor(async () => {
    const row = await engine.store.session(vmId);
    return row?.runtime_id ? engine.runtime.get(row.runtime_id)?.control : undefined;
  }, Boolean, 30_000);
}

/** Types an address into the browser's address bar and presses Enter, with a person's pauses. */
export async function typeAddress(session: RuntimeSession, address: string): Promise<void> {
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  await x(session, 'xdotool', ['key', 'ctrl+l']);
  await pause(300);
  await x(session, 'xdotool', ['type', '--delay', '20', address]);
  await pause(200);
  await x(session, 'xdotool', ['key', 'Return']);
}

/**
 * Types an address until the browser shows it arrived (`arrived` turns true), up to `tries` times,
 * waiting `eachMs` after each: on a loaded machine a key can reach the address bar before it has
 * focus, and a person would type it again. Answers whether it arrived.
 */
export async function visitByTyping(session: RuntimeSession, address: string, arrived: () => Promise<boolean> | boolean, tries = 3, eachMs = 20_000): Promise<boolean> {
  for (let attempt = 0; attempt < tries; attempt++) {
    await typeAddress(session, address);
    if (await waitFor(arrived, Boolean, eachMs)) return true;
  }
  return false;
}

/** Whether the browser's own file dialog ("Open File") shows on the session's display within the time. */
export async function fileDialogShows(session: RuntimeSession, timeoutMs = 10_000): Promise<boolean> {
  const found = await waitFor(() => x(session, 'xdotool', ['search', '--onlyvisible', '--name', '^Open File$']).catch(() => ''), (ids) => ids.trim() !== '', timeoutMs);
  return found.trim() !== '';
}

/**
 * Where the "Open" button of the browser's file dialog is on a display of `width` x `height`: GTK
 * puts it 52 px left of and 28 px above the dialog's bottom right, and a dialog taller than the
 * display is cut at its bottom.
 */
export async function fileDialogOpenButton(session: RuntimeSession, width: number, height: number): Promise<{ x: number; y: number }> {
  const id = (await x(session, 'xdotool', ['search', '--onlyvisible', '--name', '^Open File$'])).trim().split('\n')[0]!;
  const geometry = await x(session, 'xdotool', ['getwindowgeometry', '--shell', id]);
  const value = (name: string) => Number(new RegExp(`^${name}=(\\d+)`, 'm').exec(geometry)?.[1] ?? NaN);
  return { x: Math.min(value('X') + value('WIDTH'), width) - 52, y: Math.min(value('Y') + value('HEIGHT'), height) - 28 };
}

/** The bytes the regular files directly in `folder` hold, as the host sees them (a session's uploads, say). */
export async function folderBytes(folder: string): Promise<number> {
  let sum = 0;
  for (const name of await readdir(folder)) {
    const found = await stat(join(folder, name));
    if (found.isFile()) sum += found.size;
  }
  return sum;
}
