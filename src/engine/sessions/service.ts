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
import type { SessionRuntime } from '../runtime/runtime.js';
import type { AccountRow, SessionRow, SessionSummaryRow, SqliteStore } from '../store/sqlite-store.js';
import { shareLinkFor, shareLinkHash, shareLinkId } from './share-links.js';

export type ApiVersion = 'v8' | 'v7';

/** An answer in the interface's envelope. */
export type Reply = { status: 'ok'; [field: string]: unknown } | { status: 'denied' | 'upgrade' | 'error'; message: string };

const DAY_MS = 86_400_000;
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

export interface SessionServiceOptions {
  store: SqliteStore;
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
  private readonly store: SqliteStore;
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

  /** Open viewer connections per session: a watched session is not idle. */
  private readonly viewers = new Map<string, number>();

  constructor(private readonly options: SessionServiceOptions) {
    super();
    this.setMaxListeners(0);
    this.store = options.store;
    this.runtime = options.runtime;
    this.now = options.now;
    this.runtime.on('event', (event) => {
      if (event.kind === 'refused') return;
      const sessionId = [...this.live].find(([, runtimeId]) => runtimeId === event.sessionId)?.[0];
      if (sessionId) this.track(this.suspend(sessionId, event.message));
    });
  }

  /** Moves a session's status in the store and tells whoever follows it. */
  private move(id: string, from: string[], to: string, fields: Partial<SessionRow> = {}): boolean {
    const moved = this.store.moveSession(id, from, to, fields);
    if (moved) this.emit('status', { id, status: to });
    return moved;
  }

  // Share links and viewers -----------------------------------------------------------------------

