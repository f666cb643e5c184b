// The framed viewer's side of the message API (issue 44, decisions.md 135; the messages are
// src/protocol/embed-messages.ts): it learns which origin framed it (the browser's
// `location.ancestorOrigins`, or the first `hello` from its parent at an allowed origin), posts
// its events only there, and passes on commands only from its parent window at that origin, each
// parsed first. Anything else is ignored and counted; a bad command from the embedder is answered
// with an `error` event. Framework-free: the viewer site wires it to <ShareViewer>.
import { EMBED_MESSAGE_VERSION, parseEmbedCommand, type EmbedCommand, type EmbedEvent, type EmbedEventType, type WithoutVersion } from '../protocol/embed-messages.js';

export interface EmbedBridgeOptions {
  /** The viewer's own window (its parent is the embedding page). */
  window: Window;
  /** A parsed command from the embedder; a throw (a refusal) is answered with an `error` event carrying its message. */
  onCommand: (command: EmbedCommand) => Promise<void> | void;
  /** Called with the count each time a message is ignored (wrong window, origin, shape or version). */
  onIgnored?: (count: number) => void;
}

/** Messages held while the allowed origins are not known yet (the first state read), at most this many. */
const EARLY_MAX = 8;
/** The events the bridge repeats after each `ready`: the latest of each. */
const REPEATED: readonly EmbedEventType[] = ['state', 'tabs', 'control', 'people', 'recording', 'sound'];

export class EmbedBridge {
  #origins: readonly string[] | null = null;
  #embedder: string | null = null;
  #viewOnly = true;
  #latest = new Map<EmbedEventType, EmbedEvent>();
  #early: MessageEvent[] = [];
  #ignored = 0;
  readonly #listener = (event: MessageEvent) => this.#receive(event);

  constructor(private readonly options: EmbedBridgeOptions) {
    options.window.addEventListener('message', this.#listener);
  }

  /** Messages ignored so far. */
  get ignored(): number {
    return this.#ignored;
  }

  /** The origin that framed the viewer, once known. */
  get embedder(): string | null {
    return this.#embedder;
  }

  /**
   * The origins the link allows to frame it (the share state's `frameOrigins`) and whether it
   * only watches. The first call may name the embedder (the browser's ancestor origins) and
   * lets the messages held until then through.
   */
  allow(origins: readonly string[], viewOnly: boolean): void {
    this.#viewOnly = viewOnly;
    const first = this.#origins === null;
    this.#origins = origins;
    if (!first) return;
    const parent = this.options.window.location.ancestorOrigins?.[0];
    if (this.#embedder === null && parent !== undefined && origins.includes(parent)) this.#adopt(parent);
    for (const event of this.#early.splice(0)) this.#receive(event);
  }

  /** Posts an event to the embedder (kept, when it is not known yet, and sent after `ready`). */
  send(event: WithoutVersion<EmbedEvent>): void {
    const message = { rbk: EMBED_MESSAGE_VERSION, ...event } as EmbedEvent;
    if (REPEATED.includes(message.type)) this.#latest.set(message.type, message);
    this.#post(message);
  }

  stop(): void {
    this.options.window.removeEventListener('message', this.#listener);
  }

  #post(message: EmbedEvent): void {
    // Only ever to the one origin that framed it: the browser delivers it nowhere else.
    if (this.#embedder !== null) this.options.window.parent.postMessage(message, this.#embedder);
  }

  #adopt(origin: string): void {
    this.#embedder = origin;
    this.#announce();
  }

  #announce(): void {
    this.#post({ rbk: EMBED_MESSAGE_VERSION, type: 'ready', viewOnly: this.#viewOnly });
    for (const type of REPEATED) {
      const latest = this.#latest.get(type);
      if (latest) this.#post(latest);
    }
  }

  #ignore(): void {
    this.#ignored++;
    this.options.onIgnored?.(this.#ignored);
  }

  #receive(event: MessageEvent): void {
    const { window } = this.options;
    // Only the window around the viewer speaks to it; its own window and other frames never.
    if (window.parent === window || event.source !== window.parent) return this.#ignore();
    if (this.#origins === null) {
      if (this.#early.length < EARLY_MAX) this.#early.push(event);
      else this.#ignore();
      return;
    }
    const allowed = this.#embedder === null ? this.#origins.includes(event.origin) : event.origin === this.#embedder;
    if (!allowed) return this.#ignore();
    const parsed = parseEmbedCommand(event.data);
    if (!parsed.ok) {
      this.#ignore();
      if (this.#embedder !== null) this.send({ type: 'error', command: parsed.command, message: parsed.message });
      return;
    }
    if (this.#embedder === null) this.#adopt(event.origin);
    else if (parsed.command.type === 'hello') this.#announce();
    if (parsed.command.type === 'hello') return;
    const command = parsed.command;
    void (async () => {
      try {
        await this.options.onCommand(command);
      } catch (error) {
        this.send({ type: 'error', command: command.type, message: error instanceof Error ? error.message : String(error) });
      }
    })();
  }
}
