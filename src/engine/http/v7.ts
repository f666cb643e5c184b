// The v7 edge: v8's answers with the names that callers of the earlier v7 description read
// (credits, concurrency, browser_*, api_enabled: decisions.md 32), v7's two-letter ISO country
// codes (decisions.md 33), and the terms v7 creates sessions under: a location without a free
// exit starts on the default connection and says so (decisions.md 15), a link without a language asked for has
// none (decisions.md 34). The use cases stay the same for both versions.
import type {
  CreateRequest,
  SessionEntry,
  SessionMeters,
  UserApiResponse,
  UserQuotaResponse,
  V7CreditMeters,
  V7Quota,
  V7UserApiResponse,
  V7UserQuotaResponse,
} from '../../protocol/index.js';
import { sessionMeters } from '../accounts/meters.js';
import type { EngineConfig } from '../config.js';
import type { CreateOutcome, CreateTerms } from '../sessions/outcomes.js';
import type { SessionSummaryRow } from '../store/store.js';
import { createdAnswer, failureAnswer, sessionEntry } from './outcomes.js';

export const V7_TERMS: CreateTerms = { idempotencyScope: 'v7', exitUnavailable: 'default-connection', linkLanguageByDefault: null, windowByDefault: 'browser' };

/** Credits are the cycle's sessions, concurrency the running sessions; `null` stays "no cap". */
function creditMeters(meters: SessionMeters): V7CreditMeters {
  return {
    credits_total: meters.cycle_session_limit,
    credits_used: meters.cycle_sessions_used,
    credits_available: meters.cycle_sessions_remaining,
    concurrency_total: meters.running_session_limit,
    concurrency_used: meters.running_sessions_used,
    concurrency_available: meters.running_sessions_remaining,
    cycle_start: meters.cycle_start,
    // Optional in the schema for clients of older engines; this engine's meters always carry it.
    cycle_end: meters.cycle_end!,
  };
}

/** A v7 quota object: the session meters and their credit-based names. */
export function v7Quota(meters: SessionMeters): V7Quota {
  return { ...meters, ...creditMeters(meters) };
}

/** A create answer (first or repeated): v7's quota object, and whether the location was applied. */
export function v7CreateAnswer(outcome: CreateOutcome): unknown {
  if (outcome.status !== 'ok') return failureAnswer(outcome, 'v7');
  return {
    ...createdAnswer(outcome),
    quota: v7Quota(outcome.quota),
    location_applied: outcome.locationApplied,
    ...(outcome.locationApplied ? {} : { location_reason: 'unavailable' }),
  };
}

/** v7's list entries carry whether the session's location was applied, and why not. */
export function v7SessionList(rows: readonly SessionSummaryRow[]): { status: 'ok'; data: Array<SessionEntry & Record<string, unknown>> } {
  return {
    status: 'ok',
    data: rows.map((row) => ({
      ...sessionEntry(row),
      ...(row.location_applied === null ? {} : { location_applied: row.location_applied, ...(row.location_reason ? { location_reason: row.location_reason } : {}) }),
    })),
  };
}

export function v7UserQuota(answer: UserQuotaResponse): V7UserQuotaResponse {
  return { ...answer, ...creditMeters(answer) };
}

/** `browser_*` are the cycle's sessions, as v6's quota, count and remaining are (decisions.md 26). */
export function v7UserApi(answer: UserApiResponse): V7UserApiResponse {
  return {
    ...answer,
    api_enabled: answer.feature_programmatic_access,
    browser_quota: answer.cycle_session_limit,
    browser_used: answer.cycle_sessions_used,
    browser_remaining: answer.cycle_sessions_remaining,
    quota: v7Quota(sessionMeters(answer)),
  };
}

/** ISO 3166 codes whose country exit-location lists name otherwise: ISO reserves `uk` for the United Kingdom (`gb`). */
const LISTED_CODE_OF_ISO = new Map([['gb', 'uk']]);

/**
 * v7 `country`: a two-letter ISO code the service does not list, for a country it lists under
 * another code, means the listed code. The list is the exit locations, or `residential.countries`
 * for a residential connection. Anything else goes on unchanged to v8's checks.
 */
export function v7CreateRequest(asked: CreateRequest, config: EngineConfig): CreateRequest {
  // v7 knows no `record` (a v8 addition, issue 35), `window` and `control` (issue 36), `embed` (issue 44) nor `automation` (issue 45): dropped, as any field v7 does not know.
  const { record: _record, window: _window, control: _control, embed: _embed, automation: _automation, ...request } = asked;
  const code = request.country;
  const listedCode = code === undefined ? undefined : LISTED_CODE_OF_ISO.get(code);
  if (listedCode === undefined) return request;
  const listed = request.egress === 'residential'
    ? config.residential.countries ?? []
    : config.locations.flatMap((location) => [location.code, ...location.cities.map((city) => city.code)]);
  return !listed.includes(code!) && listed.includes(listedCode) ? { ...request, country: listedCode } : request;
}
