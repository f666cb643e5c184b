// Session webhooks (decisions.md 61): the account's receiver address (POST/GET/DELETE
// /v8/user/webhook), and the events the service POSTs there, signed with the account's secret.
// Shared by the engine (which checks and sends them) and the server package (verifyWebhook).
import { z } from 'zod';
import { parseRequest, type RequestCheck } from './v8.js';

/** A webhook address's length limit, as callbackUrl's. */
export const WEBHOOK_URL_MAX = 2000;

/** The header that carries `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const WEBHOOK_SIGNATURE_HEADER = 'rbk-signature';

/**
 * The events a session's account is told about: it is running, failed to start, ended; and (issue
 * 46) it went into standby with nothing attached, or resumed from it on the first touch (each time).
 */
export const WEBHOOK_EVENT_TYPES = ['session.running', 'session.error', 'session.ended', 'session.standby', 'session.resumed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * Why a session ended or failed, as a category to branch on (`reason` next to it is the words):
 * `removed` (vm/remove), `idle` (idle timeout), `max-duration`, `memory-cap`, `browser-exit` (its
 * browser, display or a page crashed), `plan-lapsed`, `node-lost` (its node stopped answering or
 * restarted), `start-failed` (it never became ready), `other`.
 */
export const END_CATEGORIES = ['removed', 'idle', 'max-duration', 'memory-cap', 'browser-exit', 'plan-lapsed', 'node-lost', 'start-failed', 'other'] as const;
export type EndCategory = (typeof END_CATEGORIES)[number];

export const webhookRequestSchema = z.object({
  url: z
    .string('url: required; must be the https address that receives the events')
    .refine((v) => v.length <= WEBHOOK_URL_MAX && /^https?:\/\/[^/?#]/i.test(v) && URL.canParse(v), `url: must be an https address (http only where the service allows it) of at most ${WEBHOOK_URL_MAX.toLocaleString('en-US')} characters`),
});
export type WebhookRequest = z.infer<typeof webhookRequestSchema>;

export function parseWebhookRequest(body: unknown): RequestCheck<WebhookRequest> {
  return parseRequest(webhookRequestSchema, body);
}

/** The receiver as the service keeps it; `secret` only in the answer that made it (shown once). */
export const webhookSchema = z.object({
  url: z.string(),
  /** ISO 8601. */
  created: z.string(),
  /** Signs every event (`whsec_…`); only in the POST answer: keep it on your server. */
  secret: z.string().optional(),
});
export type Webhook = z.infer<typeof webhookSchema>;

/** POST and GET /v8/user/webhook: the receiver, or null when the account has none. */
export const webhookResponseSchema = z.object({ status: z.literal('ok'), webhook: webhookSchema.nullable() });
export type WebhookResponse = z.infer<typeof webhookResponseSchema>;

/** One event as POSTed to the receiver (the body, JSON). */
export const webhookEventSchema = z.object({
  /** The same on every retry of the event: receivers drop repeats by it. */
  id: z.string(),
  type: z.enum(WEBHOOK_EVENT_TYPES),
  /** When it happened (ISO 8601). */
  time: z.string(),
  vmId: z.string(),
  /** The session's status after the event: running, error, stopping or suspended (running for standby and resumed). */
  status: z.string(),
  /** session.ended and session.error: why, as a category and in words. */
  category: z.enum(END_CATEGORIES).optional(),
  reason: z.string().optional(),
});
export type WebhookEvent = z.infer<typeof webhookEventSchema>;
