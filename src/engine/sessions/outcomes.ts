// What the session use cases answer, in the product's words and without any interface's wording:
// a created session, a removal, or a refusal that says why with its data (and the request field
// it concerns, as data). Each API version words these at its edge (http/outcomes.ts, v8.ts, v7.ts,
// v6.ts); nothing here names a path, a version or a wire field.
import type { CreateRequest, SessionMeters } from '../../protocol/index.js';

/** A request field a refusal concerns (create's fields, and remove's `id`). */
export type RequestField = keyof CreateRequest | 'id';

/** Why a request was refused; `status` is the interface's outcome class (decisions.md 1-6). */
export type Refusal =
  | { status: 'denied'; field: 'browser'; reason: 'unknown-browser'; browser: string }
  | { status: 'denied'; field: 'browser'; reason: 'browser-disabled'; browserName: string }
  | { status: 'denied'; field: 'language'; reason: 'language-unavailable'; browserName: string; language: string; accountDefault: boolean; locales: readonly string[] }
  | { status: 'denied'; field: 'url'; reason: 'short-url-unknown' }
  | { status: 'denied'; field: 'url'; reason: 'not-web-address' }
  | { status: 'upgrade'; field?: undefined; reason: 'no-plan' }
  | { status: 'upgrade'; field: 'country'; reason: 'locations-not-in-plan' }
  | { status: 'upgrade'; field: 'egress'; reason: 'residential-not-in-plan' }
  | { status: 'denied'; field: 'record'; reason: 'recording-not-in-plan' }
  | { status: 'denied'; field: 'record'; reason: 'recording-mb-limit'; keptMb: number; limitMb: number }
  | { status: 'denied'; field: 'record'; reason: 'recording-free-space' }
  | { status: 'denied'; field: 'egress'; reason: 'residential-not-configured' }
  | { status: 'denied'; field: 'country'; reason: 'residential-country-unavailable'; country: string }
  | { status: 'upgrade'; field: 'egress'; reason: 'residential-data-used' }
  | { status: 'denied'; field: 'country'; reason: 'exit-unsupported' }
  | { status: 'denied'; field: 'country'; reason: 'exit-unavailable' }
  | { status: 'denied'; field: 'idempotencyKey'; reason: 'idempotency-key-reused' }
  | { status: 'denied'; field: 'embed'; reason: 'embed-origin-not-allowed'; origin: string; allowed: readonly string[] }
  | { status: 'upgrade'; field?: undefined; reason: 'running-limit'; used: number; limit: number }
  | { status: 'upgrade'; field?: undefined; reason: 'cycle-limit' }
  | { status: 'error'; field?: undefined; reason: 'no-node' }
  | { status: 'denied'; field: 'id'; reason: 'unknown-session' }
  /** A saved profile's refusal (profiles/profiles.ts), worded there with its field: v8 only. */
  | { status: 'denied' | 'upgrade' | 'error'; field?: undefined; reason: 'profile'; message: string }
  /** Another node's answer, already worded there (node-to-node remove: cluster/node-link.ts). */
  | { status: 'denied' | 'upgrade' | 'error'; field?: undefined; reason: 'relayed'; message: string };

export type RefusalReason = Refusal['reason'];

/** A session created now, or the first answer again for a repeated idempotency key. */
export interface Created {
  status: 'ok';
  sessionId: string;
  /** The session's share link (derived from its id, never stored). */
  shareLink: { shareUrl: string; shareUrlPath: string };
  /** The account's session meters right after the create. */
  quota: SessionMeters;
  /** Whether the requested exit location was applied (false only under terms that start without it). */
  locationApplied: boolean;
}

export type CreateOutcome = Created | Refusal;

export type RemoveOutcome = { status: 'ok' } | Refusal;

/**
 * What differs between the interfaces that create sessions: rules, not words. v8 and v7 each
 * have theirs (http/v8.ts, http/v7.ts); v6 launches under v8's.
 */
export interface CreateTerms {
  /**
   * Which interface's idempotency records these are: a repeat through another interface is
   * another request. It is part of the stored request hash, so it keeps the version's name
   * (`v8`, `v7`) that records made before the terms existed carry.
   */
  idempotencyScope: string;
  /** No free exit in the requested location: refuse (v8), or start on the default connection and say so (v7, decisions.md 15). */
  exitUnavailable: 'refuse' | 'default-connection';
  /** The share link's language segment when the request names none: English, or none at all (v7, decisions.md 34). */
  linkLanguageByDefault: 'en' | null;
  /** A create without `window`: the operator's `sessions.defaultWindow` for Chromium (v8; `app` unless set), or a browser window (v7 and v6, which have no `window`; decisions.md 176, 178). */
  windowByDefault: 'operator' | 'browser';
}

/**
 * What one node answers another that asked it to remove a session it runs (cluster/node-link.ts):
 * the v8 envelope, worded by the answering node, so nodes of different versions understand each other.
 */
export type NodeAnswer = { status: 'ok'; [field: string]: unknown } | { status: 'denied' | 'upgrade' | 'error'; message: string };
