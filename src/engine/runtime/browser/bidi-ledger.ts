// What each client of a Firefox's shared WebDriver BiDi session owns there (bidi-hub.ts,
// decisions.md 169, 170): its subscriptions, preload scripts, network intercepts and data collectors,
// and the user contexts it made. The hub reads a client's commands against it (naming another
// client's ids is refused), records what the browser's answers made, shows each client the network
// events its own intercepts blocked, and, when the client leaves or ends its session, lists the
// commands that undo what it left behind. Every table here is filled by a program or the browser,
// so each has a cap (OWNED_PER_KIND, EVENTS_PER_SUBSCRIPTION, HELD_REQUESTS) and is emptied with its
// owner.

/** A command as the hub forwards it. */
export interface HubCommand {
  id: number;
  method: string;
  params?: Record<string, unknown>;
}

/** How a request blocked by intercepts goes on when nobody who intercepted it is left to say. */
const GOES_ON: Record<string, (request: string) => HubCommand> = {
  'network.beforeRequestSent': (request) => ({ id: 0, method: 'network.continueRequest', params: { request } }),
  'network.responseStarted': (request) => ({ id: 0, method: 'network.continueResponse', params: { request } }),
  'network.authRequired': (request) => ({ id: 0, method: 'network.continueWithAuth', params: { request, action: 'default' } }),
};

/** Commands that act on a blocked request: only a client whose intercept blocked it sends them. */
const ON_BLOCKED_REQUEST = new Set(['network.continueRequest', 'network.continueResponse', 'network.continueWithAuth', 'network.failRequest', 'network.provideResponse']);

/** Ids of one kind a client may hold at once (each is kept here and costs the browser too); Puppeteer makes a few a page. */
export const OWNED_PER_KIND = 1000;
/** Events and modules one subscription may name: BiDi has a few dozen; each name is kept for as long as the subscription. */
export const EVENTS_PER_SUBSCRIPTION = 256;
/** Requests held by intercepts at once, on the browser's session: past it a newly stopped request goes on by itself (a page can start requests without end). */
export const HELD_REQUESTS = 4096;

/** The params the ledger reads of each command's answer: all a command keeps while it waits for Firefox (not a script's source or a response's body). */
const READS: Record<string, string[]> = {
  'session.subscribe': ['events'],
  'session.unsubscribe': ['subscriptions'],
  'script.removePreloadScript': ['script'],
  'network.removeIntercept': ['intercept'],
  'network.removeDataCollector': ['collector'],
  'browser.removeUserContext': ['userContext'],
  ...Object.fromEntries([...ON_BLOCKED_REQUEST].map((method) => [method, ['request']])),
};

/** The commands that make an id, and the kind it is counted in. */
const MAKES: Record<string, (ledger: ClientLedger) => { size: number }> = {
  'session.subscribe': (ledger) => ledger.subscriptions,
  'script.addPreloadScript': (ledger) => ledger.preloadScripts,
  'network.addIntercept': (ledger) => ledger.intercepts,
  'network.addDataCollector': (ledger) => ledger.collectors,
  'browser.createUserContext': (ledger) => ledger.userContexts,
};

/** What of `command` waits for its answer: its id, its method, and the params the ledger reads then. */
export function heldWhileAnswered(command: HubCommand): HubCommand {
  const reads = READS[command.method];
  if (!reads || !command.params) return { id: command.id, method: command.method };
  return { id: command.id, method: command.method, params: Object.fromEntries(reads.filter((name) => name in command.params!).map((name) => [name, command.params![name]])) };
}

/** Whether a command's answer makes an id its client owns (to be undone even when the answer comes after the client left). */
export function makesIds(method: string): boolean {
  return Object.hasOwn(MAKES, method);
}

/** A client's own ids, by kind. */
export class ClientLedger {
  /** Subscription id → the events and modules it names. */
  readonly subscriptions = new Map<string, string[]>();
  readonly preloadScripts = new Set<string>();
  readonly intercepts = new Set<string>();
  readonly collectors = new Set<string>();
  readonly userContexts = new Set<string>();
  private unnamed = 0;

