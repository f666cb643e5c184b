// Keeps the engine's own DevTools connection (its guard, runtime/browser/control.ts) out of a program's
// sight. Each browser-level DevTools connection is a target of type "browser": a program would
// see the guard's in target discovery (`Target.setDiscoverTargets` with a filter that admits
// "browser", as Puppeteer's does), in `Target.getTargets`, and be attached to it by auto-attach;
// the policy refuses any command naming it (policy.ts), and this view drops every message from
// the browser that shows it, detaching at once what auto-attach attached. One view per program
// connection; it reads only target messages (and the answers to `Target.getTargets`), so the
// rest of the traffic passes untouched.
import { MESSAGE_DEPTH, readStrangerJson } from '../../limits/stranger-json.js';
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
  /** Why the message could not be read, when it could not: the program's connection ends (only it). */
  unreadable?: string;
}

/** The largest target message the view reads (target events and listings are a few kB; a full-page screenshot's answer is never read). */
const READ_LENGTH = 64 * 1024 * 1024;
/** Listings, sessions hidden and the view's own commands it keeps at once: a program or a browser that fills them past this is cut. */
const TABLE_LIMIT = 256;

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

  /**
   * Notes a command on its way to the browser (its answer may need filtering). False when it must
   * not go: a program with TABLE_LIMIT listings unanswered already (its answer could not be filtered).
   */
  sent(command: DevToolsCommand): boolean {
    if (command.method !== 'Target.getTargets') return true;
    if (this.listings.size >= TABLE_LIMIT) return false;
    this.listings.add(`${command.sessionId ?? ''}:${command.id}`);
    return true;
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
    const read = readStrangerJson(text, { maxLength: READ_LENGTH, maxDepth: MESSAGE_DEPTH });
    if (!read.ok) return { text: null, toBrowser: [], unreadable: read.why };
    const message = read.value as { id?: unknown; method?: unknown; params?: unknown; result?: unknown; sessionId?: unknown };
    if (message.sessionId !== undefined && typeof message.sessionId !== 'string') return { text: null, toBrowser: [], unreadable: 'a message whose sessionId is not a string' };
    if (message.id !== undefined) {
      if (typeof message.id !== 'number') return { text: null, toBrowser: [], unreadable: 'an answer whose id is not a number' };
      return this.answer(message as { id: number; result?: unknown; sessionId?: string }, passed);
    }
    if (typeof message.method !== 'string' || !TARGET_EVENTS.has(message.method)) return passed;
    if (message.params !== undefined && (typeof message.params !== 'object' || message.params === null)) return { text: null, toBrowser: [], unreadable: 'a target event whose params are not an object' };
    const params = (message.params ?? {}) as Record<string, any>;
    const info: unknown = params.targetInfo;
    const targetId: unknown = (typeof info === 'object' && info !== null ? (info as { targetId?: unknown }).targetId : undefined) ?? params.targetId;
    if (typeof targetId !== 'string' || !this.isEngineTarget(targetId)) return passed;
    if (message.method === 'Target.attachedToTarget' && typeof params.sessionId === 'string') {
      // Auto-attach attached it: detached at once, on the session that auto-attached.
      if (this.hiddenSessions.size >= TABLE_LIMIT || this.ownCommands.size >= TABLE_LIMIT) return { text: null, toBrowser: [], unreadable: `more than ${TABLE_LIMIT} attachments to the engine's own target` };
      this.hiddenSessions.add(params.sessionId);
      const id = this.nextId++;
      this.ownCommands.add(id);
      const detach = { id, method: 'Target.detachFromTarget', params: { sessionId: params.sessionId }, ...(message.sessionId === undefined ? {} : { sessionId: message.sessionId }) };
      return { text: null, toBrowser: [JSON.stringify(detach)] };
    }
    return { text: null, toBrowser: [] };
  }

  private answer(message: { id: number; result?: unknown; sessionId?: string }, passed: FromBrowser): FromBrowser {
    if (this.ownCommands.delete(message.id)) return { text: null, toBrowser: [] };
    const key = `${message.sessionId ?? ''}:${message.id}`;
    if (!this.listings.delete(key)) return passed;
    const result = (typeof message.result === 'object' && message.result !== null ? message.result : {}) as Record<string, unknown>;
    const infos = result.targetInfos;
    const named = (info: unknown) => this.isEngineTarget(String((info as { targetId?: unknown } | null)?.targetId));
    if (!Array.isArray(infos) || !infos.some(named)) return passed;
    const shown = infos.filter((info) => !named(info));
    return { text: JSON.stringify({ ...message, result: { ...result, targetInfos: shown } }), toBrowser: [] };
  }
}