  /** The session a share link belongs to, or undefined for an unknown link. */
  sessionForLink(linkId: string): SessionRow | undefined {
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(linkId)) return undefined;
    return this.store.sessionByLinkHash(shareLinkHash(linkId));
  }

  /** The display of a session of this engine that is running or starting (viewers join it), or undefined. */
  displayOf(sessionId: string): Display | undefined {
    const runtimeId = this.live.get(sessionId);
    return runtimeId ? this.runtime.get(runtimeId)?.display : this.startingDisplays.get(sessionId);
  }

  viewerJoined(sessionId: string): void {
    this.viewers.set(sessionId, (this.viewers.get(sessionId) ?? 0) + 1);
    this.store.updateSession(sessionId, { last_viewer_at: this.now() });
  }

  viewerLeft(sessionId: string): void {
    const left = (this.viewers.get(sessionId) ?? 1) - 1;
    if (left <= 0) this.viewers.delete(sessionId);
    else this.viewers.set(sessionId, left);
    this.store.updateSession(sessionId, { last_viewer_at: this.now() });
  }

  viewerCount(sessionId: string): number {
    return this.viewers.get(sessionId) ?? 0;
  }

  // Accounts' view ------------------------------------------------------------------------------

  pools(account: AccountRow): PoolState[] {
    const now = this.now();
    return this.store.subscriptions(account.id).flatMap((subscription) => {
      const plan = this.options.accounts.plan(subscription.plan_id);
      return plan ? [poolState(this.store, subscription, plan, now)] : [];
    });
  }

  hasProgrammaticAccess(account: AccountRow): boolean {
    // Only the plans matter here: no meter queries on the hot path of every request.
    return this.store.planIds(account.id).some((id) => this.options.accounts.plan(id)?.programmatic_access === true);
  }

  usage(account: AccountRow): { has_plan: boolean; meters: UsageMeters; pools: Pool[] } {
    const now = this.now();
    const pools = this.pools(account).map((p) => p.meters);
    return { has_plan: pools.length > 0, meters: totalMeters(pools, currentCycle(formatDay(new Date(now)), now)), pools };
  }

  // Create --------------------------------------------------------------------------------------

  create(account: AccountRow, request: CreateRequest, version: ApiVersion): Reply {
    const image = this.runtime.image(request.browser);
    if (!image) return { status: 'denied', message: `browser: unknown browser "${request.browser.slice(0, 50)}"; GET /${version}/image lists the browsers` };
    if (!image.enabled) return { status: 'denied', message: `browser: ${image.name} cannot start right now; choose an enabled browser from GET /${version}/image` };
    // A v6 short-URL id stands for the address it was made for, while it has not expired (decisions.md 23).
    let firstUrl = request.url;
    if (firstUrl?.startsWith('url_')) {
      firstUrl = this.store.shortUrl(firstUrl, this.now() - V6_SHORT_URL_TTL_HOURS * 3_600_000);
      if (firstUrl === undefined) return { status: 'denied', message: 'url: unknown or expired short-URL id; make a new one with POST /api/v6/shortUrl or send the address itself' };
    }

    let pools = this.pools(account);
    if (pools.length === 0) return { status: 'upgrade', message: 'the account has no plan; subscribe to a plan to start sessions' };

    // Plan features narrow the pools a session may take a slot from.
    if (request.country !== undefined) {
      pools = pools.filter((p) => p.plan.location_access);
      if (pools.length === 0) return { status: 'upgrade', message: 'country: exit locations are not included in your plan' };
    }
    let upstreamProxyUrl: string | undefined;
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
      upstreamProxyUrl = residential.upstream;
    }

    let exit: ExitChoice = { city: null, applied: true };
    if (request.country !== undefined && request.egress !== 'residential') {
      const chosen = this.chooseExit(request.country);
      if (chosen === 'unsupported') return { status: 'denied', message: 'country: unsupported exit location' };
      if (chosen === 'unavailable') {
        if (version === 'v8') return { status: 'denied', message: 'country: exit location unavailable; try another location or "auto"' };
        exit = { city: null, applied: false };
      } else {
        exit = { city: chosen, applied: true };
        upstreamProxyUrl = chosen.upstream ?? undefined;
      }
    }

    const language = request.language ?? account.language ?? 'en';
    const layout = request.layout ?? account.layout ?? 'us';
    const shareLanguage = (request.shareLanguage ?? 'en') as ShareLanguage;
    // v7 without shareLanguage: the link has no language segment (decisions.md 34); the viewer shows English.
    const linkLanguage = request.shareLanguage ?? (version === 'v7' ? null : shareLanguage);
    const requestHash = createHash('sha256').update(canonical({ ...request, idempotencyKey: undefined, version })).digest('hex');
    const now = this.now();
    const candidates = pools.map((p) => p.subscription.id);

    const outcome = this.store.atomically((): { reply: Reply; session?: SessionRow } => {
      if (request.idempotencyKey !== undefined) {
        const earlier = this.store.idempotency(account.id, request.idempotencyKey, now - IDEMPOTENCY_TTL_HOURS * 3_600_000);
        if (earlier) {
          if (earlier.request_hash !== requestHash) return { reply: { status: 'denied', message: 'idempotencyKey: idempotency key reused with a different request' } };
          return { reply: this.withShareLink(JSON.parse(earlier.response) as Reply, linkLanguage) };
        }
      }
      // Re-read inside the transaction: the pools' counts must not move between check and insert.
      const fresh = this.pools(account).filter((p) => candidates.includes(p.subscription.id));
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
        counted: 1,
        ever_ran: 0,
        created_at: now,
        running_at: null,
        ended_at: null,
        last_viewer_at: null,
        egress_bytes: 0,
        residential_bytes: 0,
        runtime_id: null,
        end_reason: null,
        location_applied: request.country === undefined ? null : exit.applied ? 1 : 0,
        location_reason: exit.applied ? null : 'unavailable',
      };
      this.store.insertSession(row);
      const quota = sessionMeters(this.usage(account).meters);
      const stored: Reply = {
        status: 'ok',
        vmId: id,
        quota,
        ...(version === 'v7' ? { location_applied: exit.applied, ...(exit.applied ? {} : { location_reason: 'unavailable' }) } : {}),
      };
      if (request.idempotencyKey !== undefined) {
        this.store.rememberIdempotency(account.id, request.idempotencyKey, requestHash, JSON.stringify(stored), now);
      }
      return { reply: this.withShareLink(stored, linkLanguage), session: row };
    });
    if (outcome.session) this.startRuntime(outcome.session, upstreamProxyUrl);
    return outcome.reply;
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

  private chooseExit(code: string): ExitCity | 'unsupported' | 'unavailable' {
    const locations = this.options.config.locations;
    const free = (city: ExitCity) => city.upstream !== null && this.store.exitCityLoad(city.code) < city.capacity;
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

  private startRuntime(row: SessionRow, upstreamProxyUrl: string | undefined): void {
    const abort = new AbortController();
    this.startAborts.set(row.id, abort);
    const task = this.runtime
      .startSession({
        signal: abort.signal,
        onDisplay: (display) => this.startingDisplays.set(row.id, display),
        browser: row.browser,
        language: row.language,
        layout: row.layout,
        ...(row.url ? { url: row.url } : {}),
        ...(upstreamProxyUrl ? { upstreamProxyUrl } : {}),
      })
      .then(
        async (started) => {
          if (this.move(row.id, ['starting'], 'running', { running_at: this.now(), ever_ran: 1, runtime_id: started.id })) {
            this.live.set(row.id, started.id);
            return;
          }
          // Removed while it was starting: end it now.
          await this.runtime.stopSession(started.id);
          this.move(row.id, ['stopping'], 'deleted', { ended_at: this.now() });
        },
        (error: Error) => {
          const reason = error.message.split('\n')[0]!.slice(0, 500);
          if (abort.signal.aborted) {
            // Removed while starting: a session the caller ended, not one that failed.
            this.move(row.id, ['stopping'], 'deleted');
          } else if (!this.move(row.id, ['starting'], 'error', { counted: 0, end_reason: reason, ended_at: this.now() })) {
            this.move(row.id, ['stopping'], 'deleted', { counted: 0, end_reason: reason, ended_at: this.now() });
          }
        },
      )
      .finally(() => {
        this.starting.delete(task);
        this.startAborts.delete(row.id);
        this.startingDisplays.delete(row.id);
      });
    this.starting.add(task);
  }

  // Read and remove -----------------------------------------------------------------------------

  list(account: AccountRow, id: string | undefined, version: ApiVersion): Reply {
    const rows = id === undefined
      ? this.store.sessionSummariesOf(account.id, this.now() - SESSION_LIST_WINDOW_DAYS * DAY_MS, SESSION_LIST_MAX)
      : [this.store.sessionSummary(id)].filter((row): row is SessionSummaryRow => row !== undefined && row.account_id === account.id);
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
      entry.location_applied = row.location_applied === 1;
      if (row.location_reason) entry.location_reason = row.location_reason;
    }
    return entry;
  }

  async remove(account: AccountRow, id: string): Promise<Reply> {
    const row = this.store.session(id);
    if (!row || row.account_id !== account.id) return { status: 'denied', message: 'id: unknown session' };
    const now = this.now();
    switch (row.status) {
      case 'starting':
        // The start is cancelled: its processes end now, and it moves the session on to deleted.
        if (this.move(id, ['starting'], 'stopping', { ended_at: now, end_reason: 'removed' })) this.startAborts.get(id)?.abort();
        break;
      case 'running':
        if (this.move(id, ['running'], 'stopping', { ended_at: now, end_reason: 'removed' })) this.track(this.endRuntime(id, 'deleted'));
        break;
      case 'error':
      case 'suspended':
        this.move(id, ['error', 'suspended'], 'deleted');
        break;
    }
    return { status: 'ok' };
  }

  /** The service ends a running session itself (decisions.md 1: suspended). */
  async suspend(id: string, reason: string): Promise<void> {
    if (this.move(id, ['running'], 'suspended', { ended_at: this.now(), end_reason: reason.slice(0, 500) })) {
      await this.endRuntime(id, null);
    }
  }

  private async endRuntime(id: string, then: 'deleted' | null): Promise<void> {
    const row = this.store.session(id);
    const runtimeId = this.live.get(id) ?? row?.runtime_id;
    this.live.delete(id);
    if (row) this.flushBytes(row, runtimeId);
    if (runtimeId) await this.runtime.stopSession(runtimeId).catch(() => undefined);
    if (then) this.move(id, ['stopping'], then);
  }

  /** Writes the session's egress byte meters when they changed since the last write. */
  private flushBytes(row: Pick<SessionRow, 'id' | 'egress' | 'egress_bytes'>, runtimeId: string | null | undefined): void {
    const session = runtimeId ? this.runtime.get(runtimeId) : undefined;
    if (!session) return;
    const { sent, received } = session.egress.bytes();
    if (sent + received === row.egress_bytes) return;
    this.store.updateSession(row.id, { egress_bytes: sent + received, ...(row.egress === 'residential' ? { residential_bytes: sent + received } : {}) });
  }

  // Over time -----------------------------------------------------------------------------------

  /** After a restart: sessions whose runtime is gone end (decisions.md 1). */
  recover(): { suspended: number; errored: number; deleted: number } {
    const now = this.now();
    let suspended = 0;
    let errored = 0;
    let deleted = 0;
    for (const row of this.store.sessionsWithStatus(['starting', 'running', 'stopping'])) {
      if (row.status === 'running' && this.move(row.id, ['running'], 'suspended', { ended_at: now, end_reason: 'the engine restarted' })) suspended++;
      if (row.status === 'starting' && this.move(row.id, ['starting'], 'error', { ended_at: now, counted: 0, end_reason: 'the engine restarted before the session was ready' })) errored++;
      if (row.status === 'stopping' && this.move(row.id, ['stopping'], 'deleted')) deleted++;
    }
    return { suspended, errored, deleted };
  }

  /** Enforces maximum duration and idle timeout, updates byte meters, forgets old idempotency keys. */
  sweep(): void {
    // One write transaction per sweep (not one per session), so API reads wait on it at most once.
    this.store.atomically(() => this.sweepRunning());
  }

  private sweepRunning(): void {
    const now = this.now();
    for (const row of this.store.sessionsWithStatus(['running'])) {
      this.flushBytes(row, this.live.get(row.id));
      if (this.viewerCount(row.id) > 0) {
        this.store.updateSession(row.id, { last_viewer_at: now });
        row.last_viewer_at = now;
      }
      const plan = this.options.accounts.plan(this.store.subscriptions(row.account_id).find((s) => s.id === row.subscription_id)?.plan_id ?? '');
      if (!plan) {
        this.track(this.suspend(row.id, 'the plan lapsed'));
        continue;
      }
      const since = row.running_at ?? row.created_at;
      if (now - since >= plan.max_session_minutes * 60_000) this.track(this.suspend(row.id, 'maximum session duration reached'));
      else if (now - Math.max(since, row.last_viewer_at ?? 0) >= plan.idle_timeout_minutes * 60_000) this.track(this.suspend(row.id, 'no viewer for the idle timeout'));
    }
    this.store.forgetIdempotencyBefore(now - IDEMPOTENCY_TTL_HOURS * 3_600_000);
    this.store.forgetV6Before(now - V6_SHORT_URL_TTL_HOURS * 3_600_000, now);
  }

  startSweeping(intervalMs = 1000): void {
    this.sweeper = setInterval(() => {
      try {
        this.sweep();
      } catch {
        /* a failed sweep is retried on the next tick */
      }
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

  /** Sessions counted as active right now across the engine (for health). */
  activeCount(): number {
    return this.store.sessionsWithStatus(ACTIVE).length;
  }
}
