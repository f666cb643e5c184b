// The remote browser's tabs through any node of a cluster (issue 36, decisions.md 117): the tabs
// live in the runtime of the node that runs the session; a node a share link reached that does not
// run it asks the owner over the node link (node-link.ts `call`; its routes in node-routes.ts's table):
// `GET /internal/v1/sessions/<id>/tabs` for the list, `POST` the same path for an action whose
// rights were checked where the request arrived. A list fetched is shared by every reader of the
// node for a moment (one fetch per change per node, however many watch). While another node's
// event streams follow a session, that node holds a lease on it at the owner (`?watch=1`, renewed);
// the owner then keeps which tab is on screen current and tells each change of the tabs to every
// node (a Postgres NOTIFY naming the session), whose streams read the state again.
import type { ServerResponse } from 'node:http';
import { isShareTab, parseTabAction, type ShareTab, type TabAction } from '../../protocol/index.js';
import { sendJson } from '../http/respond.js';
import { sessionOwner } from '../store/owner.js';
import type { SessionRow, Store } from '../store/store.js';
import type { TabOutcome, TabsAccess, TabsFollower } from '../viewer/share-tabs.js';
import type { NodeLink } from './node-link.js';
import type { NodeRoute } from './node-routes.js';

/** Where the owner tells that a session's tabs changed: `{node, id}`, the list is fetched. */
const CHANGED_CHANNEL = 'rbk_session_tabs';
const CALL_TIMEOUT_MS = 5_000;
/** How long a list fetched from the owner answers this node's readers. */
const FRESH_MS = 1_000;
/** How long the owner keeps telling a session's changes after a node last asked it to. */
const LEASE_MS = 60_000;
/** How often a node whose streams follow a session renews its lease (and reads the list again, in case a message was missed). */
const RENEW_MS = 20_000;
/** Changes of one session told at most this often (a page that loads changes its title and icon in a burst). */
const TELL_MS = 50;

export interface TabsLinkOptions {
  /** The node link: its signed calls out. */
  link: Pick<NodeLink, 'callJson'>;
  store: Pick<Store, 'session' | 'database'>;
  nodeId: string;
  /** The tabs of the sessions this node runs (viewer/share-tabs.ts `tabsHere`). */
  here: TabsAccess;
  /** The clock for how fresh a fetched list is. */
  now?: () => number;
}

/** A session another node runs, followed by event streams here. */
interface Followed {
  owner: string;
  row: SessionRow;
  listeners: Set<() => void>;
  renewal: NodeJS.Timeout;
  /** The tabs the owner last gave (undefined: none yet, the session may still be starting). */
  told: string | undefined;
  /** A renewal under way, and when the last one began. */
  renewing: Promise<void> | null;
  renewedAt: number;
}

/** A session of this node another node follows: its tabs watched, its changes told, until the lease runs out. */
interface Lease {
  follower: TabsFollower;
  expiry: NodeJS.Timeout;
  telling: NodeJS.Timeout | undefined;
}

export class TabsLink {
  private readonly fetched = new Map<string, { at: number; tabs: Promise<ShareTab[] | undefined> }>();
  private readonly followed = new Map<string, Followed>();
  private readonly leases = new Map<string, Lease>();
  private readonly now: () => number;

