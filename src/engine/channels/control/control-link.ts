// Who drives a session, across the nodes of a cluster (issue 36, decisions.md 100): the owner's
// control call (`POST /v8/vm/control`) that reached a node which does not run the session is
// decided on the node that does, over the node link: `POST /internal/v1/sessions/<id>/control`,
// a route of the link's one signed table (cluster/node-routes.ts), which checked the call's
// signature before it answers here. node-control.ts sends through `controlOn` and answers through
// what it gives `serveControl`.
import { parseControlAction, type ControlAction, type ControlAnswer } from '../../../protocol/index.js';
import type { NodeLink } from '../../cluster/node-link.js';
import type { NodeRoute } from '../../cluster/node-routes.js';
import { sendJson } from '../../http/respond.js';

type Refusal = { status: 'denied' | 'error'; message: string };

export function controlLink(link: Pick<NodeLink, 'callJson'>) {
  let act: ((sessionId: string, action: ControlAction) => Promise<unknown>) | undefined;
  const nodeRoutes: NodeRoute[] = [
    {
      method: 'POST', path: 'sessions/:id/control', body: 'json',
      async answer({ id, body }, response) {
        const action = parseControlAction(body as Record<string, unknown>);
        if (!action.ok || !act) sendJson(response, { status: 'denied', message: action.ok ? 'control is not served here' : action.message });
        else sendJson(response, await act(id, action.value));
      },
    },
  ];
  return {
    /** The owner's control call for a session another node runs: decided there. */
    async controlOn(nodeId: string, sessionId: string, action: ControlAction): Promise<ControlAnswer | Refusal> {
      const answer = await link.callJson<ControlAnswer>(nodeId, 'POST', `/internal/v1/sessions/${sessionId}/control`, JSON.stringify(action));
      return answer && answer.httpStatus >= 200 && answer.httpStatus < 300 ? answer.body : { status: 'error', message: 'the node that runs this session did not answer; try again in a few seconds' };
    },
    /** How this node decides the calls other nodes forward (node-control.ts gives its seats). */
    serveControl(given: (sessionId: string, action: ControlAction) => Promise<unknown>): void {
      act = given;
    },
    nodeRoutes,
  };
}
