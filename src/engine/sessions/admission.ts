// Whether a session may be created, before the quota transaction: the browser, its interface
// language (decisions.md 42), the first address (v6 short-URL ids, decisions.md 23), the plan's
// features (exit locations, residential data) and the exit; then, inside the transaction, the
// pool a session takes its slot from. Answers refusals as data (outcomes.ts), never words.
import { V6_SHORT_URL_TTL_HOURS, type CreateRequest } from '../../protocol/index.js';
import type { PoolState } from '../accounts/meters.js';
import type { EngineConfig, ExitCity } from '../config.js';
import { type BrowserImage, interfaceLocale } from '../runtime/index.js';
import type { AccountRow, Store } from '../store/store.js';
import { V6Store } from '../store/v6-store.js';
import { chooseExit } from './exits.js';
import type { CreateTerms, Refusal } from './outcomes.js';

/** A request that passed every check that needs no transaction. */
export interface Admitted {
  image: BrowserImage;
  /** The interface language asked for, or the account's default, or English. */
  language: string;
  /** The first address as parsed (never the caller's string), a short-URL id resolved. */
  firstUrl: string | undefined;
  /** The pools the plan's features allow, in subscription order. */
  pools: PoolState[];
  /** The exit city, or null for the default connection; `applied` false when the terms started without the requested one. */
  exit: { city: ExitCity | null; applied: boolean };
  /** The window it runs in: the create's `window`, else the operator's default for Chromium under v8 (`app` unless set), else a browser window (decisions.md 176, 178). */
  window: 'browser' | 'app';
}

export interface AdmissionContext {
  image(id: string): BrowserImage | undefined;
  config: Pick<EngineConfig, 'locations' | 'residential' | 'sessions'>;
  store: Pick<Store, 'sql' | 'exitCityLoads'>;
  /** The account's pools with their meters now. */
  pools(): Promise<PoolState[]>;
  /** A recording's caps (recordings/caps.ts): absent where this node records nothing. */
  recordingCaps?: RecordingAdmission;
  now: number;
}

/** What a `record: true` create is checked against (recordings/caps.ts `RecordingCaps` is one). */
export interface RecordingAdmission {
  /** Whether the node is under its free-space floor. */
  belowFloor(): Promise<boolean>;
  /** Megabytes the account's recordings keep, on every node (`fresh`: not from a cache). */
  keptMb(accountId: string, fresh?: boolean): Promise<number>;
}