  /** Whether an event of `method` is one this client subscribed to (a context-scoped subscription hears every context: a superset). */
  hears(method: string): boolean {
    for (const events of this.subscriptions.values()) {
      if (events.some((name) => name === method || method.startsWith(`${name}.`))) return true;
    }
    return false;
  }

  /** Why the command may not be sent for this client (it names ids of another), or null. */
  refusal(command: HubCommand, blockedBy: (request: string) => Set<ClientLedger> | undefined): string | null {
    const params = command.params ?? {};
    const kind = MAKES[command.method]?.(this);
    if (kind && kind.size >= OWNED_PER_KIND) return `a program holds at most ${OWNED_PER_KIND} of these at once; remove some first`;
    const own = (value: unknown, ids: { has(id: string): boolean }, what: string) =>
      typeof value === 'string' && !ids.has(value) ? `${what} ${value.slice(0, 60)} is not one this program made` : null;
    switch (command.method) {
      case 'session.subscribe':
        if (Array.isArray(params.events) && params.events.length > EVENTS_PER_SUBSCRIPTION) return `a subscription names at most ${EVENTS_PER_SUBSCRIPTION} events or modules`;
        break;
      case 'session.unsubscribe': {
        if (!Array.isArray(params.subscriptions)) return 'unsubscribe by the ids session.subscribe answered (subscriptions: [...]): events by name would reach other programs\' subscriptions';
        const other = params.subscriptions.find((id) => typeof id === 'string' && !this.subscriptions.has(id));
        return other === undefined ? null : `subscription ${String(other).slice(0, 60)} is not one this program made`;
      }
      case 'script.removePreloadScript':
        return own(params.script, this.preloadScripts, 'preload script');
      case 'network.removeIntercept':
        return own(params.intercept, this.intercepts, 'intercept');
      case 'network.removeDataCollector':
      case 'network.disownData':
      case 'network.getData':
        return own(params.collector, this.collectors, 'data collector');
      case 'browser.removeUserContext':
        return own(params.userContext, this.userContexts, 'user context');
    }
    if (ON_BLOCKED_REQUEST.has(command.method) && typeof params.request === 'string') {
      const owners = blockedBy(params.request);
      if (owners && !owners.has(this)) return `request ${params.request.slice(0, 60)} was stopped by another program's intercept, not this program's`;
    }
    return null;
  }

  /** Records what a successful answer to `command` made or removed. */
  answered(command: HubCommand, result: Record<string, unknown>): void {
    const params = command.params ?? {};
    const made = (value: unknown, ids: Set<string>) => typeof value === 'string' && ids.add(value);
    switch (command.method) {
      case 'session.subscribe': {
        // A Firefox that answers no subscription id still routes the events; its subscription cannot be undone by id.
        const id = typeof result.subscription === 'string' ? result.subscription : `unnamed-${++this.unnamed}`;
        this.subscriptions.set(id, Array.isArray(params.events) ? [...new Set(params.events.filter((name): name is string => typeof name === 'string'))] : []);
        break;
      }
      case 'session.unsubscribe':
        for (const id of Array.isArray(params.subscriptions) ? params.subscriptions : []) this.subscriptions.delete(String(id));
        break;
      case 'script.addPreloadScript':
        made(result.script, this.preloadScripts);
        break;
      case 'script.removePreloadScript':
        this.preloadScripts.delete(String(params.script));
        break;
      case 'network.addIntercept':
        made(result.intercept, this.intercepts);
        break;
      case 'network.removeIntercept':
        this.intercepts.delete(String(params.intercept));
        break;
      case 'network.addDataCollector':
        made(result.collector, this.collectors);
        break;
      case 'network.removeDataCollector':
        this.collectors.delete(String(params.collector));
        break;
      case 'browser.createUserContext':
        made(result.userContext, this.userContexts);
        break;
      case 'browser.removeUserContext':
        this.userContexts.delete(String(params.userContext));
        break;
    }
  }

