// A warm Chromium browser in the time zone of the session that takes it. The browser was started
// in the engine's default zone (TZ); its session's zone is set through DevTools: the engine's guard
// connection auto-attaches to every target (pages, popups and new tabs, out-of-process frames,
// dedicated, shared and service workers), each paused at its start until the override is in place
// (decisions.md 63). The override lives as long as the connection: when the guard re-arms after a
// drop, it is set again on the new connection.
import type { DevToolsConnection, DevToolsEvent } from './devtools-connection.js';
import type { BrowserControl } from './control.js';

/** Targets whose own DevTools session takes the override (a frame's renderer holds it for its workers too). */
const OVERRIDDEN = new Set(['page', 'iframe', 'worker', 'shared_worker', 'service_worker']);
/** Targets whose children (workers, out-of-process frames) are attached in turn. */
const PARENTS = new Set(['page', 'iframe']);

/**
 * Keeps every target of the browser in `timeZone` from now on; resolves once the targets that
 * exist now have it. Later targets start paused and run once they have it.
 */
export async function overrideTimeZone(control: BrowserControl, timeZone: string): Promise<void> {
  control.on('rearmed', () => void armZone(control.client, timeZone).catch(() => undefined));
  await armZone(control.client, timeZone);
}

async function armZone(client: DevToolsConnection, timezoneId: string): Promise<void> {
  const pending = new Set<Promise<void>>();
  const autoAttach = { autoAttach: true, waitForDebuggerOnStart: true, flatten: true };
  client.on('event', (message) => {
    if (message.method !== 'Target.attachedToTarget') return;
    const { sessionId, targetInfo, waitingForDebugger } = message.params as { sessionId: string; targetInfo: { type: string }; waitingForDebugger: boolean };
    const work = (async () => {
      try {
        // A worker type without the Emulation domain answers with an error: its renderer's zone
        // is the override its frame set (the zone is one per renderer process).
        if (OVERRIDDEN.has(targetInfo.type)) await client.send('Emulation.setTimezoneOverride', { timezoneId }, sessionId).catch(() => undefined);
        if (PARENTS.has(targetInfo.type)) await client.send('Target.setAutoAttach', autoAttach, sessionId).catch(() => undefined);
      } finally {
        // Never left paused: a target the override could not reach still runs.
        if (waitingForDebugger) await client.send('Runtime.runIfWaitingForDebugger', undefined, sessionId).catch(() => undefined);
      }
    })();
    pending.add(work);
    void work.finally(() => pending.delete(work));
  });
  // Attaches the targets that exist now as well (their attach events come before the answer).
  await client.send('Target.setAutoAttach', autoAttach);
  while (pending.size > 0) await Promise.all([...pending]);
}
