// The engine's own DevTools connection to a session's browser (the guard, tabs and titles, the first
// page, the editing watch: control.ts). A process of the session can write into the browser's end
// of it, so nothing it says is trusted: every message is read once, within a size and a nesting
// limit, on a line of the session's reader worker (browser-reader.ts; in this thread only for a
// caller without one), its shape checked here before a field is read, and a listener that throws
// on it is caught here. What cannot be read is told as `unreadable` (the control then ends that
// session) and never reaches the process. The commands waiting for an answer are bounded in number
// and in time, and all are answered when the connection closes.
import { EventEmitter } from 'node:events';
import { MESSAGE_DEPTH } from '../../limits/stranger-json.js';
import { openLine, type BrowserLine, type LineLimits } from './browser-line.js';
import type { BrowserReader } from './browser-reader.js';

/** An event the browser told (its `params` a plain object, `{}` when it sent none). */
export interface DevToolsEvent {
  method: string;
  params: Record<string, any>;
  sessionId?: string;
}

export interface DevToolsConnectionEvents {
  event: [DevToolsEvent];
  /** The connection closed (the browser went, the relay was cut, or close()). */
  disconnect: [];
  /** The browser sent what the engine cannot read (why); the connection is closed after it. */
  unreadable: [{ why: string }];
}

/** The largest message read from the browser: the engine asks for targets, titles and its own pages, never a screenshot (what the worker reads, the engine holds once more). */
const MESSAGE_BYTES = 16 * 1024 * 1024;
/**
 * What the guard's connection hands on a second at most: its events (targets, titles, the editing
 * watch) and answers are kilobytes; a browser that sends more is flooding the engine, and its
 * session ends rather than cost the others (docs/benchmarks.md, "blast radius").
 */
const MESSAGE_BYTES_PER_SECOND = 16 * 1024 * 1024;
/** Commands of the engine's own waiting for an answer at once; more is a mistake or a browser that stopped answering. */
const PENDING_LIMIT = 1024;
/** How long a command waits for its answer: a page's navigation answers when the site does, and a browser that never answers must not hold the engine's memory. */
export const ANSWER_MS = 120_000;