  /**
   * The commands that undo what the client made, emptying the ledger: its subscriptions, preload
   * scripts, intercepts and collectors, then its user contexts (their tabs close with them).
   */
  undo(): HubCommand[] {
    const commands: HubCommand[] = [];
    const named = [...this.subscriptions.keys()].filter((id) => !id.startsWith('unnamed-'));
    if (named.length > 0) commands.push({ id: 0, method: 'session.unsubscribe', params: { subscriptions: named } });
    for (const script of this.preloadScripts) commands.push({ id: 0, method: 'script.removePreloadScript', params: { script } });
    for (const intercept of this.intercepts) commands.push({ id: 0, method: 'network.removeIntercept', params: { intercept } });
    for (const collector of this.collectors) commands.push({ id: 0, method: 'network.removeDataCollector', params: { collector } });
    for (const userContext of this.userContexts) commands.push({ id: 0, method: 'browser.removeUserContext', params: { userContext } });
    this.subscriptions.clear();
    this.preloadScripts.clear();
    this.intercepts.clear();
    this.collectors.clear();
    this.userContexts.clear();
    return commands;
  }
}

/**
 * Requests held by intercepts, and whose intercepts hold them: each client sees `isBlocked` only
 * for its own intercepts, only they may let a request go on, and a request whose clients all left
 * goes on by itself.
 */
export class BlockedRequests {
  private readonly held = new Map<string, { owners: Set<ClientLedger>; phase: string }>();

  /**
   * Notes a network event; returns, per client, what it should see of it (null: the event as it
   * came), and the command that lets the request go on when no client's intercept holds it (its
   * client left meanwhile).
   */
  seen(method: string, params: Record<string, any>, clients: Iterable<ClientLedger>): { view: (client: ClientLedger) => Record<string, unknown>; orphan: HubCommand | null } | null {
    const request = params.request?.request;
    if (!method.startsWith('network.') || typeof request !== 'string') return null;
    if (params.isBlocked !== true || !Array.isArray(params.intercepts)) {
      if (method === 'network.responseCompleted' || method === 'network.fetchError') this.held.delete(request);
      return null;
    }
    const intercepts = params.intercepts as unknown[];
    const owners = new Set<ClientLedger>();
    for (const client of clients) if (intercepts.some((id) => client.intercepts.has(String(id)))) owners.add(client);
    // Past the cap the request is no client's: every one sees it go on, and it does.
    if (owners.size > 0 && !this.held.has(request) && this.held.size >= HELD_REQUESTS) owners.clear();
    if (owners.size > 0) this.held.set(request, { owners, phase: method });
    const view = (client: ClientLedger) => {
      const mine = owners.has(client) ? intercepts.filter((id) => client.intercepts.has(String(id))) : [];
      if (mine.length > 0) return { ...params, intercepts: mine };
      const { intercepts: _theirs, ...rest } = params;
      return { ...rest, isBlocked: false };
    };
    return { view, orphan: owners.size > 0 ? null : (GOES_ON[method]?.(request) ?? null) };
  }

  /** How many requests are held now. */
  get size(): number {
    return this.held.size;
  }

  /** Forgets every request (the browser's session ended with them). */
  clear(): void {
    this.held.clear();
  }

  owners(request: string): Set<ClientLedger> | undefined {
    return this.held.get(request)?.owners;
  }

  /** A command that let the request go on (answered with success). */
  released(command: HubCommand): void {
    if (ON_BLOCKED_REQUEST.has(command.method) && typeof command.params?.request === 'string') this.held.delete(command.params.request);
  }

  /** The commands that let go the requests only `client` held; it is no longer among the owners of the rest. */
  leave(client: ClientLedger): HubCommand[] {
    const commands: HubCommand[] = [];
    for (const [request, { owners, phase }] of this.held) {
      if (!owners.delete(client) || owners.size > 0) continue;
      this.held.delete(request);
      const goOn = GOES_ON[phase];
      if (goOn) commands.push(goOn(request));
    }
    return commands;
  }
}
