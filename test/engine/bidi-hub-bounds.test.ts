// The BiDi hub against strangers' bytes (issue 53), with a fake Firefox agent (a `ws` server on
// 127.0.0.1) in place of the real one: what the browser's end writes that is not a BiDi message never
// reaches the process, and the third ends the hub's trust in it ('unreadable'); a program's command
// nested 500,000 deep is refused and recorded nowhere; commands Firefox never answers are answered
// at their deadline and forgotten when their client leaves; and the tables a client fills are capped.
import { EventEmitter, once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { carryBiDi } from '../../src/engine/channels/automation/carry-bidi.js';
import { BiDiHub, IN_FLIGHT_LIMIT, UNREADABLE_LIMIT } from '../../src/engine/runtime/browser/bidi-hub.js';
import { BrowserReader } from '../../src/engine/runtime/browser/browser-reader.js';
import { HELD_REQUESTS } from '../../src/engine/runtime/browser/bidi-ledger.js';
import { watchSession } from '../../src/engine/runtime/session/runtime-events.js';

interface Received {
  id: number;
  method: string;
  params: Record<string, any>;
}

/** Firefox's remote agent as far as the hub sees it: answers what it is sent, except the methods it is told to leave unanswered. */
class FakeAgent extends EventEmitter {
  readonly received: Received[] = [];
  /** Methods this agent never answers (the test answers them itself, late, if at all). */
  readonly silent = new Set<string>();
  /** What an answer's result is, by method (default: `{}`). */
  readonly results = new Map<string, (command: Received) => Record<string, unknown>>();
  connection: WebSocket | null = null;
  private made = 0;

  private constructor(private readonly server: WebSocketServer) {
    super();
    server.on('connection', (socket) => {
      this.connection = socket;
      socket.on('message', (data) => {
        const command = JSON.parse(String(data)) as Received;
        this.received.push(command);
        this.emit('command', command);
        if (!this.silent.has(command.method)) this.answer(command.id, this.resultOf(command));
      });
    });
  }

  static async start(): Promise<FakeAgent> {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(server, 'listening');
    return new FakeAgent(server);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}/session`;
  }

  get host(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private resultOf(command: Received): Record<string, unknown> {
    const made = `${++this.made}`;
    switch (command.method) {
      case 'session.new':
        return { sessionId: 'agent-session', capabilities: { browserName: 'firefox' } };
      case 'session.subscribe':
        return { subscription: `subscription-${made}` };
      case 'network.addIntercept':
        return { intercept: `intercept-${made}` };
      case 'browser.createUserContext':
        return { userContext: `context-${made}` };
    }
    return this.results.get(command.method)?.(command) ?? {};
  }

  answer(id: number, result: Record<string, unknown>): void {
    this.write(JSON.stringify({ type: 'success', id, result }));
  }

  /** Writes `text` into the hub's connection as the browser's end would. */
  write(text: string): void {
    this.connection?.send(text);
  }

  /** The first command received that matches, waiting for it if need be. */
  next(match: (command: Received) => boolean): Promise<Received> {
    const seen = this.received.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const listener = (command: Received) => {
        if (!match(command)) return;
        this.off('command', listener);
        resolve(command);
      };
      this.on('command', listener);
    });
  }

  /** Resolves once `count` commands of `method` have come. */
  async counted(method: string, count: number): Promise<void> {
    while (this.received.filter((command) => command.method === method).length < count) await once(this, 'command');
  }

  close(): Promise<void> {
    for (const socket of this.server.clients) socket.terminate();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A client of the hub, as a program or the tab watcher is: every answer and event it hears, and whether it was told the connection was lost. */
function clientOf(hub: BiDiHub) {
  const heard: any[] = [];
  const events = new EventEmitter();
  let lost = false;
  const client = hub.join((text) => {
    const message = JSON.parse(text);
    heard.push(message);
    events.emit('message', message);
  }, () => {
    lost = true;
    events.emit('lost');
  });
  let nextId = 0;
  const heardOne = (match: (message: any) => boolean): Promise<any> => {
    const seen = heard.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const listener = (message: any) => {
        if (!match(message)) return;
        events.off('message', listener);
        resolve(message);
      };
      events.on('message', listener);
    });
  };
  return {
    heard,
    get lost() {
      return lost;
    },
    lostNow: () => (lost ? Promise.resolve() : once(events, 'lost').then(() => undefined)),
    send: (method: string, params: Record<string, unknown> = {}, id = ++nextId) => (client.send({ id, method, params }), id),
    /** Sends a command and waits for its answer. */
    call: (method: string, params: Record<string, unknown> = {}) => {
      const id = ++nextId;
      client.send({ id, method, params });
      return heardOne((message) => message.id === id);
    },
    sendRaw: (command: any) => client.send(command),
    heardOne,
    leave: () => client.leave(),
  };
}

/** `depth` arrays, one inside the next: 500,000 is a 1 MB text. */
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

let agent: FakeAgent;
const cleanups: Array<() => unknown> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await agent?.close();
});

async function started(options?: ConstructorParameters<typeof BiDiHub>[2]) {
  agent = await FakeAgent.start();
  const hub = new BiDiHub(agent.url, agent.host, options);
  return hub;
}

async function withSession(hub: BiDiHub) {
  const client = clientOf(hub);
  cleanups.push(() => client.leave());
  expect(await client.call('session.new', { capabilities: {} })).toMatchObject({ type: 'success', result: { sessionId: expect.any(String) } });
  return client;
}

/** A program's command whose answer is nested past what the hub reads fails alone: the connection and the program go on. */
async function failsOnlyTheDeepAnswer(hub: BiDiHub): Promise<void> {
  const one = await withSession(hub);
  agent.silent.add('script.evaluate');
  const asked = agent.next((command) => command.method === 'script.evaluate');
  const answer = one.call('script.evaluate', { expression: 'deep', awaitPromise: false, target: { context: 'c' } });
  const { id } = await asked;
  agent.write(`{"type":"success","id":${id},"result":{"value":${nested(600)}}}`);
  expect(await answer).toMatchObject({ type: 'error', error: 'unknown error', message: expect.stringContaining('nested deeper than 512 levels') });
  expect(hub.pendingCount()).toBe(0);
  expect(hub.unreadable).toBeNull();
  expect(await one.call('browsingContext.getTree')).toMatchObject({ type: 'success' });
}

describe('the BiDi hub, when the browser\'s end writes what is not a BiDi message', { timeout: 20_000 }, () => {
  const odd = [
    ['null', 'not a JSON object'],
    ['{"id":1', 'not JSON'],
    ['7', 'not a JSON object'],
    ['[]', 'not a JSON object'],
    ['"text"', 'not a JSON object'],
    ['{}', 'without a type'],
    ['{"type":"success","id":"x"}', 'id is not an integer'],
    ['{"type":"success","id":-4}', 'id is not an integer'],
    ['{"type":"success","id":1.5}', 'id is not an integer'],
    ['{"type":"success","id":1,"result":null}', 'result is not an object'],
    ['{"type":"success","id":1,"result":[1]}', 'result is not an object'],
    ['{"type":"event","method":"log.entryAdded","params":null}', 'params are not an object'],
    ['{"type":"event","method":7}', 'event without a method'],
    ['{"type":"event"}', 'event without a method'],
    ['{"type":7,"id":1}', 'without a type'],
    ['{"type":"greeting","id":1}', 'of type greeting'],
  ] as const;

  it('drops each kind and counts it while the process and every client go on, and names it when the hub stops trusting the connection', async () => {
    for (const [text, why] of odd) {
      const hub = await started();
      const one = await withSession(hub);
      const other = await withSession(hub);
      // Subscribed, so a malformed event would have somewhere to go.
      await one.call('session.subscribe', { events: ['log'] });
      agent.write(text);
      // The next answer comes after the odd message on the same connection: by then it was read.
      expect(await one.call('browsingContext.getTree'), text).toMatchObject({ type: 'success' });
      expect(await other.call('browsingContext.getTree'), text).toMatchObject({ type: 'success' });
      expect(hub.droppedCount(), text).toBe(1);
      expect(hub.unreadable, text).toBeNull();
      expect(one.heard.some((message) => message.type === 'event'), text).toBe(false);
      const saidNow = once(hub, 'unreadable');
      for (let i = 1; i < UNREADABLE_LIMIT; i++) agent.write(text);
      expect((await saidNow)[0], text).toContain(why);
      await Promise.all([one.lostNow(), other.lostNow()]);
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
      await agent.close();
    }
  });

  it(`at the ${UNREADABLE_LIMIT}rd cuts the connection, tells its clients and says why, and opens no other`, async () => {
    const hub = await started();
    const said: string[] = [];
    hub.on('unreadable', (reason) => said.push(reason));
    const one = await withSession(hub);
    const other = await withSession(hub);
    agent.write('null');
    agent.write('{"id":1');
    expect(await one.call('browsingContext.getTree')).toMatchObject({ type: 'success' });
    expect(said).toEqual([]);
    const saidNow = once(hub, 'unreadable');
    agent.write('{"type":"success","id":"x"}');
    expect(await saidNow).toEqual(['an answer whose id is not an integer']);
    expect(hub.unreadable).toBe('an answer whose id is not an integer');
    await Promise.all([one.lostNow(), other.lostNow()]);
    // The session is ending: a later client is not let in on a connection the hub no longer trusts.
    const late = clientOf(hub);
    cleanups.push(() => late.leave());
    expect(await late.call('session.new', { capabilities: {} })).toMatchObject({ type: 'error', error: 'session not created', message: expect.stringContaining('could not read') });
    expect(said).toHaveLength(1);
  });

  it('ends the session through the runtime\'s events, saying the browser sent what the service could not read', async () => {
    const hub = await started();
    const reports: Array<[string, string]> = [];
    const never = new Promise<never>(() => undefined);
    watchSession({
      id: 'r1', browserName: 'Firefox ESR', browser: { process: { exited: never }, bidi: { hub } } as never,
      display: { server: { exited: never } } as never, control: null, tabs: null, egress: new EventEmitter() as never, sound: null,
    }, (kind, message) => reports.push([kind, message]));
    await withSession(hub);
    for (let i = 0; i < UNREADABLE_LIMIT; i++) agent.write('not json');
    await once(hub, 'unreadable');
    expect(reports).toEqual([['unreadable', 'the session\'s browser sent what the service could not read (a message that is not JSON)']]);
  });

  it('fails only the command whose answer is nested deeper than it reads, and keeps the connection', async () => {
    await failsOnlyTheDeepAnswer(await started());
  });
});

describe('the BiDi hub read in the session\'s reader worker (browser-reader.ts), as a Firefox session\'s is', { timeout: 20_000 }, () => {
  async function inReader() {
    const reader = new BrowserReader();
    cleanups.push(() => reader.stop());
    return started({ reader });
  }

  it(`at the ${UNREADABLE_LIMIT}rd unreadable message cuts the connection, tells its clients and says why`, async () => {
    const hub = await inReader();
    const one = await withSession(hub);
    agent.write('null');
    agent.write('{"id":1');
    expect(await one.call('browsingContext.getTree')).toMatchObject({ type: 'success' });
    const saidNow = once(hub, 'unreadable');
    agent.write('{"type":"success","id":"x"}');
    expect(await saidNow).toEqual(['an answer whose id is not an integer']);
    await one.lostNow();
  });

  it('fails only the command whose answer is nested deeper than it reads, and keeps the connection', async () => {
    await failsOnlyTheDeepAnswer(await inReader());
  });

  it('ends when its reader does, saying why, and the process goes on', async () => {
    const reader = new BrowserReader();
    cleanups.push(() => reader.stop());
    const hub = await started({ reader });
    const one = await withSession(hub);
    // A fault in the worker itself, as the reader's own test makes one (a message its protocol does not hold).
    (reader as unknown as { worker: { postMessage(message: unknown): void } }).worker.postMessage({ type: 'nonsense' });
    await one.lostNow();
    expect(reader.failure).toMatch(/^the session's reader ended/);
  });
});

describe('the BiDi hub, when a program sends a command nested 500,000 deep', { timeout: 20_000 }, () => {
  it('answers the program with a BiDi error through the automation channel, and records nothing', async () => {
    const hub = await started();
    const holder = await withSession(hub);
    const programs = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(programs, 'listening');
    cleanups.push(() => new Promise((resolve) => programs.close(resolve)));
    const folders = { downloads: '/session/downloads', uploads: '/session/uploads' };
    programs.on('connection', (socket) => void carryBiDi(socket, { url: agent.url, host: agent.host, folders, join: (deliver, lost) => hub.join(deliver, lost) }));
    const program = new WebSocket(`ws://127.0.0.1:${(programs.address() as AddressInfo).port}/`);
    cleanups.push(() => program.terminate());
    await once(program, 'open');
    const answers = new EventEmitter();
    program.on('message', (data) => {
      const message = JSON.parse(String(data));
      answers.emit(String(message.id), message);
    });
    const answerTo = (id: number) => once(answers, String(id)).then(([message]) => message);
    program.send(JSON.stringify({ id: 1, method: 'session.new', params: { capabilities: {} } }));
    expect(await answerTo(1)).toMatchObject({ type: 'success' });
    const sentBefore = agent.received.length;
    const deep = `{"id":2,"method":"script.evaluate","params":{"expression":"1","awaitPromise":false,"target":{"context":"c"},"arguments":${nested(500_000)}}}`;
    expect(deep.length).toBeGreaterThan(1_000_000);
    program.send(deep);
    expect(await answerTo(2)).toEqual({ type: 'error', id: 2, error: 'invalid argument', message: expect.stringContaining('a message nested deeper than 512 levels') });
    expect(hub.pendingCount()).toBe(0);
    // Its id is found even when nothing of it can be read.
    program.send(`{"id":3,"method":"script.evaluate","params":${nested(1000)}`);
    expect(await answerTo(3)).toMatchObject({ type: 'error', id: 3, error: 'invalid argument' });
    program.send(JSON.stringify({ id: 4, method: 'browsingContext.getTree', params: {} }));
    expect(await answerTo(4)).toMatchObject({ type: 'success' });
    expect(agent.received.slice(sentBefore).map((command) => command.method)).toEqual(['browsingContext.getTree']);
    expect(await holder.call('browsingContext.getTree')).toMatchObject({ type: 'success' });
  });

  it('refuses one the hub cannot write out, before it is recorded as waiting', async () => {
    const hub = await started();
    const one = await withSession(hub);
    // Read by JSON.parse (which nests without limit), as a client's command before the channel measured it.
    one.sendRaw({ id: 9, method: 'script.evaluate', params: { arguments: JSON.parse(nested(500_000)) } });
    expect(await one.heardOne((message) => message.id === 9)).toMatchObject({ type: 'error', error: 'invalid argument', message: expect.stringContaining('could not be written out') });
    expect(hub.pendingCount()).toBe(0);
    expect(await one.call('browsingContext.getTree')).toMatchObject({ type: 'success' });
  });
});

