// A session's saved profile at its two ends (decisions.md 89): restored into its fresh profile
// directory before its browser starts (a warm display, never a warm browser, which began on a
// fresh profile), and at a normal end its browser closed cleanly, so that what it keeps in memory
// (cookies, the open tabs) reaches its files, before those are packed: Chromium by DevTools'
// Browser.close, Firefox by its own Quit (Ctrl+Q typed on its display: SIGTERM ends it without
// writing localStorage out, measured); SQLite's journals are packed beside their databases, so a
// browser that had to be killed still hands back what it had committed.
import { profileFamily, profilePaths } from './browser/profile-contents.js';
import type { BrowserControl } from './browser/control.js';
import type { BrowserProcess } from './browser/browser.js';
import type { BrowserImage } from './browser/catalog.js';
import type { SessionSandbox } from './sandbox/confinement.js';
import type { Display } from './display/display.js';
import { signalProcess, withTimeout } from './sandbox/processes.js';
import { captureProfile, type ArchiveConsumer, type ArchiveSource } from './session/profile-transfer.js';

export { restoreProfile, ProfileTooLarge, type ArchiveConsumer, type ArchiveSource } from './session/profile-transfer.js';
export { keepsHibernationPath, keepsProfilePath, profileFamily, profilePaths, type ProfileFamily } from './browser/profile-contents.js';

/** What a session starts on: its profile's archive, checked as it streams in (or the promise of it, read while the display starts). */
export interface ProfileRestore {
  archive: ArchiveSource | Promise<ArchiveSource>;
  /** Its open tabs come back too. */
  tabs?: boolean;
  /** Its downloads and uploads come back too (a hibernated state, decisions.md 177). */
  files?: boolean;
}

/** What to keep at the end: the open tabs too, and the most the archive may hold. */
export interface ProfileCapture {
  tabs: boolean;
  maxBytes: number;
  /** The session's downloads and uploads too (hibernation, decisions.md 177). */
  files?: boolean;
}

/** How long the browser has to close on its own before it is killed. */
const CLOSE_MS = 10_000;

/** Closes the browser the way it writes its state out, waiting for it (SIGTERM, then killed, after CLOSE_MS). */
async function closeCleanly(browser: BrowserProcess, control: BrowserControl | null, sandbox: SessionSandbox, display: Display): Promise<void> {
  const process = browser.process;
  if (process.child.exitCode === null && process.child.signalCode === null) {
    if (control) {
      await withTimeout(control.client.send('Browser.close' as never).then(() => undefined), 2_000, 'Browser.close').catch(() => signalProcess(process, 'SIGTERM'));
    } else {
      await sandbox.run('xdotool', ['key', '--clearmodifiers', 'ctrl+q'], display.env, 2_000).catch(() => signalProcess(process, 'SIGTERM'));
    }
    await withTimeout(process.exited, CLOSE_MS, "the browser's orderly close").catch(() => signalProcess(process, 'SIGTERM'));
    await withTimeout(process.exited, 2_000, "the browser's end").catch(() => signalProcess(process, 'SIGKILL'));
    await process.exited;
  }
  await control?.close().catch(() => undefined);
}

/**
 * Packs what the session's profile would keep while its browser runs on, counting the archive's
 * bytes and keeping none (hibernation's look at the caps before it closes anything). Rejects with
 * ProfileTooLarge past `capture.maxBytes`.
 */
export async function measureProfile(session: { sandbox: SessionSandbox; image: BrowserImage }, capture: ProfileCapture, timeoutMs: number): Promise<number> {
  let bytes = 0;
  await captureProfile(session.sandbox, profilePaths(profileFamily(session.image), capture.tabs), capture.maxBytes, timeoutMs, async (archive) => {
    for await (const chunk of archive) bytes += chunk.length;
  }, capture.files);
  return bytes;
}

/** Ends the session's browser cleanly and packs what its profile keeps, handing the archive to `consume` as it streams. */
export async function closeAndCapture(
  session: { sandbox: SessionSandbox; display: Display; browser: BrowserProcess; control: BrowserControl | null; image: BrowserImage },
  capture: ProfileCapture,
  timeoutMs: number,
  consume: ArchiveConsumer,
): Promise<void> {
  await closeCleanly(session.browser, session.control, session.sandbox, session.display);
  const family = profileFamily(session.image);
  await captureProfile(session.sandbox, profilePaths(family, capture.tabs), capture.maxBytes, timeoutMs, consume, capture.files);
}
