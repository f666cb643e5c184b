// Test helper for runtime sessions: X clients on a session's display (run inside the session,
// the only place its display is reachable) and polling until a probe gives what a test waits for.
import type { RuntimeSession } from '../../src/engine/runtime/runtime.js';

/** Runs an X client (xdotool, setxkbmap, ...) on the session's display, inside the session. */
export function x(session: RuntimeSession, command: string, args: string[]): Promise<string> {
  return session.sandbox.run(command, args, session.display.env);
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

/** Types an address into the browser's address bar and presses Enter, with a person's pauses. */
export async function typeAddress(session: RuntimeSession, address: string): Promise<void> {
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  await x(session, 'xdotool', ['key', 'ctrl+l']);
  await pause(300);
  await x(session, 'xdotool', ['type', '--delay', '20', address]);
  await pause(200);
  await x(session, 'xdotool', ['key', 'Return']);
}

/** Whether the browser's own file dialog ("Open File") shows on the session's display within the time. */
export async function fileDialogShows(session: RuntimeSession, timeoutMs = 10_000): Promise<boolean> {
  const found = await waitFor(() => x(session, 'xdotool', ['search', '--onlyvisible', '--name', '^Open File$']).catch(() => ''), (ids) => ids.trim() !== '', timeoutMs);
  return found.trim() !== '';
}
