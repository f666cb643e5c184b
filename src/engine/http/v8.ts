// The v8 edge: the terms v8 creates sessions under (sessions/outcomes.ts: CreateTerms) and its
// answers to the session use cases, worded with http/outcomes.ts.
import type { SessionEntry } from '../../protocol/index.js';
import type { CreateOutcome, CreateTerms } from '../sessions/outcomes.js';
import type { SessionSummaryRow } from '../store/store.js';
import { createdAnswer, failureAnswer, sessionEntry } from './outcomes.js';

/** v8 refuses a location without a free exit, and its share links always carry a language. */
export const V8_TERMS: CreateTerms = { idempotencyScope: 'v8', exitUnavailable: 'refuse', linkLanguageByDefault: 'en', windowByDefault: 'operator' };

export function v8CreateAnswer(outcome: CreateOutcome): unknown {
  return outcome.status === 'ok' ? createdAnswer(outcome) : failureAnswer(outcome, 'v8');
}

export function v8SessionList(rows: readonly SessionSummaryRow[]): { status: 'ok'; data: SessionEntry[] } {
  return { status: 'ok', data: rows.map(sessionEntry) };
}
