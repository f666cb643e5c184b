// One WebDriver BiDi session per Firefox, shared by everyone who drives or reads it (decisions.md
// 169, 170). Firefox's remote agent holds one BiDi session per browser (decisions.md 143), so the
// node that runs the session holds the one WebSocket to the agent and the one BiDi session on it,
// and gives each client (each program through the automation channel, and in an app window the
// engine's own tab watcher, firefox-tabs.ts) a session of its own on it: its `session.new` answered
// here (the first opens the browser's session; later ones get its capabilities and an id of their
// own), its command ids rewritten and its answers routed back, the events it subscribed to and no
// others, and what it made undone when it leaves or ends its session (bidi-ledger.ts). The
// browser's session ends when the last client holding one leaves, and the connection closes when
// no client is left. What a client may send at all is judged before the hub (the automation
// channel's BiDi policy, carry-bidi.ts); the hub refuses only commands naming another client's ids.
// Both ends are strangers' bytes (issue 53): a process in the session can write into the browser's
// end, a program writes its own; neither may end the engine, and every table either fills has a cap,
// a deadline and is emptied with its owner.
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { MESSAGE_DEPTH } from '../../limits/stranger-json.js';
import { BlockedRequests, ClientLedger, heldWhileAnswered, makesIds, type HubCommand } from './bidi-ledger.js';
import { shapeOf, type Answer } from './bidi-messages.js';
import { openLine, UNREADABLE_BROWSER, type BrowserLine } from './browser-line.js';
import type { BrowserReader } from './browser-reader.js';

export type { HubCommand };

/** A client's side of the hub. */
export interface BiDiHubClient {
  /**
   * Sends a command; its answer, with the same id, comes to the client's `deliver`, in the order
   * sent. False when too many of its commands wait already (for its session.new): the client is too
   * fast, and the caller closes it.
   */
  send(command: HubCommand): boolean;
  /** Leaves: what the client made is undone, and the browser's session ends if it held the last. */
  leave(): void;
}

/** How long the hub waits for Firefox to end the browser's session before it cuts the connection (the next session.new would be refused while it stands). */
const END_SESSION_MS = 2000;
/** Commands of one client that may wait for its session.new (they wait in order). */
const WAITING_LIMIT = 256;
/** The largest message the browser may send (a full-page screenshot is a few MB). */
const BROWSER_MESSAGE_BYTES = 64 * 1024 * 1024;
/** Commands of one client that may wait for Firefox's answer at once; more are answered with an error until some are answered. */
export const IN_FLIGHT_LIMIT = 1024;
/** Their text in all: what the connection's send buffer holds for one client while Firefox reads slowly. */
export const IN_FLIGHT_CHARS = 16 * 1024 * 1024;
/** How long a command waits for Firefox's answer before it is answered with an error and forgotten: Puppeteer's own protocolTimeout (180 s) gives up no sooner. */
export const COMMAND_TIMEOUT_MS = 180_000;
/**
 * Messages of the browser's connection the hub could not read (not JSON, not a BiDi message's
 * shape) after which it no longer trusts that connection: Firefox's agent writes none, so they come
 * from something else in the session. One or two are dropped and counted; at this many the hub cuts
 * the connection, opens no other, and says 'unreadable': the runtime ends the session
 * (runtime-events.ts), as "the session's browser sent what the service could not read". An answer
 * nested deeper than MESSAGE_DEPTH is not among them: a page's value can be that deep, so only its
 * command fails.
 */
export const UNREADABLE_LIMIT = 3;

export interface BiDiHubOptions {
  /** How long a command waits for Firefox's answer (COMMAND_TIMEOUT_MS). */
  commandTimeoutMs?: number;
  /** The session's reader, where the connection to the agent is read (browser-reader.ts); absent: in this thread. */
  reader?: BrowserReader;
}

/** The hub's connection to the agent: a line (browser-line.ts) and whether it has opened. */
interface AgentLine {
  line: BrowserLine;
  open: boolean;
}

export interface BiDiHubEvents {
  /** The browser's connection sent UNREADABLE_LIMIT messages the hub could not read (the last one's why): the hub has cut it; the session should end. */
  unreadable: [why: string];
}

