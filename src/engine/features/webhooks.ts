// Webhooks as a feature of the engine (decisions.md 61; module.ts): an account's receiver (the
// API's `user/webhook`), the delivery queue this node works on, and its length as a meter.
import type { EngineCore } from '../core.js';
import type { EngineModule } from '../module.js';
import { SessionWebhooks } from '../webhooks/webhooks.js';

export type WebhooksModule = EngineModule & { webhooks: SessionWebhooks };

export function webhooksModule(core: EngineCore, lookup?: typeof import('node:dns').lookup): WebhooksModule {
  const webhooks = new SessionWebhooks({ store: core.store, settings: core.config.webhooks, nodeId: core.nodeId, now: core.now, logger: core.logger, metrics: core.metrics, ...(lookup ? { lookup } : {}) });
  return {
    name: 'webhooks',
    webhooks,
    api: { webhooks },
    meters: [{ name: 'rbk_webhook_queue', help: 'Webhook events waiting to be delivered, on the whole service', read: () => webhooks.queue.pendingCount() }],
    start: () => webhooks.start(),
    stop: () => webhooks.close(),
  };
}