interface Waiting {
  method: string;
  resolve(result: any): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export class DevToolsConnection extends EventEmitter<DevToolsConnectionEvents> {
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 0;
  private closed = false;

  private constructor(private readonly line: BrowserLine, private readonly answerMs: number) {
    super();
    this.setMaxListeners(0);
  }

  /** Opens a connection to `url` (`ws://` or a confined session's `ws+unix:` address), read in `reader` when given. */
  static open(url: string, options: { answerMs?: number; reader?: BrowserReader } = {}): Promise<DevToolsConnection> {
    const limits: LineLimits = { maxPayload: MESSAGE_BYTES, maxDepth: MESSAGE_DEPTH, bytesPerSecond: MESSAGE_BYTES_PER_SECOND };
    return new Promise<DevToolsConnection>((resolve, reject) => {
      let connection: DevToolsConnection | undefined;
      const line: BrowserLine = (options.reader ? options.reader.open.bind(options.reader) : openLine)(url, limits, {
        open: () => {
          connection = new DevToolsConnection(line, options.answerMs ?? ANSWER_MS);
          resolve(connection);
        },
        message: (value) => connection?.receive(value),
        unreadable: (why) => connection?.unreadable(why),
        close: (why) => (connection ? connection.closedUnder(why) : reject(new Error(`the DevTools connection could not be opened (${why})`))),
      });
    });
  }

  /** How many commands wait for their answer now (bounded by PENDING_LIMIT). */
  get pendingCount(): number {
    return this.waiting.size;
  }

  /** Sends a command; its `result` (rejects with the browser's error, a timeout, or the connection's end). */
  send<T = any>(method: string, params?: object, sessionId?: string): Promise<T> {
    if (this.closed) return Promise.reject(new Error(`${method}: the DevTools connection is closed`));
    if (this.waiting.size >= PENDING_LIMIT) return Promise.reject(new Error(`${method}: ${PENDING_LIMIT} commands wait for the browser already`));
    const id = ++this.nextId;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`${method}: no answer from the browser within ${this.answerMs / 1000} s`));
      }, this.answerMs);
      this.waiting.set(id, { method, resolve, reject, timer });
      this.line.send(JSON.stringify({ id, method, params: params ?? {}, ...(sessionId === undefined ? {} : { sessionId }) }));
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const closed = new Promise<void>((resolve) => this.once('disconnect', () => resolve()));
    this.line.close();
    await closed;
  }

  /** The browser sent what cannot be read: told once, and the line is cut. */
  private unreadable(why: string): void {
    if (this.closed) return;
    this.emit('unreadable', { why });
    this.line.terminate();
  }

  private receive(value: Record<string, unknown>): void {
    if (this.closed) return;
    const unreadable = (why: string) => this.unreadable(why);
    const { id, method, params, sessionId, result, error } = value;
    if (sessionId !== undefined && typeof sessionId !== 'string') return unreadable('a message whose sessionId is not a string');
    if (id !== undefined) {
      if (typeof id !== 'number' || !Number.isSafeInteger(id)) return unreadable('an answer whose id is not an integer');
      const waiting = this.waiting.get(id);
      // An answer to nothing asked (late, after its deadline): dropped.
      if (!waiting) return;
      this.waiting.delete(id);
      clearTimeout(waiting.timer);
      if (error !== undefined) {
        const message = typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string' ? (error as { message: string }).message : 'an error';
        return waiting.reject(new Error(`${waiting.method}: ${message.slice(0, 500)}`));
      }
      if (result !== undefined && !isPlainObject(result)) return unreadable(`an answer to ${waiting.method} whose result is not an object`);
      return waiting.resolve(result ?? {});
    }
    if (typeof method !== 'string') return unreadable('a message that is neither an answer nor an event');
    if (params !== undefined && !isPlainObject(params)) return unreadable(`a ${method.slice(0, 100)} event whose params are not an object`);
    const event: DevToolsEvent = { method, params: (params ?? {}) as Record<string, any>, ...(sessionId === undefined ? {} : { sessionId }) };
    this.contained(() => this.emit('event', event), unreadable);
  }

  /** Runs a listener's part: one that throws on what the browser sent makes the message unreadable, never the process's end. */
  private contained(work: () => void, unreadable: (why: string) => void): void {
    try {
      work();
    } catch (error) {
      unreadable(`a message the engine could not handle (${String((error as Error)?.message ?? error).slice(0, 200)})`);
    }
  }

  private closedUnder(why: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const [, waiting] of this.waiting) {
      clearTimeout(waiting.timer);
      waiting.reject(new Error(`${waiting.method}: ${why}`));
    }
    this.waiting.clear();
    this.emit('disconnect');
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// What the engine's listeners read of DevTools' messages, checked before a field is read.

/** What the engine reads of a DevTools target. */
export interface TargetInfo {
  targetId: string;
  type: string;
  url: string;
  title?: string;
}

/** A target's info as DevTools tells it, its shape checked before a field is read (a throw in a listener makes the message unreadable, above). */
export function targetInfoOf(params: Record<string, unknown>): TargetInfo {
  const info = params.targetInfo as Record<string, unknown> | undefined;
  if (typeof info !== 'object' || info === null || typeof info.targetId !== 'string' || typeof info.type !== 'string' || typeof info.url !== 'string' || (info.title !== undefined && typeof info.title !== 'string')) {
    throw new Error('a target event without a whole targetInfo');
  }
  return info as unknown as TargetInfo;
}

/** A string field of an event's params (a throw here makes the message unreadable). */
export function textOf(params: Record<string, unknown>, field: string): string {
  const value = params[field];
  if (typeof value !== 'string') throw new Error(`an event whose ${field} is not a string`);
  return value;
}