interface Member {
  ledger: ClientLedger;
  deliver(text: string): void;
  lost(): void;
  /** The client's own session id, once its session.new is answered; null before and after. */
  sessionId: string | null;
  /** The client's commands in order: one after its session.new waits for that session. */
  chain: Promise<void>;
  /** How many of its commands the chain holds. */
  waiting: number;
  /** Its commands waiting for Firefox's answer (the hub's ids), and their text in all. */
  inFlight: Set<number>;
  inFlightChars: number;
  left: boolean;
}

interface Pending {
  /** Whose command it is; null for the hub's own (answered through `answered`). */
  member: Member | null;
  /** As much of it as its answer needs (bidi-ledger.ts heldWhileAnswered), not its whole text. */
  command: HubCommand;
  chars: number;
  deadline: NodeJS.Timeout;
  answered?: (answer: Answer) => void;
}

export class BiDiHub extends EventEmitter<BiDiHubEvents> {
  private readonly members = new Set<Member>();
  private readonly pending = new Map<number, Pending>();
  private readonly blocked = new BlockedRequests();
  private socket: AgentLine | null = null;
  private opened: Promise<AgentLine> | null = null;
  private nextId = 0;
  /** The browser's session: its session.new's answer, once asked; null when none is open or opening. */
  private session: Promise<Answer> | null = null;
  /** Clients whose session.new waits for the browser's session: it does not end meanwhile. */
  private openers = 0;
  /** The browser's last session ending: a new one opens after it. */
  private ending: Promise<void> = Promise.resolve();
  private readonly commandTimeoutMs: number;
  /** Messages of the browser's dropped unread, and how many of them count against the connection (UNREADABLE_LIMIT). */
  private dropped = 0;
  private unreadableSeen = 0;
  private unreadableWhy: string | null = null;

  /** `url` and `host`: the agent's WebSocket address and the Host header it takes (browser.ts). */
  private readonly reader: BrowserReader | undefined;

  constructor(private readonly url: string, private readonly host: string, options: BiDiHubOptions = {}) {
    super();
    this.commandTimeoutMs = options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS;
    this.reader = options.reader;
  }

  /** A new client: `deliver` hears its answers and events, `lost` that the browser's connection closed under it. */
  join(deliver: (text: string) => void, lost: () => void): BiDiHubClient {
    const member: Member = { ledger: new ClientLedger(), deliver, lost, sessionId: null, chain: Promise.resolve(), waiting: 0, inFlight: new Set(), inFlightChars: 0, left: false };
    this.members.add(member);
    return {
      send: (command) => {
        if (member.waiting >= WAITING_LIMIT) return false;
        member.waiting += 1;
        member.chain = member.chain
          .then(() => this.handle(member, command))
          // A defect met on one command: the client hears it failed, and the hub goes on.
          .catch(() => member.left || this.tell(member, JSON.stringify({ type: 'error', id: command.id, error: 'unknown error', message: `${command.method}: the service failed on this command` })))
          .then(() => void (member.waiting -= 1));
        return true;
      },
      leave: () => this.leave(member),
    };
  }

  /** How many clients hold a session on the browser's one now. */
  holders(): number {
    return [...this.members].filter((member) => member.sessionId !== null).length;
  }

  /** Why the hub stopped trusting the browser's connection (UNREADABLE_LIMIT reached), for a listener that comes later; null while it trusts it. */
  get unreadable(): string | null {
    return this.unreadableWhy;
  }

  /** Commands waiting for Firefox's answer, every client's and the hub's own (for tests and operators). */
  pendingCount(): number {
    return this.pending.size;
  }

  /** Messages of the browser's that the hub dropped unread (too deep, not JSON, not a BiDi message's shape). */
  droppedCount(): number {
    return this.dropped;
  }

  /** Requests held by intercepts now (bidi-ledger.ts, HELD_REQUESTS). */
  heldCount(): number {
    return this.blocked.size;
  }

