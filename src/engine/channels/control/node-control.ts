// Who drives each session this node runs (issue 36, decisions.md 99-101), put together for the
// engine: one seat per session shared by the channels (rfb's input gate, people, automation),
// each change written into the session's row and told to every node; the owner's API calls
// decided here or, for a session another node runs, forwarded there over the node link
// (`POST /internal/v1/sessions/<id>/control`, its route given to the link's table); and the
// passes that name the owner's viewer.
import { parseControlAction, type ControlAction, type ControlAnswer } from '../../../protocol/index.js';
import type { NodeLink } from '../../cluster/node-link.js';
import type { NodeRoute } from '../../cluster/node-routes.js';
import { sendJson } from '../../http/respond.js';
import { sessionOwner } from '../../store/owner.js';
import type { SessionRow, Store } from '../../store/store.js';
import { ControlSeats, modeOfRow, viewerPasses } from './control-seats.js';

type Refusal = { status: 'denied' | 'error'; message: string };

export interface NodeControlOptions {
  store: Pick<Store, 'session' | 'updateSession'>;
  /** Tells followers here and on every node that a session's row changed (presence.ts `tell`). */
  tell(sessionId: string): void;
  idleSeconds: number;
  /** The engine's share-link secret: passes are signed with it. */
  secret: string;
  nodeId: string;
  /** The node link in a cluster: the owner's calls go to the node that runs the session (and come in from others by `nodeRoutes`). */
  cluster?: Pick<NodeLink, 'callJson'>;
}

/** What the engine does with `vm/control` and `vm/viewer` (api-routes.ts): on the node that runs the session (forwarded there in a cluster). */
export interface SessionControl {
  act(row: SessionRow, action: ControlAction): Promise<ControlAnswer | Refusal>;
  pass(row: SessionRow, name: string | undefined): { pass: string; expires: number };
}

export function nodeControl(options: NodeControlOptions) {
  const { store, cluster, nodeId } = options;
  const seats = new ControlSeats({
    modeOf: async (id) => modeOfRow(await store.session(id)),
    publish: async (id, mode, driver) => {
      await store.updateSession(id, { control_mode: mode, driver: driver ? JSON.stringify(driver) : null });
      options.tell(id);
    },
    idleMs: options.idleSeconds * 1000,
  });
  const passes = viewerPasses(options.secret);
  /** The owner's control call for a session another node runs: decided there. */
  const controlOn = async (node: string, sessionId: string, action: ControlAction): Promise<ControlAnswer | Refusal> => {
    const answer = await cluster!.callJson<ControlAnswer>(node, 'POST', `/internal/v1/sessions/${sessionId}/control`, JSON.stringify(action));
    return answer && answer.httpStatus >= 200 && answer.httpStatus < 300 ? answer.body : { status: 'error', message: 'the node that runs this session did not answer; try again in a few seconds' };
  };
  const calls: SessionControl = {
    act: (row, action) => {
      const owner = sessionOwner(row, nodeId);
      return owner.at === 'node' && cluster ? controlOn(owner.nodeId, row.id, action) : seats.act(row.id, action);
    },
    pass: (row, name) => passes.make(row.id, name),
  };
  /** Another node's control call for a session this node runs. */
  const nodeRoutes: NodeRoute[] = [
    {
      method: 'POST', path: 'sessions/:id/control', body: 'json',
      async answer({ id, body }, response) {
        const action = parseControlAction(body as Record<string, unknown>);
        sendJson(response, action.ok ? await seats.act(id, action.value) : { status: 'denied', message: action.message });
      },
    },
  ];
  return { seats, passes, calls, nodeRoutes };
}