  constructor(private readonly options: TabsLinkOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Hears the owners' messages that a session's tabs changed. */
  async start(): Promise<void> {
    await this.options.store.database.listen(CHANGED_CHANNEL, (payload) => this.heard(payload));
  }

  close(): void {
    for (const followed of this.followed.values()) clearInterval(followed.renewal);
    this.followed.clear();
    for (const id of [...this.leases.keys()]) this.endLease(id);
  }

  /** The tabs as the share API reaches them: here, or through the node that runs the session. */
  get access(): TabsAccess {
    const { here, nodeId } = this.options;
    const ownerOf = (row: SessionRow) => {
      const owner = sessionOwner(row, nodeId);
      return owner.at === 'node' ? owner.nodeId : null;
    };
    return {
      list: (row) => {
        const owner = ownerOf(row);
        return owner ? this.list(owner, row.id) : here.list(row);
      },
      follow: (row, onChange) => {
        const owner = ownerOf(row);
        return owner ? this.follow(owner, row, onChange) : here.follow(row, onChange);
      },
      act: (row, action) => {
        const owner = ownerOf(row);
        return owner ? this.act(owner, row.id, action) : here.act(row, action);
      },
    };
  }

  // On a node that does not run the session ------------------------------------------------------

  /** The owner's list, fetched once for every reader here while fresh (or until the owner tells a change). */
  private list(owner: string, sessionId: string, watch = false): Promise<ShareTab[] | undefined> {
    const cached = this.fetched.get(sessionId);
    if (cached && !watch && this.now() - cached.at < FRESH_MS) return cached.tabs;
    return this.remember(sessionId, this.fetch(owner, sessionId, watch));
  }

  /** Keeps a list for this node's readers while it is fresh, and no longer (ended sessions leave nothing behind). */
  private remember(sessionId: string, tabs: Promise<ShareTab[] | undefined>): Promise<ShareTab[] | undefined> {
    const entry = { at: this.now(), tabs };
    this.fetched.set(sessionId, entry);
    setTimeout(() => {
      if (this.fetched.get(sessionId) === entry) this.fetched.delete(sessionId);
    }, FRESH_MS).unref();
    return tabs;
  }

  private async fetch(owner: string, sessionId: string, watch: boolean): Promise<ShareTab[] | undefined> {
    const answer = await this.json<{ status?: string; tabs?: unknown }>(owner, 'GET', `/internal/v1/sessions/${sessionId}/tabs${watch ? '?watch=1' : ''}`);
    return answer?.status === 'ok' && Array.isArray(answer.tabs) ? answer.tabs.filter(isShareTab) : undefined;
  }

  private follow(owner: string, row: SessionRow, onChange: () => void): TabsFollower {
    let followed = this.followed.get(row.id);
    if (!followed) {
      const created: Followed = { owner, row, listeners: new Set(), told: undefined, renewing: null, renewedAt: 0, renewal: setInterval(() => void this.renew(created), RENEW_MS) };
      created.renewal.unref();
      this.followed.set(row.id, created);
      followed = created;
      void this.renew(created);
    }
    const entry = followed;
    entry.listeners.add(onChange);
    let stopped = false;
    return {
      // The session's status moved: a session that had no tabs yet (starting) may have them now
      // (asked at most once a moment, however many streams follow it here).
      retry: () => {
        if (!stopped && entry.told === undefined && this.now() - entry.renewedAt >= FRESH_MS) void this.renew(entry);
      },
      stop: () => {
        if (stopped) return;
        stopped = true;
        entry.listeners.delete(onChange);
        if (entry.listeners.size > 0 || this.followed.get(row.id) !== entry) return;
        clearInterval(entry.renewal);
        this.followed.delete(row.id);
      },
    };
  }

  /** Renews the lease at the owner; a list that differs from the last one (a message missed) is told here. */
  private renew(followed: Followed): Promise<void> {
    followed.renewedAt = this.now();
    followed.renewing ??= (async () => {
      const tabs = await this.list(followed.owner, followed.row.id, true);
      const text = tabs && JSON.stringify(tabs);
      if (text === followed.told) return;
      followed.told = text;
      for (const listener of followed.listeners) listener();
    })().finally(() => (followed.renewing = null));
    return followed.renewing;
  }

  private async act(owner: string, sessionId: string, action: TabAction): Promise<TabOutcome> {
    const answer = await this.json<TabOutcome>(owner, 'POST', `/internal/v1/sessions/${sessionId}/tabs`, JSON.stringify(action));
    if (!answer || (answer.status !== 'ok' && answer.status !== 'denied' && answer.status !== 'error')) {
      return { status: 'error', code: 503, message: 'the node that runs this session did not answer; try again in a few seconds' };
    }
    if (answer.status !== 'ok') return { status: answer.status, code: Number(answer.code) || 502, message: String(answer.message) };
    const tabs = Array.isArray(answer.tabs) ? answer.tabs.filter(isShareTab) : [];
    // The streams here tell the change at once; the owner's message reaches the other nodes.
    void this.remember(sessionId, Promise.resolve(tabs));
    for (const listener of this.followed.get(sessionId)?.listeners ?? []) listener();
    return { status: 'ok', tabs };
  }

  /** The owner said a session's tabs changed: the next read fetches, and the streams here read again. */
  private heard(payload: string): void {
    let message: { node?: unknown; id?: unknown };
    try {
      message = JSON.parse(payload) as typeof message;
    } catch {
      return;
    }
    if (typeof message.id !== 'string' || message.node === this.options.nodeId) return;
    this.fetched.delete(message.id);
    for (const listener of this.followed.get(message.id)?.listeners ?? []) listener();
  }

  /** A JSON call to the owner, its answer, or undefined when it could not be reached. */
  private async json<T>(owner: string, method: 'GET' | 'POST', path: string, body = ''): Promise<T | undefined> {
    return (await this.options.link.callJson<T>(owner, method, path, body, CALL_TIMEOUT_MS))?.body;
  }

  // On the node that runs the session ---------------------------------------------------------------

  /** Its routes on the node link (node-routes.ts, which checks each call's signature): the owner's side. */
  get routes(): NodeRoute[] {
    /** The session, if it runs here; else the refusal is sent. */
    const ownRow = async (id: string, response: ServerResponse): Promise<SessionRow | undefined> => {
      const row = await this.options.store.session(id);
      if (row && sessionOwner(row, this.options.nodeId).at === 'here') return row;
      sendJson(response, { status: 'denied', code: 409, message: 'the session does not run on the node it was asked of; try again in a few seconds' });
      return undefined;
    };
    return [
      {
        method: 'GET', path: 'sessions/:id/tabs', body: 'none',
        answer: async ({ id, url }, response) => {
          const row = await ownRow(id, response);
          if (!row) return;
          if (url.searchParams.get('watch') === '1') this.lease(row);
          const tabs = await this.options.here.list(row);
          sendJson(response, { status: 'ok', ...(tabs ? { tabs } : {}) });
        },
      },
      {
        method: 'POST', path: 'sessions/:id/tabs', body: 'json', bodyBytes: 8 * 1024,
        answer: async ({ id, body }, response) => {
          const row = await ownRow(id, response);
          if (!row) return;
          const action = parseTabAction(body);
          if ('error' in action) sendJson(response, { status: 'denied', code: 400, message: action.error });
          else sendJson(response, await this.options.here.act(row, action));
        },
      },
    ];
  }

  /** Another node follows the session: its tabs are watched here and each change told, for LEASE_MS more. */
  private lease(row: SessionRow): void {
    const held = this.leases.get(row.id);
    if (held) {
      held.expiry.refresh();
      held.follower.retry();
      return;
    }
    const lease: Lease = {
      follower: this.options.here.follow(row, () => this.tellSoon(row.id)),
      expiry: setTimeout(() => this.endLease(row.id), LEASE_MS),
      telling: undefined,
    };
    lease.expiry.unref();
    this.leases.set(row.id, lease);
  }

  private tellSoon(sessionId: string): void {
    const lease = this.leases.get(sessionId);
    if (!lease || lease.telling) return;
    lease.telling = setTimeout(() => {
      lease.telling = undefined;
      void this.options.store.database.notify(CHANGED_CHANNEL, JSON.stringify({ node: this.options.nodeId, id: sessionId })).catch(() => undefined);
    }, TELL_MS);
    lease.telling.unref();
  }

  private endLease(sessionId: string): void {
    const lease = this.leases.get(sessionId);
    if (!lease) return;
    this.leases.delete(sessionId);
    clearTimeout(lease.expiry);
    clearTimeout(lease.telling);
    lease.follower.stop();
  }
}