  private async handle(member: Member, command: HubCommand): Promise<void> {
    if (member.left) return;
    const reply = (body: Record<string, unknown>) => this.tell(member, JSON.stringify({ ...body, id: command.id }));
    const error = (code: string, message: string) => reply({ type: 'error', error: code, message });
    switch (command.method) {
      case 'session.status':
        // A session.new always opens one: on the browser's session, shared.
        return reply({ type: 'success', result: { ready: true, message: 'each connection opens a session of its own with session.new, on the browser\'s one WebDriver BiDi session' } });
      case 'session.new': {
        if (member.sessionId !== null) return error('session not created', 'session.new: this connection has a session already; end it first (session.end)');
        this.openers += 1;
        const answer = await this.openSession(command.params ?? {}).finally(() => (this.openers -= 1));
        if (member.left) return void this.endIfUnheld();
        if (answer.type === 'error') return reply({ ...answer });
        member.sessionId = randomUUID();
        return reply({ type: 'success', result: { sessionId: member.sessionId, capabilities: answer.result?.capabilities ?? {} } });
      }
    }
    if (member.sessionId === null) return error('invalid session id', `${command.method}: this connection has no session; send session.new first`);
    if (command.method === 'session.end') {
      member.sessionId = null;
      this.undo(member);
      // The last holder's answer waits for the browser's session to end: a client may then open one elsewhere at once.
      await this.endIfUnheld();
      return reply({ type: 'success', result: {} });
    }
    const refused = member.ledger.refusal(command, (request) => this.blocked.owners(request));
    if (refused) return error('invalid argument', `${command.method} is refused in remote-browser-kit sessions: ${refused}`);
    const socket = this.socket;
    if (!socket || !socket.open) return error('unknown error', `${command.method}: the browser's WebDriver BiDi connection is closed`);
    if (member.inFlight.size >= IN_FLIGHT_LIMIT) {
      return error('unknown error', `${command.method}: ${IN_FLIGHT_LIMIT} commands of this connection wait for Firefox's answer already; send more once some are answered`);
    }
    const id = ++this.nextId;
    // Written out before anything is recorded: a command that cannot be leaves nothing behind.
    let text: string;
    try {
      text = JSON.stringify({ ...command, id });
    } catch {
      return error('invalid argument', `${command.method}: the command could not be written out for Firefox`);
    }
    if (member.inFlightChars > 0 && member.inFlightChars + text.length > IN_FLIGHT_CHARS) {
      return error('unknown error', `${command.method}: this connection's commands waiting for Firefox's answer hold ${IN_FLIGHT_CHARS / (1024 * 1024)} MiB already; send more once some are answered`);
    }
    this.track(id, { member, command: heldWhileAnswered(command), chars: text.length }, this.commandTimeoutMs);
    socket.line.send(text);
  }

  /** Records a command sent to Firefox, with its deadline. */
  private track(id: number, entry: Omit<Pending, 'deadline'>, timeoutMs: number): void {
    const deadline = setTimeout(() => this.expire(id, timeoutMs), timeoutMs);
    // A deadline keeps no process alive.
    deadline.unref();
    this.pending.set(id, { ...entry, deadline });
    if (entry.member) {
      entry.member.inFlight.add(id);
      entry.member.inFlightChars += entry.chars;
    }
  }

  /** Takes a command off the pending table (answered, given up, or its client gone). */
  private settle(id: number): Pending | undefined {
    const pending = this.pending.get(id);
    if (!pending) return undefined;
    this.pending.delete(id);
    clearTimeout(pending.deadline);
    if (pending.member) {
      pending.member.inFlight.delete(id);
      pending.member.inFlightChars -= pending.chars;
    }
    return pending;
  }

  /** A command past its deadline: answered with an error, and its answer, if it ever comes, dropped. */
  private expire(id: number, timeoutMs: number): void {
    this.fail(id, `Firefox did not answer within ${timeoutMs / 1000} s; the command is given up`);
  }

  /** Answers a pending command with BiDi's `unknown error` saying why, for its caller (the hub's own, or a client's), and forgets it. */
  private fail(id: number, why: string): void {
    const pending = this.settle(id);
    if (!pending) return;
    const message = `${pending.command.method}: ${why}`;
    if (pending.answered) return pending.answered({ type: 'error', id, error: 'unknown error', message });
    if (pending.member && !pending.member.left) this.tell(pending.member, JSON.stringify({ type: 'error', id: pending.command.id, error: 'unknown error', message }));
  }

