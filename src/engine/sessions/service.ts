// Sessions as the service sees them: create (checks, quota and idempotency in one transaction,
// then the runtime starts in the background), list, remove, meters, the lifecycle state machine
// (decisions.md 1-6), limits enforced over time, and recovery after a restart.
import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  SESSION_LIST_MAX,
  SESSION_LIST_WINDOW_DAYS,
  IDEMPOTENCY_TTL_HOURS,
  V6_SHORT_URL_TTL_HOURS,
  type CreateRequest,
  type Pool,
  type SessionEntry,
  type ShareLanguage,
  type UsageMeters,
} from '../../protocol/index.js';
import type { Accounts } from '../accounts/accounts.js';
import { currentCycle, formatDay } from '../accounts/cycle.js';
import { poolState, sessionMeters, totalMeters, type PoolState } from '../accounts/meters.js';
import type { EngineConfig, ExitCity } from '../config.js';
import type { Display } from '../runtime/display.js';
import { interfaceLocale } from '../runtime/locales.js';
import type { SessionRuntime } from '../runtime/runtime.js';
import { cityTimeZone, countryTimeZone } from '../runtime/time-zones.js';
import type { AccountRow, NodeWithLoad, SessionRow, SessionSummaryRow, Store } from '../store/store.js';
import type { ViewerRights } from '../viewer/viewer-room.js';
import type { Presence } from '../channels/presence.js';
import { sessionOwner } from '../cluster/owner.js';
import { shareLinkFor, shareLinkHash, shareLinkId, shareUrlFor, viewLinkId } from './share-links.js';

export type ApiVersion = 'v8' | 'v7';

/** An answer in the interface's envelope. */
export type Reply = { status: 'ok'; [field: string]: unknown } | { status: 'denied' | 'upgrade' | 'error'; message: string };

const DAY_MS = 86_400_000;
/** What a session id looks like (vm/create makes them): anything else is no session, without a look-up. */
const SESSION_ID = /^[0-9a-f]{32}$/;
const ACTIVE = ['starting', 'running'];

