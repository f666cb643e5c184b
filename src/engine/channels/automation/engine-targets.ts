// Keeps the engine's own DevTools connection (its guard, runtime/browser/control.ts) out of a program's
// sight. Each browser-level DevTools connection is a target of type "browser": a program would
// see the guard's in target discovery (`Target.setDiscoverTargets` with a filter that admits
// "browser", as Puppeteer's does), in `Target.getTargets`, and be attached to it by auto-attach;
// the policy refuses any command naming it (policy.ts), and this view drops every message from
// the browser that shows it, detaching at once what auto-attach attached. One view per program
// connection; it reads only target messages (and the answers to `Target.getTargets`), so the
// rest of the traffic passes untouched.
import type { DevToolsCommand } from './policy.js';

/** Ids of the view's own commands to the browser: far above any id a client counts up to (Chromium reads ids as 32-bit). */
const OWN_IDS_FROM = 2_000_000_000;

/** Events that name a target in `params.targetInfo` or `params.targetId`. */
const TARGET_EVENTS = new Set([
  'Target.targetCreated', 'Target.targetInfoChanged', 'Target.targetDestroyed', 'Target.targetCrashed',
  'Target.attachedToTarget', 'Target.detachedFromTarget',
]);

export interface FromBrowser {
  /** What goes to the program: the message as it came, changed, or null (dropped). */
  text: string | null;
  /** Commands of the view's own to send the browser (a detach from the engine's target). */
  toBrowser: string[];
}

export class EngineTargetView {
  /** `Target.getTargets` commands waiting for their answer, by `<sessionId>:<id>`. */
  private readonly listings = new Set<string>();
  /** Sessions auto-attach opened to an engine target: detached at once, never the program's to use. */
  private readonly hiddenSessions = new Set<string>();
  /** The view's own commands, whose answers the program never sees. */
  private readonly ownCommands = new Set<number>();
  private nextId = OWN_IDS_FROM;

  constructor(private readonly isEngineTarget: (targetId: string) => boolean) {}

  /** Whether a command goes to a session the program may not use (one opened to an engine target). */
  refuses(command: DevToolsCommand): boolean {
    return command.sessionId !== undefined && this.hiddenSessions.has(command.sessionId);
  }

  /** Notes a command on its way to the browser (its answer may need filtering). */
  sent(command: DevToolsCommand): void {
    if (command.method === 'Target.getTargets') this.listings.add(`${command.sessionId ?? ''}:${command.id}`);
  }

  /** What the program gets of one text message from the browser. */
  fromBrowser(text: string): FromBrowser {
    const passed = { text, toBrowser: [] };
    // Chromium writes an event's method first and an answer's id first: anything else is read in full.
    if (text.startsWith('{"method":')) {
      if (!text.startsWith('{"method":"Target.')) return passed;
    } else if (text.startsWith('{"id":')) {
      // Only the answers to the view's own commands and to listings are read (never a screenshot's megabytes).
      const id = /^\{"id":(\d+)/.exec(text)?.[1];
      if (!this.ownCommands.has(Number(id)) && ![...this.listings].some((key) => key.endsWith(`:${id}`))) return passed;
    }
    const message = JSON.parse(text) as { id?: number; method?: string; params?: Record<string, any>; result?: Record<string, any>; sessionId?: string };
    if (message.id !== undefined) return this.answer(message, passed);
    if (message.method === undefined || !TARGET_EVENTS.has(message.method)) return passed;
    const params = message.params ?? {};
    const targetId: unknown = params.targetInfo?.targetId ?? params.targetId;
    if (typeof targetId !== 'string' || !this.isEngineTarget(targetId)) return passed;
    if (message.method === 'Target.attachedToTarget' && typeof params.sessionId === 'string') {
      // Auto-attach attached it: detached at once, on the session that auto-attached.
      this.hiddenSessions.add(params.sessionId);
      const id = this.nextId++;
      this.ownCommands.add(id);
      const detach = { id, method: 'Target.detachFromTarget', params: { sessionId: params.sessionId }, ...(message.sessionId === undefined ? {} : { sessionId: message.sessionId }) };
      return { text: null, toBrowser: [JSON.stringify(detach)] };
    }
    return { text: null, toBrowser: [] };
  }

  private answer(message: { id?: number; result?: Record<string, any>; sessionId?: string }, passed: FromBrowser): FromBrowser {
    if (this.ownCommands.delete(message.id!)) return { text: null, toBrowser: [] };
    const key = `${message.sessionId ?? ''}:${message.id}`;
    if (!this.listings.delete(key)) return passed;
    const infos = message.result?.targetInfos;
    if (!Array.isArray(infos) || !infos.some((info: { targetId?: string }) => this.isEngineTarget(String(info.targetId)))) return passed;
    const shown = infos.filter((info: { targetId?: string }) => !this.isEngineTarget(String(info.targetId)));
    return { text: JSON.stringify({ ...message, result: { ...message.result, targetInfos: shown } }), toBrowser: [] };
  }
}
