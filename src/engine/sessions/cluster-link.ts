// How the session service reaches the other nodes of a cluster; cluster/node-link.ts implements
// it, and on one machine there is none. The service never assumes one process (Selenium Grid's
// SessionMap and Node seams): it asks this link where to start, announce and remove.
import type { NodeWithLoad } from '../store/store.js';
import type { NodeAnswer } from './outcomes.js';

/** How the service reaches the other nodes of a cluster (cluster/node-link.ts); absent on one machine. */
export interface ClusterLink {
  /** Whether a node counts as alive for placement (its last heartbeat is recent enough, by the wall clock). */
  alive(node: NodeWithLoad): boolean;
  /** Tells every other node that a session's status moved. */
  announce(id: string, status: string): void;
  /** Tells the node a session was placed on to start it. */
  placed(nodeId: string, sessionId: string): void;
  /** Has the node that runs a session remove it. */
  removeOn(nodeId: string, accountId: string, sessionId: string): Promise<NodeAnswer>;
}
