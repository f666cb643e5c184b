// A session's webhook events (decisions.md 61): the event's id and body (which moves make one is
// the lifecycle's: sessions/lifecycle.ts eventTypeOf), and
// its signature (`RBK-Signature: t=<unix seconds>,v1=<HMAC-SHA256 of "<t>.<body>">`, as Stripe
// signs; the server package's verifyWebhook checks it).
import { createHash, createHmac } from 'node:crypto';
import type { WebhookEvent, WebhookEventType } from '../../protocol/index.js';
import { endCategory } from '../sessions/end-reasons.js';
import type { SessionRow } from '../store/store.js';

/** The event's id: the same for the same session and type on every node, so it is queued once. */
export function eventId(sessionId: string, type: WebhookEventType): string {
  return `evt_${createHash('sha256').update(`${sessionId}:${type}`).digest('hex').slice(0, 32)}`;
}

export function sessionEvent(row: SessionRow, type: WebhookEventType, at: number): WebhookEvent {
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