  /** Gives a client a message; one whose own handler fails is let go (its connection told as lost), never the hub's reader. */
  private tell(member: Member, text: string): void {
    try {
      member.deliver(text);
    } catch {
      this.leave(member);
      try {
        member.lost();
      } catch {
        // Its connection is gone either way.
      }
    }
  }

  /**
   * The browser's session, opened with the first asker's capabilities (judged by the channel's
   * policy); every later asker shares it. When an opening fails, the next waiting asker tries with
   * its own.
   */
  private async openSession(params: Record<string, unknown>): Promise<Answer> {
    for (;;) {
      const current = this.session;
      if (current) {
        const answer = await current;
        if (answer.type === 'success' && this.session === current) return answer;
        if (this.session === current) this.session = null;
        continue;
      }
      const attempt = this.ending.then(() => this.call('session.new', params)).catch((cause: Error): Answer => ({
        type: 'error', id: null, error: 'session not created', message: `session.new: Firefox's remote agent could not be reached (${cause.message})`,
      }));
      this.session = attempt;
      const answer = await attempt;
      if (answer.type === 'error' && this.session === attempt) this.session = null;
      return answer;
    }
  }

  /**
   * Ends the browser's session once no client holds one or is opening one. Firefox closes the
   * connection after a session.end (measured on 153.8.0esr), so the hub lets it go with the session
   * (not told to the clients as a loss), and the next session.new opens both again; so too when
   * no client is left and no session was opened.
   */
  private endIfUnheld(): Promise<void> {
    if (this.openers > 0 || this.holders() > 0) return Promise.resolve();
    const session = this.session;
    if (!session && this.members.size > 0) return Promise.resolve();
    this.session = null;
    const socket = this.socket;
    const ended = session ? session.then((answer) => (answer.type === 'success' ? this.call('session.end', {}, END_SESSION_MS) : undefined)) : Promise.resolve(undefined);
    this.ending = this.ending.then(() => ended).then(() => undefined, () => undefined).then(() => {
      // Ended or not (after the wait the agent may still keep it), the connection goes with the session.
      if (socket && this.socket === socket) {
        this.forget(socket);
        socket.line.terminate();
      }
    });
    return this.ending;
  }

  private leave(member: Member): void {
    if (member.left) return;
    member.left = true;
    this.members.delete(member);
    // Its commands' answers go to nobody now; those that make an id still wait, so what they make is undone when it comes.
    for (const id of [...member.inFlight]) {
      if (!makesIds(this.pending.get(id)?.command.method ?? '')) this.settle(id);
    }
    if (member.sessionId !== null) {
      member.sessionId = null;
      this.undo(member);
    }
    void this.endIfUnheld();
  }

  /** Sends the commands that undo what the client made: the requests only it held go on, then its ids are removed. */
  private undo(member: Member): void {
    for (const command of [...this.blocked.leave(member.ledger), ...member.ledger.undo()]) {
      void this.call(command.method, command.params ?? {}).catch(() => undefined);
    }
  }

  /** A command of the hub's own; its answer (an error when the connection closed first, or at its deadline). */
  private async call(method: string, params: Record<string, unknown>, timeoutMs = this.commandTimeoutMs): Promise<Answer> {
    const socket = await this.connect();
    const id = ++this.nextId;
    let text: string;
    try {
      text = JSON.stringify({ id, method, params });
    } catch {
      return { type: 'error', id, error: 'invalid argument', message: `${method}: the command could not be written out for Firefox` };
    }
    return new Promise<Answer>((resolve) => {
      this.track(id, { member: null, command: { id, method }, chars: 0, answered: resolve }, timeoutMs);
      socket.line.send(text);
    });
  }