export function maskSessionId(id: string): string {
  return id.length <= 8 ? id : `${id.slice(0, 4)}${'*'.repeat(id.length - 8)}${id.slice(-4)}`;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().filter((k) => (value as Record<string, unknown>)[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

interface ExitChoice {
  city: ExitCity | null;
  applied: boolean;
}

/** How the service reaches the other nodes of a cluster (cluster/node-link.ts); absent on one machine. */
export interface ClusterLink {
  /** Whether a node counts as alive for placement (its last heartbeat is recent enough, by the wall clock). */
  alive(node: NodeWithLoad): boolean;
  /** Tells every other node that a session's status moved. */
  announce(id: string, status: string): void;
  /** Tells the node a session was placed on to start it. */
  placed(nodeId: string, sessionId: string): void;
  /** Has the node that runs a session remove it. */
  removeOn(nodeId: string, accountId: string, sessionId: string): Promise<Reply>;
}

export interface SessionServiceOptions {
  store: Store;
  /** This node's id: the sessions it runs carry it. */
  nodeId: string;
  cluster?: ClusterLink;
  /** Who is attached to each session (channels/presence.ts): an attended session is not idle. */
  presence: Presence;
  accounts: Accounts;
  config: EngineConfig;
  runtime: SessionRuntime;
  now: () => number;
  /** Where share links point (the viewer site). */
  shareBase: () => string;
  secret: string;
}

export interface SessionServiceEvents {
  /** A session's status moved (share links follow this). */
  status: [{ id: string; status: string }];
}

export class SessionService extends EventEmitter<SessionServiceEvents> {
  private readonly store: Store;
  readonly nodeId: string;
  private readonly runtime: SessionRuntime;
  private readonly now: () => number;
  /** Session id -> runtime session id, for sessions whose runtime is up in this process. */
  private readonly live = new Map<string, string>();
  private readonly starting = new Set<Promise<void>>();
  private readonly ending = new Set<Promise<unknown>>();
  /** Starts in progress, so that removing a starting session can end its start at once. */
  private readonly startAborts = new Map<string, AbortController>();
  /** Displays of sessions still starting: a viewer may connect before the first page is ready. */
  private readonly startingDisplays = new Map<string, Display>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly options: SessionServiceOptions) {
    super();
    this.setMaxListeners(0);
    this.store = options.store;
    this.nodeId = options.nodeId;
    this.runtime = options.runtime;
    this.now = options.now;
    // Only events that end a session suspend it; notices (a refused navigation) do not (runtime-events.ts).
    this.runtime.on('event', (event) => {
      if (!event.ends) return;
      const sessionId = [...this.live].find(([, runtimeId]) => runtimeId === event.sessionId)?.[0];
      if (sessionId) this.track(this.suspend(sessionId, event.message));
    });
  }

  /** Moves a session's status in the store and tells whoever follows it, on every node. */
  private async move(id: string, from: string[], to: string, fields: Partial<SessionRow> = {}): Promise<boolean> {
    const moved = await this.store.moveSession(id, from, to, fields);
    if (moved) this.moved(id, to);
    return moved;
  }

  /** A status change made here: followers on this node hear it at once, other nodes through the cluster. */
  private moved(id: string, status: string): void {
    this.emit('status', { id, status });
    this.options.cluster?.announce(id, status);
  }

  /** A status change another node made (cluster/node-link.ts calls this). */
  movedElsewhere(id: string, status: string): void {
    this.emit('status', { id, status });
  }

  // Share links and viewers -----------------------------------------------------------------------

  /**
   * The session a share link or view-only link belongs to, with what the link lets its holder do;
   * undefined for an unknown link.
   */
  async sessionForLink(linkId: string): Promise<{ row: SessionRow; rights: ViewerRights } | undefined> {
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(linkId)) return undefined;
    const hash = shareLinkHash(linkId);
    const row = await this.store.sessionByLinkHash(hash);
    return row && { row, rights: row.link_hash === hash ? 'control' : 'view' };
  }

  /**
   * The session's view-only link (decisions.md 45), in the share link's form and language: the
   * same link on every call, made from the engine's secret; the store keeps only its hash.
   */
  async viewOnlyLink(row: SessionRow): Promise<{ linkId: string; shareUrl: string; shareUrlPath: string }> {
    const linkId = viewLinkId(this.options.secret, row.id);
    if (row.view_link_hash === null) await this.store.updateSession(row.id, { view_link_hash: shareLinkHash(linkId) });
    return { linkId, ...shareUrlFor(this.options.shareBase(), linkId, row.share_language as ShareLanguage) };
  }

  /** The display of a session of this engine that is running or starting (viewers join it), or undefined. */
  displayOf(sessionId: string): Display | undefined {
    const runtimeId = this.live.get(sessionId);
    return runtimeId ? this.runtime.get(runtimeId)?.display : this.startingDisplays.get(sessionId);
  }

  // Accounts' view ------------------------------------------------------------------------------

  /** The account's pools with their meters, read through `store` (a transaction's, in create). */
  async pools(account: AccountRow, store: Store = this.store): Promise<PoolState[]> {
    const now = this.now();
    const states: PoolState[] = [];
    for (const subscription of await store.subscriptions(account.id)) {
      const plan = this.options.accounts.plan(subscription.plan_id);
      if (plan) states.push(await poolState(store, subscription, plan, now));
    }
    return states;
  }

  async hasProgrammaticAccess(account: AccountRow & { plan_ids?: string[] }): Promise<boolean> {
    // Only the plans matter here: no meter queries on the hot path of every request (and none at
    // all when authentication read the plans with the key).
    return (account.plan_ids ?? (await this.store.planIds(account.id))).some((id) => this.options.accounts.plan(id)?.programmatic_access === true);
  }

  async usage(account: AccountRow, store: Store = this.store): Promise<{ has_plan: boolean; meters: UsageMeters; pools: Pool[] }> {
    const now = this.now();
    const pools = (await this.pools(account, store)).map((p) => p.meters);
    return { has_plan: pools.length > 0, meters: totalMeters(pools, currentCycle(formatDay(new Date(now)), now)), pools };
  }

  // Create --------------------------------------------------------------------------------------

  async create(account: AccountRow, request: CreateRequest, version: ApiVersion): Promise<Reply> {
    const image = this.runtime.image(request.browser);
    if (!image) return { status: 'denied', message: `browser: unknown browser "${request.browser.slice(0, 50)}"; GET /${version}/image lists the browsers` };
    if (!image.enabled) return { status: 'denied', message: `browser: ${image.name} cannot start right now; choose an enabled browser from GET /${version}/image` };
    // The interface language must be one the image can show, exactly or nearly (decisions.md 42).
    const language = request.language ?? account.language ?? 'en';
    if (!interfaceLocale(language, image.locales)) {
      const from = request.language === undefined ? ' (the account\'s default language)' : '';
      return { status: 'denied', message: `language: ${image.name} cannot show its interface in ${language.slice(0, 20)}${from} on this service; it shows ${image.locales.join(', ')}` };
    }
    // A v6 short-URL id stands for the address it was made for, while it has not expired (decisions.md 23).
    let firstUrl = request.url;
    if (firstUrl?.startsWith('url_')) {
      firstUrl = /^url_\d{1,20}$/.test(firstUrl) ? await this.store.shortUrl(firstUrl, this.now() - V6_SHORT_URL_TTL_HOURS * 3_600_000) : undefined;
      if (firstUrl === undefined) return { status: 'denied', message: 'url: unknown or expired short-URL id; make a new one with POST /api/v6/shortUrl or send the address itself' };
    }
    // Kept, and handed to the browser, as the parsed address: never the caller's string (its
    // spaces, tabs and case go; checked to be an http or https address before this).
    if (firstUrl !== undefined) {
      firstUrl = URL.canParse(firstUrl) ? new URL(firstUrl).href : undefined;
      if (firstUrl === undefined) return { status: 'denied', message: 'url: must be an http or https address' };
    }

    let pools = await this.pools(account);
    if (pools.length === 0) return { status: 'upgrade', message: 'the account has no plan; subscribe to a plan to start sessions' };

    // Plan features narrow the pools a session may take a slot from.
    if (request.country !== undefined) {
      pools = pools.filter((p) => p.plan.location_access);
      if (pools.length === 0) return { status: 'upgrade', message: 'country: exit locations are not included in your plan' };
    }
    if (request.egress === 'residential') {
      pools = pools.filter((p) => p.plan.residential_cycle_mb_limit !== null);
      if (pools.length === 0) return { status: 'upgrade', message: 'egress: residential connections are not included in your plan' };
      const residential = this.options.config.residential;
      if (!residential.upstream) return { status: 'denied', message: 'egress: residential connections are not configured on this service' };
      const country = request.country && request.country !== 'auto' ? request.country.split('-')[0]! : null;
      if (country && residential.countries && !residential.countries.includes(country)) {
        return { status: 'denied', message: `country: residential connections are not available in "${country}"` };
      }
      pools = pools.filter((p) => p.meters.residential_bytes_used_cycle < (p.plan.residential_cycle_mb_limit ?? 0) * 1024 * 1024);
      if (pools.length === 0) return { status: 'upgrade', message: 'egress: the residential data included in your plan is used up for this cycle' };
    }

    let exit: ExitChoice = { city: null, applied: true };
    if (request.country !== undefined && request.egress !== 'residential') {
      const chosen = await this.chooseExit(request.country);
      if (chosen === 'unsupported') return { status: 'denied', message: 'country: unsupported exit location' };
      if (chosen === 'unavailable') {
        if (version === 'v8') return { status: 'denied', message: 'country: exit location unavailable; try another location or "auto"' };
        exit = { city: null, applied: false };
      } else {
        exit = { city: chosen, applied: true };
      }
    }

    const layout = request.layout ?? account.layout ?? 'us';
    const shareLanguage = (request.shareLanguage ?? 'en') as ShareLanguage;
    // v7 without shareLanguage: the link has no language segment (decisions.md 34); the viewer shows English.
    const linkLanguage = request.shareLanguage ?? (version === 'v7' ? null : shareLanguage);
    const requestHash = createHash('sha256').update(canonical({ ...request, idempotencyKey: undefined, version })).digest('hex');
    const now = this.now();
    const candidates = pools.map((p) => p.subscription.id);

    const outcome = await this.store.atomically(async (tx): Promise<{ reply: Reply; session?: SessionRow }> => {
      if (request.idempotencyKey !== undefined) {
        const earlier = await tx.idempotency(account.id, request.idempotencyKey, now - IDEMPOTENCY_TTL_HOURS * 3_600_000);
        if (earlier) {
          if (earlier.request_hash !== requestHash) return { reply: { status: 'denied', message: 'idempotencyKey: idempotency key reused with a different request' } };
          return { reply: this.withShareLink(JSON.parse(earlier.response) as Reply, linkLanguage) };
        }
      }
      // Re-read inside the transaction: the pools' counts must not move between check and insert.
      const fresh = (await this.pools(account, tx)).filter((p) => candidates.includes(p.subscription.id));
      const pool = fresh.find((p) => p.meters.running_sessions_remaining > 0 && (p.meters.cycle_sessions_remaining === null || p.meters.cycle_sessions_remaining > 0));
      if (!pool) {
        const running = fresh.every((p) => p.meters.running_sessions_remaining === 0);
        return {
          reply: {
            status: 'upgrade',
            message: running
              ? `running session limit reached (${fresh.reduce((a, p) => a + p.meters.running_sessions_used, 0)} of ${fresh.reduce((a, p) => a + p.meters.running_session_limit, 0)}); end a session or upgrade your plan`
              : 'cycle session limit reached; more sessions are available in the next cycle or with a larger plan',
          },
        };
      }
      // Placement, decided with the quota: a node that is alive, takes new sessions, can start
      // this browser and has room (least loaded first).
      const node = await this.place(tx, image.id);
      if (!node) return { reply: { status: 'error', message: 'every node of the service is at capacity (or none can start this browser); try again in a minute' } };
      const id = randomBytes(16).toString('hex');
      const row: SessionRow = {
        id,
        account_id: account.id,
        subscription_id: pool.subscription.id,
        status: 'starting',
        browser: image.id,
        browser_name: image.name,
        url: firstUrl ?? null,
        language,
        layout,
        country: request.country ?? null,
        exit_city: exit.city?.code ?? null,
        egress: request.egress ?? null,
        share_language: shareLanguage,
        callback_url: request.callbackUrl ?? null,
        link_hash: shareLinkHash(shareLinkId(this.options.secret, id)),
        view_link_hash: null,
        viewers: 0,
        counted: true,
        ever_ran: false,
        created_at: now,
        running_at: null,
        ended_at: null,
        last_viewer_at: null,
        egress_bytes: 0,
        residential_bytes: 0,
        runtime_id: null,
        end_reason: null,
        location_applied: request.country === undefined ? null : exit.applied,
        location_reason: exit.applied ? null : 'unavailable',
        node_id: node,
      };
      await tx.insertSession(row);
      const quota = sessionMeters((await this.usage(account, tx)).meters);
      const stored: Reply = {
        status: 'ok',
        vmId: id,
        quota,
        ...(version === 'v7' ? { location_applied: exit.applied, ...(exit.applied ? {} : { location_reason: 'unavailable' }) } : {}),
      };
      if (request.idempotencyKey !== undefined) {
        await tx.rememberIdempotency(account.id, request.idempotencyKey, requestHash, JSON.stringify(stored), now);
      }
      return { reply: this.withShareLink(stored, linkLanguage), session: row };
    });
    if (outcome.session) {
      if (outcome.session.node_id === this.nodeId) this.startRuntime(outcome.session);
      else this.options.cluster?.placed(outcome.session.node_id!, outcome.session.id);
    }
    return outcome.reply;
  }

  /** The node a new session goes to (inside the create transaction), or null when none has room. */
  private async place(tx: Store, browser: string): Promise<string | null> {
    const cluster = this.options.cluster;
    if (!cluster) {
      // One machine: this node, unless it drains, up to its capacity.
      if ((await tx.node(this.nodeId))?.state === 'draining') return null;
      const capacity = this.options.config.node.capacity;
      if (capacity === null) return this.nodeId;
      const here = (await tx.nodes()).find((node) => node.id === this.nodeId);
      return (here?.load ?? 0) < capacity ? this.nodeId : null;
    }
    const room = (node: NodeWithLoad) => (node.capacity === null ? 1 : (node.capacity - node.load) / Math.max(node.capacity, 1));
    const candidates = (await tx.nodes()).filter(
      (node) =>
        node.state === 'active' &&
        cluster.alive(node) &&
        (node.capacity === null || node.load < node.capacity) &&
        (JSON.parse(node.browsers) as string[]).includes(browser),
    );
    // Least loaded first: the most free room for its capacity, then the fewest sessions.
    candidates.sort((a, b) => room(b) - room(a) || a.load - b.load || a.id.localeCompare(b.id));
    return candidates[0]?.id ?? null;
  }

  /** Another node placed a session here: start it, unless it started already or was removed meanwhile. */
  async startPlaced(sessionId: string): Promise<void> {
    if (this.startAborts.has(sessionId) || this.live.has(sessionId)) return;
    const row = await this.store.session(sessionId);
    if (!row || row.node_id !== this.nodeId || row.status !== 'starting') return;
    if (this.startAborts.has(sessionId) || this.live.has(sessionId)) return;
    this.startRuntime(row);
  }

  /** The upstream proxy a session's traffic leaves through: its residential route or exit city. */
  private upstreamFor(row: SessionRow): string | undefined {
    if (row.egress === 'residential') return this.options.config.residential.upstream ?? undefined;
    if (!row.exit_city) return undefined;
    return this.options.config.locations.flatMap((l) => l.cities).find((c) => c.code === row.exit_city)?.upstream ?? undefined;
  }

  /**
   * The time zone a session's browser keeps (decisions.md 43): its exit city's; for a residential
   * connection, its country's (the configured location's zone, else the zone that dominates the
   * country, else its configured default city's); else, and for a v7 session whose location was not applied,
   * the operator's default.
   */
  private timeZoneFor(row: SessionRow): string {
    const { locations, timeZone } = this.options.config;
    if (row.exit_city) {
      for (const location of locations) {
        const city = location.cities.find((c) => c.code === row.exit_city);
        if (city) return cityTimeZone(location, city) ?? timeZone;
      }
    }
    if (row.egress === 'residential' && row.country && row.country !== 'auto') {
      const code = row.country.split('-')[0]!;
      const location = locations.find((l) => l.code === code);
      const city = location?.cities.find((c) => c.code === location.default) ?? location?.cities[0];
      return countryTimeZone(location, code) ?? (location && city ? cityTimeZone(location, city) : undefined) ?? timeZone;
    }
    return timeZone;
  }

  /**
   * Adds the share link to a create answer (it is derived, never stored). A repeated request
   * (same idempotency key) has the same version and shareLanguage, so the same link form.
   */
  private withShareLink(reply: Reply, language: ShareLanguage | null): Reply {
    if (reply.status !== 'ok' || typeof reply.vmId !== 'string') return reply;
    const { shareUrl, shareUrlPath } = shareLinkFor(this.options.secret, this.options.shareBase(), reply.vmId, language);
    const { status, vmId, ...rest } = reply;
    return { status, vmId, shareUrl, shareUrlPath, ...rest };
  }

  private async chooseExit(code: string): Promise<ExitCity | 'unsupported' | 'unavailable'> {
    const locations = this.options.config.locations;
    const load = await this.store.exitCityLoads();
    const free = (city: ExitCity) => city.upstream !== null && (load.get(city.code) ?? 0) < city.capacity;
    if (code === 'auto') {
      for (const location of locations) {
        const city = location.cities.find(free);
        if (city) return city;
      }
      return 'unavailable';
    }
    const country = locations.find((l) => l.code === code);
    if (country) {
      const preferred = country.cities.find((c) => c.code === country.default);
      const city = preferred && free(preferred) ? preferred : country.cities.find(free);
      return city ?? 'unavailable';
    }
    const city = locations.flatMap((l) => l.cities).find((c) => c.code === code);
    if (!city) return 'unsupported';
    return free(city) ? city : 'unavailable';
  }

  private startRuntime(row: SessionRow): void {
    const upstreamProxyUrl = this.upstreamFor(row);
    const abort = new AbortController();
    this.startAborts.set(row.id, abort);
    const task = this.runtime
      .startSession({
        signal: abort.signal,
        onDisplay: (display) => this.startingDisplays.set(row.id, display),
        browser: row.browser,
        language: row.language,
        timeZone: this.timeZoneFor(row),
        layout: row.layout,
        ...(row.url ? { url: row.url } : {}),
        ...(upstreamProxyUrl ? { upstreamProxyUrl } : {}),
      })
      .then(
        async (started) => {
          let moved: boolean;
          try {
            moved = await this.move(row.id, ['starting'], 'running', { running_at: this.now(), ever_ran: true, runtime_id: started.id });
          } catch {
            // The store failed (locked, disk full, unreachable): the browser ends, the session stays
            // `starting` in the store and is started again once the store answers (a heartbeat
            // finds it), or ends as `error` at the next restart.
            await this.runtime.stopSession(started.id).catch(() => undefined);
            return;
          }
          if (moved) {
            this.live.set(row.id, started.id);
            return;
          }
          // Removed while it was starting: end it now.
          await this.runtime.stopSession(started.id);
          await this.move(row.id, ['stopping'], 'deleted', { ended_at: this.now() });
        },
        async (error: Error) => {
          const reason = error.message.split('\n')[0]!.slice(0, 500);
          if (abort.signal.aborted) {
            // Removed while starting: a session the caller ended, not one that failed.
            await this.move(row.id, ['stopping'], 'deleted');
          } else if (!(await this.move(row.id, ['starting'], 'error', { counted: false, end_reason: reason, ended_at: this.now() }))) {
            await this.move(row.id, ['stopping'], 'deleted', { counted: false, end_reason: reason, ended_at: this.now() });
          }
        },
      )
      // A store that fails while the start's outcome is written leaves the row for recovery; the
      // process goes on.
      .catch(() => undefined)
      .finally(() => {
        this.starting.delete(task);
        this.startAborts.delete(row.id);
        this.startingDisplays.delete(row.id);
      });
    this.starting.add(task);
  }

  // Read and remove -----------------------------------------------------------------------------

  async list(account: AccountRow, id: string | undefined, version: ApiVersion): Promise<Reply> {
    const rows = id === undefined
      ? await this.store.sessionSummariesOf(account.id, this.now() - SESSION_LIST_WINDOW_DAYS * DAY_MS, SESSION_LIST_MAX)
      : [SESSION_ID.test(id) ? await this.store.sessionSummary(id) : undefined].filter((row): row is SessionSummaryRow => row !== undefined && row.account_id === account.id);
    return { status: 'ok', data: rows.map((row) => this.entry(row, version)) };
  }

  private entry(row: SessionSummaryRow, version: ApiVersion): SessionEntry & Record<string, unknown> {
    const entry: SessionEntry & Record<string, unknown> = {
      id: maskSessionId(row.id),
      status: row.status as SessionEntry['status'],
      name: row.browser_name,
      created: new Date(row.created_at).toISOString(),
    };
    if (version === 'v7' && row.location_applied !== null) {
      entry.location_applied = row.location_applied;
      if (row.location_reason) entry.location_reason = row.location_reason;
    }
    return entry;
  }

  async remove(account: AccountRow, id: string): Promise<Reply> {
    const row = SESSION_ID.test(id) ? await this.store.session(id) : undefined;
    if (!row || row.account_id !== account.id) return { status: 'denied', message: 'id: unknown session' };
    // A browser that runs (or starts) on another node is ended by that node.
    const owner = sessionOwner(row, this.nodeId);
    if (owner.at === 'node' && this.options.cluster) return this.options.cluster.removeOn(owner.nodeId, account.id, id);
    const now = this.now();
    switch (row.status) {
      case 'starting':
        if (await this.move(id, ['starting'], 'stopping', { ended_at: now, end_reason: 'removed' })) {
          const start = this.startAborts.get(id);
          // The start is cancelled: its processes end now, and it moves the session on to deleted.
          if (start) start.abort();
          // Placed here but not begun yet: nothing runs, so it is deleted at once.
          else await this.move(id, ['stopping'], 'deleted');
        }
        break;
      case 'running':
        if (await this.move(id, ['running'], 'stopping', { ended_at: now, end_reason: 'removed' })) this.track(this.endRuntime(id, 'deleted'));
        break;
      case 'error':
      case 'suspended':
        await this.move(id, ['error', 'suspended'], 'deleted');
        break;
    }
    return { status: 'ok' };
  }

  /** The service ends a running session itself (decisions.md 1: suspended). */
  async suspend(id: string, reason: string): Promise<void> {
    if (await this.move(id, ['running'], 'suspended', { ended_at: this.now(), end_reason: reason.slice(0, 500) })) {
      await this.endRuntime(id, null);
    }
  }

  private async endRuntime(id: string, then: 'deleted' | null): Promise<void> {
    const row = await this.store.session(id);
    const runtimeId = this.live.get(id) ?? row?.runtime_id;
    this.live.delete(id);
    if (row) await this.flushBytes(row, runtimeId);
    if (runtimeId) await this.runtime.stopSession(runtimeId).catch(() => undefined);
    if (then) await this.move(id, ['stopping'], then);
  }

  /** Writes the session's egress byte meters when they changed since the last write. */
  private async flushBytes(row: Pick<SessionRow, 'id' | 'egress' | 'egress_bytes'>, runtimeId: string | null | undefined, store: Store = this.store): Promise<void> {
    const session = runtimeId ? this.runtime.get(runtimeId) : undefined;
    if (!session) return;
    const { sent, received } = session.egress.bytes();
    if (sent + received === row.egress_bytes) return;
    await store.updateSession(row.id, { egress_bytes: sent + received, ...(row.egress === 'residential' ? { residential_bytes: sent + received } : {}) });
  }

  // Over time -----------------------------------------------------------------------------------

  /**
   * After a restart: this node's sessions whose runtime is gone end (decisions.md 1). Sessions of
   * an older SQLite file, from before nodes, belong to the one node there is.
   */
  async recover(): Promise<{ suspended: number; errored: number; deleted: number }> {
    if (this.store.dialect === 'sqlite') await this.store.adoptSessionsWithoutNode(this.nodeId);
    const moved = await this.store.atomically((tx) =>
      tx.endSessionsOfNode(this.nodeId, this.now(), { running: 'the engine restarted', starting: 'the engine restarted before the session was ready' }));
    for (const { id, status } of moved) this.moved(id, status);
    const count = (status: string) => moved.filter((m) => m.status === status).length;
    return { suspended: count('suspended'), errored: count('error'), deleted: count('deleted') };
  }

  /**
   * This node was declared lost (it fell silent) while it still ran: its sessions have ended in the
   * store, so their browsers end here too before the node takes new ones.
   */
  async abandonAll(): Promise<void> {
    for (const abort of this.startAborts.values()) abort.abort();
    const ending = [...this.live].map(async ([sessionId, runtimeId]) => {
      this.live.delete(sessionId);
      await this.runtime.stopSession(runtimeId).catch(() => undefined);
    });
    await Promise.allSettled([...ending, ...this.starting]);
  }

  /** Enforces maximum duration and idle timeout, updates byte meters, forgets old idempotency keys. */
  async sweep(): Promise<void> {
    // One write transaction per sweep (not one per session), so API reads wait on it at most once.
    // It touches only this node's sessions: on a cluster it needs no lock another node waits for.
    const ending = await this.store.atomically((tx) => this.sweepRunning(tx), `rbk-sweep-${this.nodeId}`);
    for (const [id, reason] of ending) this.track(this.suspend(id, reason));
  }

  /** Writes this node's running sessions' meters and answers those to end, with why. */
  private async sweepRunning(tx: Store): Promise<Array<[string, string]>> {
    const now = this.now();
    const ending: Array<[string, string]> = [];
    for (const row of await tx.sessionsWithStatus(['running'], this.nodeId)) {
      await this.flushBytes(row, this.live.get(row.id), tx);
      if (this.options.presence.attended(row.id)) {
        await tx.updateSession(row.id, { last_viewer_at: now });
        row.last_viewer_at = now;
      }
      const subscription = (await tx.subscriptions(row.account_id)).find((s) => s.id === row.subscription_id);
      const plan = this.options.accounts.plan(subscription?.plan_id ?? '');
      if (!plan) {
        ending.push([row.id, 'the plan lapsed']);
        continue;
      }
      const since = row.running_at ?? row.created_at;
      if (now - since >= plan.max_session_minutes * 60_000) ending.push([row.id, 'maximum session duration reached']);
      else if (now - Math.max(since, row.last_viewer_at ?? 0) >= plan.idle_timeout_minutes * 60_000) ending.push([row.id, 'no viewer for the idle timeout']);
    }
    await tx.forgetIdempotencyBefore(now - IDEMPOTENCY_TTL_HOURS * 3_600_000);
    await tx.forgetV6Before(now - V6_SHORT_URL_TTL_HOURS * 3_600_000, now);
    return ending;
  }

  startSweeping(intervalMs = 1000): void {
    let sweeping = false;
    this.sweeper = setInterval(() => {
      if (sweeping) return;
      sweeping = true;
      // A failed sweep is retried on the next tick.
      this.sweep().catch(() => undefined).finally(() => (sweeping = false));
    }, intervalMs);
    this.sweeper.unref();
  }

  /** Keeps background endings in sight, so close() can wait for them before the store closes. */
  private track(work: Promise<unknown>): void {
    const settled = work.catch(() => undefined).finally(() => this.ending.delete(settled));
    this.ending.add(settled);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    // Starts in progress end now (their displays and browsers with them) instead of running on
    // to their timeout; their sessions are found by the next start's recovery.
    for (const abort of this.startAborts.values()) abort.abort();
    await Promise.allSettled([...this.starting, ...this.ending]);
  }

  /** Sessions this node runs or starts right now (for health). */
  async activeCount(): Promise<number> {
    return (await this.store.sessionsWithStatus(ACTIVE, this.nodeId)).length;
  }
}