describe('the BiDi hub\'s tables', { timeout: 20_000 }, () => {
  it('answers a command Firefox never answers at its deadline, forgets it, and drops the late answer', async () => {
    const hub = await started({ commandTimeoutMs: 300 });
    const one = await withSession(hub);
    agent.silent.add('browsingContext.print');
    const asked = agent.next((command) => command.method === 'browsingContext.print');
    const answer = one.call('browsingContext.print', { context: 'c' });
    const { id } = await asked;
    expect(hub.pendingCount()).toBe(1);
    expect(await answer).toMatchObject({ type: 'error', error: 'unknown error', message: 'browsingContext.print: Firefox did not answer within 0.3 s; the command is given up' });
    expect(hub.pendingCount()).toBe(0);
    agent.answer(id, { data: 'late' });
    expect(await one.call('browsingContext.getTree')).toMatchObject({ type: 'success' });
    expect(one.heard.filter((message) => message.result?.data === 'late')).toEqual([]);
  });

  it('forgets a leaving client\'s commands at once; what one of them made is still undone when its answer comes', async () => {
    const hub = await started();
    const stays = await withSession(hub);
    const leaves = await withSession(hub);
    agent.silent.add('browsingContext.print');
    agent.silent.add('browser.createUserContext');
    // In steps, as the hub's chain of a client's commands holds 256.
    for (const sent of [150, 300]) {
      for (let i = 0; i < 150; i++) leaves.send('browsingContext.print', { context: 'c' });
      await agent.counted('browsingContext.print', sent);
    }
    leaves.send('browser.createUserContext');
    const made = await agent.next((command) => command.method === 'browser.createUserContext');
    expect(hub.pendingCount()).toBe(301);
    leaves.leave();
    expect(hub.pendingCount()).toBe(1);
    for (const command of agent.received.filter((c) => c.method === 'browsingContext.print')) agent.answer(command.id, {});
    agent.answer(made.id, { userContext: 'made-late' });
    expect(await agent.next((command) => command.method === 'browser.removeUserContext')).toMatchObject({ params: { userContext: 'made-late' } });
    expect(await stays.call('browsingContext.getTree')).toMatchObject({ type: 'success' });
    expect(stays.heard.filter((message) => message.type === 'success')).toHaveLength(2);
    expect(leaves.heard.filter((message) => message.type === 'success')).toHaveLength(1);
  });

  it(`answers a client's command past ${IN_FLIGHT_LIMIT} waiting with an error, and lets the others through`, async () => {
    const hub = await started();
    const busy = await withSession(hub);
    const other = await withSession(hub);
    agent.silent.add('browsingContext.print');
    // In steps, as the hub's chain of a client's commands holds 256.
    for (let sent = 0; sent < IN_FLIGHT_LIMIT; sent += 128) {
      for (let i = 0; i < 128; i++) busy.send('browsingContext.print', { context: 'c' });
      await agent.counted('browsingContext.print', sent + 128);
    }
    expect(await busy.call('browsingContext.print', { context: 'c' })).toMatchObject({ type: 'error', error: 'unknown error', message: expect.stringContaining(`${IN_FLIGHT_LIMIT} commands of this connection wait`) });
    expect(hub.pendingCount()).toBe(IN_FLIGHT_LIMIT);
    expect(await other.call('browsingContext.getTree')).toMatchObject({ type: 'success' });
    busy.leave();
    expect(hub.pendingCount()).toBe(0);
  });

  it(`holds at most ${HELD_REQUESTS} requests for intercepts; past it a request goes on by itself`, async () => {
    const hub = await started();
    const one = await withSession(hub);
    await one.call('session.subscribe', { events: ['network'] });
    const { result } = await one.call('network.addIntercept', { phases: ['beforeRequestSent'] });
    const blocked = (request: string) => JSON.stringify({ type: 'event', method: 'network.beforeRequestSent', params: { isBlocked: true, intercepts: [result.intercept], request: { request } } });
    for (let i = 0; i < HELD_REQUESTS + 3; i++) agent.write(blocked(`request-${i}`));
    const goesOn = await agent.next((command) => command.method === 'network.continueRequest');
    expect(goesOn.params).toEqual({ request: `request-${HELD_REQUESTS}` });
    await agent.counted('network.continueRequest', 3);
    expect(hub.heldCount()).toBe(HELD_REQUESTS);
    const heard = await one.heardOne((message) => message.params?.request?.request === `request-${HELD_REQUESTS + 2}`);
    expect(heard.params).toMatchObject({ isBlocked: false });
    expect(heard.params.intercepts).toBeUndefined();
  });

  it('refuses a subscription naming more events than BiDi has', async () => {
    const hub = await started();
    const one = await withSession(hub);
    const events = Array.from({ length: 300 }, (_, i) => `log.entry${i}`);
    expect(await one.call('session.subscribe', { events })).toMatchObject({ type: 'error', error: 'invalid argument', message: expect.stringContaining('at most 256 events') });
  });
});

describe('the automation channel\'s BiDi carrier', { timeout: 20_000 }, () => {
  it('ends only the program\'s connection (1011) when handling its message fails', async () => {
    const programs = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(programs, 'listening');
    cleanups.push(() => new Promise((resolve) => programs.close(resolve)));
    const folders = { downloads: '/session/downloads', uploads: '/session/uploads' };
    const failing = { send: () => { throw new Error('a defect'); }, leave: () => undefined };
    programs.on('connection', (socket) => void carryBiDi(socket, { url: 'ws://127.0.0.1:1/', host: '127.0.0.1:1', folders, join: () => failing }));
    const program = new WebSocket(`ws://127.0.0.1:${(programs.address() as AddressInfo).port}/`);
    cleanups.push(() => program.terminate());
    await once(program, 'open');
    const closed = once(program, 'close');
    program.send(JSON.stringify({ id: 1, method: 'browsingContext.getTree', params: {} }));
    const [code, reason] = await closed;
    expect(code).toBe(1011);
    expect(String(reason)).toContain('failed on a message');
  });
});
