// Who drives a session, as a feature of the engine (issue 36; module.ts): one driving per session
// this node runs, decided here or forwarded to the node that runs it (decisions.md 100), the
// `people` channel that tells everyone, the API's `vm/control` and `vm/viewer`
// (channels/control/api-routes.ts) and, in a cluster, the node-link route other nodes forward the
// owner's calls by. The display and automation channels take their input through its `driving`.
import type { EngineCore } from '../core.js';
import type { EngineModule } from '../module.js';
import { controlApiRoutes } from '../channels/control/api-routes.js';
import { controlLink } from '../channels/control/control-link.js';
import { nodeControl } from '../channels/control/node-control.js';
import type { NodeDriving } from '../channels/control/node-driving.js';
import { peopleChannel } from '../channels/control/people.js';

export type ControlModule = EngineModule & { driving: NodeDriving };

export function controlModule(core: EngineCore): ControlModule {
  const { config } = core;
  const cluster = core.clustered ? controlLink(core.link) : undefined;
  const { driving, passes, calls } = nodeControl({ store: core.store, tell: (id) => core.presence.tell(id), idleSeconds: config.control.idleSeconds, secret: core.secret, nodeId: core.nodeId, ...(cluster ? { cluster } : {}) });
  return {
    name: 'control',
    driving,
    channels: [peopleChannel({ driving, passes, linkSeats: { control: config.viewers.controlling, view: config.viewers.watching } })],
    apiRoutes: controlApiRoutes(calls),
    ...(cluster ? { nodeRoutes: cluster.nodeRoutes } : {}),
  };
}
