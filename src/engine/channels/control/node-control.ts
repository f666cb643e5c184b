// Who drives each session this node runs (issue 36, decisions.md 99-101), put together for the
// engine: one driving per session (node-driving.ts) shared by the channels (rfb's input gate, people, automation),
// each change written into the session's row and told to every node; the owner's API calls
// decided here or, for a session another node runs, forwarded there over the node link; and the
// passes that name the owner's viewer.
import type { ControlAction, ControlAnswer } from '../../../protocol/index.js';
import { sessionOwner } from '../../store/owner.js';
import type { SessionRow, Store } from '../../store/store.js';
import { NodeDriving, modeOfRow, viewerPasses } from './node-driving.js';

type Refusal = { status: 'denied' | 'error'; message: string };

export interface NodeControlOptions {
  store: Pick<Store, 'session' | 'updateSession'>;
  /** Tells followers here and on every node that a session's row changed (presence.ts `tell`). */
  tell(sessionId: string): void;
  idleSeconds: number;
  /** The engine's share-link secret: passes are signed with it. */
  secret: string;
  nodeId: string;
  /** The node link in a cluster: the owner's calls go to the node that runs the session, and come in from others. */
  cluster?: {
    controlOn(nodeId: string, sessionId: string, action: ControlAction): Promise<ControlAnswer | Refusal>;
    serveControl(act: (sessionId: string, action: ControlAction) => Promise<unknown>): void;
  };
}

export function nodeControl(options: NodeControlOptions) {
  const { store, cluster, nodeId } = options;
  const driving = new NodeDriving({
    modeOf: async (id) => modeOfRow(await store.session(id)),
    publish: async (id, mode, driver) => {
      await store.updateSession(id, { control_mode: mode, driver: driver ? JSON.stringify(driver) : null });
      options.tell(id);
    },
    idleMs: options.idleSeconds * 1000,
  });
  const passes = viewerPasses(options.secret);
  cluster?.serveControl((id, action) => driving.act(id, action));
  /** What the API's `vm/control` and `vm/viewer` do (http/control.ts `SessionControl`). */
  const calls = {
    act: (row: SessionRow, action: ControlAction): Promise<ControlAnswer | Refusal> => {
      const owner = sessionOwner(row, nodeId);
      return owner.at === 'node' && cluster ? cluster.controlOn(owner.nodeId, row.id, action) : driving.act(row.id, action);
    },
    pass: (row: SessionRow, name: string | undefined) => passes.make(row.id, name),
  };
  return { driving, passes, calls };
}
