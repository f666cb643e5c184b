// The words of the session service's outcomes (sessions/outcomes.ts) in the interface's envelope,
// shared by every version: a refusal's message (naming its field first, as callers read it), a
// created session, a removal and a session list entry. v8.ts, v7.ts and v6.ts build on these, so
// the versions never import each other.
import type { CreateResponse, SessionEntry } from '../../protocol/index.js';
import type { Created, NodeAnswer, Refusal, RemoveOutcome } from '../sessions/outcomes.js';
import type { SessionSummaryRow } from '../store/store.js';

/** The interface whose paths a message names (v6 words its details as v8 does). */
export type WordingVersion = 'v8' | 'v7';

export type FailureAnswer = { status: 'denied' | 'upgrade' | 'error'; message: string };

/** What a refusal says after its field's name. */
function refusalText(refusal: Refusal, version: WordingVersion): string {
  switch (refusal.reason) {
    case 'unknown-browser':
      return `unknown browser "${refusal.browser.slice(0, 50)}"; GET /${version}/image lists the browsers`;
    case 'browser-disabled':
      return `${refusal.browserName} cannot start right now; choose an enabled browser from GET /${version}/image`;
    case 'language-unavailable': {
      const from = refusal.accountDefault ? ' (the account\'s default language)' : '';
      return `${refusal.browserName} cannot show its interface in ${refusal.language.slice(0, 20)}${from} on this service; it shows ${refusal.locales.join(', ')}`;
    }
    case 'short-url-unknown':
      return 'unknown or expired short-URL id; make a new one with POST /api/v6/shortUrl or send the address itself';
    case 'not-web-address':
      return 'must be an http or https address';
    case 'no-plan':
      return 'the account has no plan; subscribe to a plan to start sessions';
    case 'locations-not-in-plan':
      return 'exit locations are not included in your plan';
    case 'residential-not-in-plan':
      return 'residential connections are not included in your plan';
    case 'recording-not-in-plan':
      return 'recording sessions is not included in your plan; create it without record';
    case 'recording-mb-limit':
      return `your recordings keep ${refusal.keptMb} MB, your plan's recording_mb_limit is ${refusal.limitMb} MB; remove recordings you no longer need (POST /${version}/vm/recording/remove) or create without record`;
    case 'recording-free-space':
      return 'this service\'s disk is nearly full (under its free-space floor), so it records no sessions for now; create without record, or try again later';
    case 'residential-not-configured':
      return 'residential connections are not configured on this service';
    case 'residential-country-unavailable':
      return `residential connections are not available in "${refusal.country}"`;
    case 'residential-data-used':
      return 'the residential data included in your plan is used up for this cycle';
    case 'exit-unsupported':
      return 'unsupported exit location';
    case 'exit-unavailable':
      return 'exit location unavailable; try another location or "auto"';
    case 'embed-origin-not-allowed':
      return `the origin "${refusal.origin}" is not one the account allows to frame its links (${refusal.allowed.length === 0 ? 'none' : refusal.allowed.join(', ')}); add it with POST /${version}/user/embed first`;
    case 'idempotency-key-reused':
      return 'idempotency key reused with a different request';
    case 'running-limit':
      return `running session limit reached (${refusal.used} of ${refusal.limit}); end a session or upgrade your plan`;
    case 'cycle-limit':
      return 'cycle session limit reached; more sessions are available in the next cycle or with a larger plan';
    case 'no-node':
      return 'every node of the service is at capacity (or none can start this browser); try again in a minute';
    case 'unknown-session':
      return 'unknown session';
    case 'relayed':
    case 'profile':
      return refusal.message;
  }
}

/** A refusal's message: `<field>: <what is wrong and what to do>` when it concerns a field. */
export function refusalMessage(refusal: Refusal, version: WordingVersion): string {
  const text = refusalText(refusal, version);
  return refusal.field === undefined ? text : `${refusal.field}: ${text}`;
}

export function failureAnswer(refusal: Refusal, version: WordingVersion): FailureAnswer {
  return { status: refusal.status, message: refusalMessage(refusal, version) };
}

/** A created session (first answer or repeat) as v8 answers it; v7 adds its own fields. */
export function createdAnswer(created: Created): CreateResponse {
  return { status: 'ok', vmId: created.sessionId, ...created.shareLink, quota: created.quota };
}

/** A removal's answer: also what a node answers another that asked it to remove a session. */
export function removalAnswer(outcome: RemoveOutcome): NodeAnswer {
  return outcome.status === 'ok' ? { status: 'ok' } : failureAnswer(outcome, 'v8');
}

/** Session ids are shown masked in lists (the full id is the caller's, from create). */
export function maskSessionId(id: string): string {
  return id.length <= 8 ? id : `${id.slice(0, 4)}${'*'.repeat(id.length - 8)}${id.slice(-4)}`;
}

/** A session list entry as v8 shows it; v7 adds the location fields. */
export function sessionEntry(row: SessionSummaryRow): SessionEntry {
  return {
    id: maskSessionId(row.id),
    status: row.status as SessionEntry['status'],
    name: row.browser_name,
    created: new Date(row.created_at).toISOString(),
    // An addition (decisions.md 141): only while the session sleeps.
    ...(row.standby && row.status === 'running' ? { standby: true as const } : {}),
    // Hibernated (decisions.md 165): asleep longer, its processes ended; said with standby.
    ...(row.hibernated && row.status === 'running' ? { hibernated: true as const } : {}),
  };
}