  private connect(): Promise<AgentLine> {
    if (this.unreadableWhy !== null) return Promise.reject(new Error(`${UNREADABLE_BROWSER} (${this.unreadableWhy})`));
    if (this.opened) return this.opened;
    const open = this.reader ? this.reader.open.bind(this.reader) : openLine;
    this.opened = new Promise<AgentLine>((resolve, reject) => {
      // Firefox's agent takes only its own address as the Host header; through the relay it would be the socket's.
      const agent: AgentLine = {
        open: false,
        line: open(this.url, { maxPayload: BROWSER_MESSAGE_BYTES, maxDepth: MESSAGE_DEPTH, host: this.host }, {
          open: () => {
            agent.open = true;
            resolve(agent);
          },
          message: (value) => {
            // Whatever came, nothing thrown here reaches the process (decisions.md 78).
            try {
              this.receive(agent, value);
            } catch (error) {
              this.unread(agent, `a message the hub failed on: ${error instanceof Error ? error.message.slice(0, 120) : 'a throw'}`);
            }
          },
          unreadable: (why, exceeded) => this.unread(agent, why, exceeded),
          close: () => {
            reject(new Error('the connection closed'));
            this.lose(agent);
          },
        }),
      };
      this.socket = agent;
    });
    this.opened.catch(() => undefined);
    return this.opened;
  }

  /** Drops `socket` as the hub's connection: a later client opens a new one (a session.new already waiting for it included). */
  private forget(socket: AgentLine): void {
    if (this.socket !== socket) return;
    this.socket = null;
    this.opened = null;
    this.blocked.clear();
    for (const id of [...this.pending.keys()]) this.settle(id)?.answered?.({ type: 'error', id: null, error: 'unknown error', message: 'the browser\'s WebDriver BiDi connection closed' });
  }

  /** The connection closed under the clients (the browser went, or a session would not end): each is told. */
  private lose(socket: AgentLine): void {
    if (this.socket !== socket) return;
    this.forget(socket);
    this.session = null;
    const members = [...this.members];
    this.members.clear();
    for (const member of members) {
      member.left = true;
      member.sessionId = null;
      try {
        member.lost();
      } catch {
        // One client's failing handler does not keep the others from hearing it.
      }
    }
  }

  /**
   * A message of the browser's the hub does not read: dropped and counted. One too deep (its
   * command, when its id can be found, fails) is a page's value, not a broken connection; the rest
   * count against the connection, and at UNREADABLE_LIMIT the hub cuts it and says 'unreadable'.
   */
  private unread(socket: AgentLine, why: string, exceeded?: { id: number | null }): void {
    this.dropped += 1;
    if (exceeded) {
      if (exceeded.id !== null) this.fail(exceeded.id, `Firefox's answer was more than the service reads (${why}); ask for less (serializationOptions.maxObjectDepth)`);
      return;
    }
    this.unreadableSeen += 1;
    if (this.unreadableSeen < UNREADABLE_LIMIT || this.unreadableWhy !== null || this.socket !== socket) return;
    this.unreadableWhy = why;
    // Cut first: the clients are told the connection is gone, and no later session.new opens another.
    socket.line.terminate();
    try {
      this.emit('unreadable', why);
    } catch {
      // A listener's failure is its own.
    }
  }

  private receive(socket: AgentLine, value: Record<string, unknown>): void {
    const shaped = shapeOf(value);
    if (typeof shaped === 'string') return this.unread(socket, shaped);
    if (shaped.kind === 'unrouted') return void (this.dropped += 1);
    if (shaped.kind === 'answer') {
      const { id, message } = shaped;
      // An answer to nothing waiting (given up, or its client gone) is dropped.
      const pending = this.settle(id);
      if (!pending) return;
      if (pending.answered) return pending.answered(message);
      const { member, command } = pending;
      if (!member) return;
      if (message.type === 'success') {
        member.ledger.answered(command, message.result ?? {});
        this.blocked.released(command);
      }
      // Made after its client left or ended its session: undone at once.
      if (member.left || member.sessionId === null) this.undo(member);
      if (!member.left) this.tell(member, JSON.stringify({ ...message, id: command.id }));
      return;
    }
    const { method, params } = shaped;
    const blocked = this.blocked.seen(method, params, [...this.members].map((member) => member.ledger));
    if (blocked?.orphan) void this.call(blocked.orphan.method, blocked.orphan.params ?? {}).catch(() => undefined);
    // Written out once for every client that hears it as it came (the line handed it on read).
    let text: string | undefined;
    for (const member of [...this.members]) {
      if (member.sessionId === null || !member.ledger.hears(method)) continue;
      this.tell(member, blocked ? JSON.stringify({ ...value, params: blocked.view(member.ledger) }) : (text ??= JSON.stringify(value)));
    }
  }
}