export async function admit(context: AdmissionContext, account: AccountRow, request: CreateRequest, terms: CreateTerms): Promise<Admitted | Refusal> {
  const image = context.image(request.browser);
  if (!image) return { status: 'denied', field: 'browser', reason: 'unknown-browser', browser: request.browser };
  if (!image.enabled) return { status: 'denied', field: 'browser', reason: 'browser-disabled', browserName: image.name };
  // The interface language must be one the image can show, exactly or nearly (decisions.md 42).
  const language = request.language ?? account.language ?? 'en';
  if (!interfaceLocale(language, image.locales)) {
    return { status: 'denied', field: 'language', reason: 'language-unavailable', browserName: image.name, language, accountDefault: request.language === undefined, locales: image.locales };
  }
  // A v6 short-URL id stands for the address it was made for, while it has not expired (decisions.md 23).
  let firstUrl = request.url;
  if (firstUrl?.startsWith('url_')) {
    firstUrl = /^url_\d{1,20}$/.test(firstUrl) ? await new V6Store(context.store).shortUrl(firstUrl, context.now - V6_SHORT_URL_TTL_HOURS * 3_600_000) : undefined;
    if (firstUrl === undefined) return { status: 'denied', field: 'url', reason: 'short-url-unknown' };
  }
  // Kept, and handed to the browser, as the parsed address: never the caller's string (its
  // spaces, tabs and case go; checked to be an http or https address before this).
  if (firstUrl !== undefined) {
    firstUrl = URL.canParse(firstUrl) ? new URL(firstUrl).href : undefined;
    if (firstUrl === undefined) return { status: 'denied', field: 'url', reason: 'not-web-address' };
  }

  let pools = await context.pools();
  if (pools.length === 0) return { status: 'upgrade', reason: 'no-plan' };

  // Plan features narrow the pools a session may take a slot from.
  if (request.record === true) {
    pools = pools.filter((p) => p.plan.recording);
    if (pools.length === 0) return { status: 'denied', field: 'record', reason: 'recording-not-in-plan' };
    // The node's free-space floor, then the account's recordings against the plans' megabytes (decisions.md 131-132).
    const caps = context.recordingCaps;
    if (caps && (await caps.belowFloor())) return { status: 'denied', field: 'record', reason: 'recording-free-space' };
    if (caps && pools.some((p) => typeof p.plan.recording_mb_limit === 'number')) {
      const keptMb = await caps.keptMb(account.id, true);
      const room = pools.filter((p) => typeof p.plan.recording_mb_limit !== 'number' || keptMb < p.plan.recording_mb_limit);
      if (room.length === 0) return { status: 'denied', field: 'record', reason: 'recording-mb-limit', keptMb: Math.round(keptMb * 10) / 10, limitMb: Math.max(...pools.map((p) => p.plan.recording_mb_limit ?? 0)) };
      pools = room;
    }
  }
  if (request.country !== undefined) {
    pools = pools.filter((p) => p.plan.location_access);
    if (pools.length === 0) return { status: 'upgrade', field: 'country', reason: 'locations-not-in-plan' };
  }
  if (request.egress === 'residential') {
    pools = pools.filter((p) => p.plan.residential_cycle_mb_limit !== null);
    if (pools.length === 0) return { status: 'upgrade', field: 'egress', reason: 'residential-not-in-plan' };
    const residential = context.config.residential;
    if (!residential.upstream) return { status: 'denied', field: 'egress', reason: 'residential-not-configured' };
    const country = request.country && request.country !== 'auto' ? request.country.split('-')[0]! : null;
    if (country && residential.countries && !residential.countries.includes(country)) {
      return { status: 'denied', field: 'country', reason: 'residential-country-unavailable', country };
    }
    pools = pools.filter((p) => p.meters.residential_bytes_used_cycle < (p.plan.residential_cycle_mb_limit ?? 0) * 1024 * 1024);
    if (pools.length === 0) return { status: 'upgrade', field: 'egress', reason: 'residential-data-used' };
  }

  let exit: Admitted['exit'] = { city: null, applied: true };
  if (request.country !== undefined && request.egress !== 'residential') {
    const chosen = chooseExit(context.config.locations, await context.store.exitCityLoads(), request.country);
    if (chosen === 'unsupported') return { status: 'denied', field: 'country', reason: 'exit-unsupported' };
    if (chosen === 'unavailable') {
      if (terms.exitUnavailable === 'refuse') return { status: 'denied', field: 'country', reason: 'exit-unavailable' };
      exit = { city: null, applied: false };
    } else {
      exit = { city: chosen, applied: true };
    }
  }
  // The operator's default window is Chromium's only: a Firefox ESR app window runs the remote agent, which pages see (decisions.md 103, 176).
  const window = request.window ?? (terms.windowByDefault === 'operator' && image.family === 'chromium' ? context.config.sessions.defaultWindow : 'browser');
  return { image, language, firstUrl, pools, exit, window };
}

/**
 * The pool a new session takes its slot from, of the admitted pools as re-read inside the
 * transaction: the first with a running slot and a cycle session left.
 */
export function choosePool(pools: readonly PoolState[]): PoolState | Refusal {
  const pool = pools.find((p) => p.meters.running_sessions_remaining > 0 && (p.meters.cycle_sessions_remaining === null || p.meters.cycle_sessions_remaining > 0));
  if (pool) return pool;
  if (pools.every((p) => p.meters.running_sessions_remaining === 0)) {
    return {
      status: 'upgrade',
      reason: 'running-limit',
      used: pools.reduce((a, p) => a + p.meters.running_sessions_used, 0),
      limit: pools.reduce((a, p) => a + p.meters.running_session_limit, 0),
    };
  }
  return { status: 'upgrade', reason: 'cycle-limit' };
}
