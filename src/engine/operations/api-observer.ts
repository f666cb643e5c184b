// What the HTTP interface reports as it answers (decisions.md 60): each create, made or refused,
// as one log line under the request's id (the session's id, browser and account; a refusal's
// reason and field, never the request's URL or key), the refusals' count by reason, and each
// request a rate limit turned away.
import type { CreateRequest } from '../../protocol/index.js';
import type { CreateOutcome } from '../sessions/outcomes.js';
import type { AccountRow } from '../store/store.js';
import type { Logger } from './logger.js';
import type { EngineMetrics } from './metrics.js';

export interface ApiObserver {
  rateLimited(limit: 'api_key' | 'share_lookup' | 'v6_client'): void;
  created(log: Logger | undefined, account: AccountRow, request: CreateRequest, outcome: CreateOutcome, version: string): void;
}

export function apiObserver(logger: Logger, metrics: EngineMetrics | null): ApiObserver {
  return {
    rateLimited(limit) {
      metrics?.rateLimited.inc({ limit });
    },
    created(log = logger, account, request, outcome, version) {
      const fields = { account: account.id, browser: request.browser, version, ...(request.country ? { country: request.country } : {}), ...(request.egress ? { egress: request.egress } : {}) };
      if (outcome.status === 'ok') {
        log.info({ ...fields, vmId: outcome.sessionId }, 'session created');
        return;
      }
      metrics?.createRefusals.inc({ reason: outcome.reason });
      log.info({ ...fields, outcome: outcome.status, reason: outcome.reason, ...(outcome.field ? { field: outcome.field } : {}) }, 'session create refused');
    },
  };
}
