// The service client's webhook calls (decisions.md 59): the account's receiver read, set (its new
// secret shown only in that answer) and removed, over the client's one checked request
// (service-client.ts): the same key, timeout, retries where safe, and typed errors.
import type { z } from 'zod';
import { webhookResponseSchema, type WebhookResponse } from '../protocol/index.js';
import { RemoteBrowserError } from './errors.js';

type Request = <T>(call: { method: 'GET' | 'POST' | 'DELETE'; path: string; what: string; schema: z.ZodType<T>; body?: unknown; authenticated: boolean; repeatable: boolean; signal: AbortSignal | undefined }) => Promise<T>;
type Options = { signal?: AbortSignal } | undefined;

export interface WebhookCalls {
  /** GET /v8/user/webhook: the account's webhook receiver (without its secret), or null. */
  webhook(options?: Options): Promise<WebhookResponse['webhook']>;
  /** POST /v8/user/webhook: sets the receiver; the answer carries its new secret, shown only this once. */
  setWebhook(url: string, options?: Options): Promise<NonNullable<WebhookResponse['webhook']>>;
  /** DELETE /v8/user/webhook: removes the receiver (events not yet delivered are dropped). */
  removeWebhook(options?: Options): Promise<void>;
}

export function webhookCalls(request: Request): WebhookCalls {
  return {
    webhook: async (options) =>
      (await request({ method: 'GET', path: 'user/webhook', what: 'the webhook', schema: webhookResponseSchema, authenticated: true, repeatable: true, signal: options?.signal })).webhook,
    setWebhook: async (url, options) => {
      const answer = await request({ method: 'POST', path: 'user/webhook', what: 'setting the webhook', schema: webhookResponseSchema, body: { url }, authenticated: true, repeatable: false, signal: options?.signal });
      if (!answer.webhook) throw new RemoteBrowserError('invalid_response', 'the service set the webhook but answered none');
      return answer.webhook;
    },
    removeWebhook: async (options) => {
      await request({ method: 'DELETE', path: 'user/webhook', what: 'removing the webhook', schema: webhookResponseSchema, authenticated: true, repeatable: true, signal: options?.signal });
    },
  };
}
