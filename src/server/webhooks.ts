// verifyWebhook: the receiving end of the service's session webhooks (decisions.md 61), on the
// customer's server. It checks the `RBK-Signature` header (`t=<unix seconds>,v1=<hex HMAC-SHA256
// of "<t>.<body>">` under the webhook's secret), refuses a signature older than the tolerance (a
// replay), and answers the event read against the protocol. Web Crypto only: it runs wherever
// the proxy route runs (Node, edge and serverless runtimes).
import { webhookEventSchema, WEBHOOK_SIGNATURE_HEADER, type WebhookEvent } from '../protocol/index.js';
import { RemoteBrowserError } from './errors.js';

export interface VerifyWebhookOptions {
  /** The raw body as received, before any JSON parsing (a re-serialized body no longer matches). */
  body: string;
  /** The `RBK-Signature` header's value (`request.headers.get('rbk-signature')`). */
  signature: string | null | undefined;
  /** The webhook's secret (`whsec_…`), shown once when the webhook was set. */
  secret: string;
  /** How old a signature may be, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The current time in ms (tests). */
  now?: number;
}

export { WEBHOOK_SIGNATURE_HEADER };

const encoder = new TextEncoder();

function hex(bytes: ArrayBuffer): string {
  return [...new Uint8Array(bytes)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** Compares two strings in time that does not depend on where they differ. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

function refuse(message: string): never {
  throw new RemoteBrowserError('invalid_signature', message);
}

/**
 * Answers the event when the body carries the service's valid, recent signature; throws
 * `RemoteBrowserError` with code `invalid_signature` otherwise (answer the request with 400 then).
 * Events may arrive more than once (after a retry): drop repeats by `event.id`.
 */
export async function verifyWebhook(options: VerifyWebhookOptions): Promise<WebhookEvent> {
  if (typeof options.secret !== 'string' || !options.secret.startsWith('whsec_')) {
    throw new RemoteBrowserError('configuration', 'secret must be the webhook secret (whsec_…) shown when the webhook was set: remote-browser-kit webhooks set, or POST /v8/user/webhook');
  }
  const header = options.signature ?? '';
  const parts = new Map(header.split(',').map((part) => part.trim().split('=', 2) as [string, string]));
  const time = Number(parts.get('t'));
  const given = parts.get('v1') ?? '';
  if (!Number.isInteger(time) || !/^[0-9a-f]{64}$/.test(given)) refuse(`no valid ${WEBHOOK_SIGNATURE_HEADER} header (t=<seconds>,v1=<hex>)`);
  const tolerance = options.toleranceSeconds ?? 300;
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(now - time) > tolerance) refuse(`the signature is ${Math.abs(now - time)} s old, beyond the ${tolerance} s tolerance (a replay, or this server's clock is off)`);
  const key = await crypto.subtle.importKey('raw', encoder.encode(options.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const expected = hex(await crypto.subtle.sign('HMAC', key, encoder.encode(`${time}.${options.body}`)));
  if (!sameText(expected, given)) refuse('the signature does not match the body: it was changed, or signed with another secret');
  let json: unknown;
  try {
    json = JSON.parse(options.body);
  } catch {
    refuse('the signed body is not JSON');
  }
  const event = webhookEventSchema.safeParse(json);
  if (!event.success) refuse('the signed body is not a session event of this protocol');
  return event.data;
}
