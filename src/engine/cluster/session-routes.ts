// The core's own node-link route (node-routes.ts): `POST /internal/v1/sessions/<id>/remove
// {accountId}`, a removal asked of the node that runs the session by the node the caller reached
// (node-link.ts `removeOn`). The account was checked there; the answer is the API's removal answer.
import { removalAnswer } from '../http/outcomes.js';
import { sendJson } from '../http/respond.js';
import type { SessionService } from '../sessions/service.js';
import type { Store } from '../store/store.js';
import type { NodeRoute } from './node-routes.js';

export function sessionNodeRoutes(store: Pick<Store, 'account'>, sessions: Pick<SessionService, 'remove'>): NodeRoute[] {
  return [
    {
      method: 'POST', path: 'sessions/:id/remove', body: 'json',
      async answer({ id, body }, response) {
        const accountId = (body as { accountId?: unknown } | null)?.accountId;
        const account = typeof accountId === 'string' ? await store.account(accountId) : undefined;
        if (!account) return sendJson(response, { status: 'denied', message: 'id: unknown session' });
        sendJson(response, removalAnswer(await sessions.remove(account, id)));
      },
    },
  ];
}
