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
import { randomUUID } from 'node:crypto';
import { WebSocket } from 'ws';
import { BlockedRequests, ClientLedger, type HubCommand } from './bidi-ledger.js';

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
const BROWSER_MESSAGE_BYTES = 256 * 1024 * 1024;

type Answer = { type: 'success'; id: number; result?: Record<string, unknown> } | { type: 'error'; id: number | null; error: string; message: string; stacktrace?: string };

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
  left: boolean;
}

interface Pending {
  /** Whose command it is; null for the hub's own (answered through `answered`). */
  member: Member | null;
  command: HubCommand;
  answered?: (answer: Answer) => void;
}

export class BiDiHub {
  private readonly members = new Set<Member>();
  private readonly pending = new Map<number, Pending>();
  private readonly blocked = new BlockedRequests();
  private socket: WebSocket | null = null;
  private opened: Promise<WebSocket> | null = null;
  private nextId = 0;
  /** The browser's session: its session.new's answer, once asked; null when none is open or opening. */
  private session: Promise<Answer> | null = null;
  /** Clients whose session.new waits for the browser's session: it does not end meanwhile. */
  private openers = 0;
  /** The browser's last session ending: a new one opens after it. */
  private ending: Promise<void> = Promise.resolve();

  /** `url` and `host`: the agent's WebSocket address and the Host header it takes (browser.ts). */
  constructor(private readonly url: string, private readonly host: string) {}

  /** A new client: `deliver` hears its answers and events, `lost` that the browser's connection closed under it. */
  join(deliver: (text: string) => void, lost: () => void): BiDiHubClient {
    const member: Member = { ledger: new ClientLedger(), deliver, lost, sessionId: null, chain: Promise.resolve(), waiting: 0, left: false };
    this.members.add(member);
    return {
      send: (command) => {
        if (member.waiting >= WAITING_LIMIT) return false;
        member.waiting += 1;
        member.chain = member.chain.then(() => this.handle(member, command)).catch(() => undefined).then(() => void (member.waiting -= 1));
        return true;
      },
      leave: () => this.leave(member),
    };
  }

  /** How many clients hold a session on the browser's one now. */
  holders(): number {
    return [...this.members].filter((member) => member.sessionId !== null).length;
  }

  private async handle(member: Member, command: HubCommand): Promise<void> {
    if (member.left) return;
    const reply = (body: Record<string, unknown>) => member.deliver(JSON.stringify({ ...body, id: command.id }));
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
    if (!socket || socket.readyState !== WebSocket.OPEN) return error('unknown error', `${command.method}: the browser's WebDriver BiDi connection is closed`);
    const id = ++this.nextId;
    this.pending.set(id, { member, command });
    socket.send(JSON.stringify({ ...command, id }));
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
        socket.terminate();
      }
    });
    return this.ending;
  }

  private leave(member: Member): void {
    if (member.left) return;
    member.left = true;
    this.members.delete(member);
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

  /** A command of the hub's own; its answer (an error when the connection closed first, or `timeout`). */
  private async call(method: string, params: Record<string, unknown>, timeoutMs?: number): Promise<Answer> {
    const socket = await this.connect();
    const id = ++this.nextId;
    return new Promise<Answer>((resolve) => {
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => {
        this.pending.delete(id);
        resolve({ type: 'error', id, error: 'timeout', message: `${method}: no answer from Firefox` });
      }, timeoutMs);
      this.pending.set(id, { member: null, command: { id, method, params }, answered: (answer) => (clearTimeout(timer), resolve(answer)) });
      socket.send(JSON.stringify({ id, method, params }));
    });
  }

  private connect(): Promise<WebSocket> {
    if (this.opened) return this.opened;
    // Firefox's agent takes only its own address as the Host header; through the relay it would be the socket's.
    const socket = new WebSocket(this.url, { perMessageDeflate: false, maxPayload: BROWSER_MESSAGE_BYTES, headers: { host: this.host } });
    this.socket = socket;
    this.opened = new Promise<WebSocket>((resolve, reject) => {
      socket.once('open', () => resolve(socket));
      socket.once('close', () => reject(new Error('the connection closed')));
    });
    this.opened.catch(() => undefined);
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) this.receive(data.toString('utf8'));
    });
    socket.on('error', () => undefined);
    socket.on('close', () => this.lose(socket));
    return this.opened;
  }

  /** Drops `socket` as the hub's connection: a later client opens a new one (a session.new already waiting for it included). */
  private forget(socket: WebSocket): void {
    if (this.socket !== socket) return;
    this.socket = null;
    this.opened = null;
    this.blocked.clear();
    for (const [, pending] of this.pending) pending.answered?.({ type: 'error', id: null, error: 'unknown error', message: 'the browser\'s WebDriver BiDi connection closed' });
    this.pending.clear();
  }

  /** The connection closed under the clients (the browser went, or a session would not end): each is told. */
  private lose(socket: WebSocket): void {
    if (this.socket !== socket) return;
    this.forget(socket);
    this.session = null;
    const members = [...this.members];
    this.members.clear();
    for (const member of members) {
      member.left = true;
      member.sessionId = null;
      member.lost();
    }
  }

  private receive(text: string): void {
    let message: { id?: unknown; type?: unknown; method?: unknown; params?: Record<string, any>; result?: Record<string, unknown> };
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof message.id === 'number') {
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      if (pending.answered) return pending.answered(message as Answer);
      const { member, command } = pending;
      if (!member) return;
      if (message.type === 'success') {
        member.ledger.answered(command, message.result ?? {});
        this.blocked.released(command);
      }
      // Made after its client left or ended its session: undone at once.
      if (member.left || member.sessionId === null) this.undo(member);
      if (!member.left) member.deliver(JSON.stringify({ ...message, id: command.id }));
      return;
    }
    if (message.type !== 'event' || typeof message.method !== 'string') return;
    const { method } = message;
    const blocked = this.blocked.seen(method, message.params ?? {}, [...this.members].map((member) => member.ledger));
    if (blocked?.orphan) void this.call(blocked.orphan.method, blocked.orphan.params ?? {}).catch(() => undefined);
    for (const member of this.members) {
      if (member.sessionId === null || !member.ledger.hears(method)) continue;
      member.deliver(blocked ? JSON.stringify({ ...message, params: blocked.view(member.ledger) }) : text);
    }
  }
}
