// A session's webhook events (decisions.md 61): the event's id and body (which moves make one is
// the lifecycle's: sessions/lifecycle.ts eventTypeOf), and
// its signature (`RBK-Signature: t=<unix seconds>,v1=<HMAC-SHA256 of "<t>.<body>">`, as Stripe
// signs; the server package's verifyWebhook checks it).
import { createHash, createHmac } from 'node:crypto';
import type { WebhookEvent, WebhookEventType } from '../../protocol/index.js';
import { endCategory } from '../sessions/end-reasons.js';
import type { SessionRow } from '../store/store.js';

/**
 * The event's id: the same for the same session and type on every node, so it is queued once.
 * Standby and resumed happen again and again: `ordinal` names which time (the n-th standby and
 * the n-th resume share n).
 */
export function eventId(sessionId: string, type: WebhookEventType, ordinal?: number): string {
  const key = ordinal === undefined ? `${sessionId}:${type}` : `${sessionId}:${type}:${ordinal}`;
  return `evt_${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
}

/** The events of a session's standby (issue 46), each sent once per time it happens. */
export function isStandbyEvent(type: WebhookEventType): type is 'session.standby' | 'session.resumed' {
  return type === 'session.standby' || type === 'session.resumed';
}

/**
 * The event's body. Standby and resumed carry their ordinal (the session's n-th standby and its
 * n-th resume) and happen `at`; the others take their time from the row.
 */
export function sessionEvent(row: SessionRow, type: WebhookEventType, at: number, ordinal?: number): WebhookEvent {
  if (isStandbyEvent(type)) return { id: eventId(row.id, type, ordinal ?? 0), type, time: new Date(at).toISOString(), vmId: row.id, status: row.status };
  const ended = type !== 'session.running';
  return {
    id: eventId(row.id, type),
    type,
    time: new Date(ended ? (row.ended_at ?? at) : (row.running_at ?? at)).toISOString(),
    vmId: row.id,
    status: row.status,
    ...(ended ? { category: endCategory(row.status, row.end_reason), reason: row.end_reason ?? 'unknown' } : {}),
  };
}

/** The signature header's value for `body` at `seconds` (unix time). */
export function signWebhook(secret: string, body: string, seconds: number): string {
  return `t=${seconds},v1=${createHmac('sha256', secret).update(`${seconds}.${body}`).digest('hex')}`;
}
