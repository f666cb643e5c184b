// The browser's tabs, as a feature of the engine (issue 36; module.ts): read and changed by the
// share API on the node that runs the session (share-tabs.ts), and in a cluster through the node
// link from any other (decisions.md 117).
import type { EngineCore } from '../core.js';
import { TabsLink } from '../cluster/tabs-link.js';
import type { EngineModule } from '../module.js';
import { tabsHere } from '../viewer/share-tabs.js';

export function tabsModule(core: EngineCore): EngineModule {
  if (!core.clustered) return { name: 'tabs', share: { tabs: tabsHere(core.sessions) } };
  const link = new TabsLink({ link: core.link, store: core.store, nodeId: core.nodeId, here: tabsHere(core.sessions) });
  return {
    name: 'tabs',
    share: { tabs: link.access },
    nodeRoutes: link.routes,
    start: () => link.start(),
    stop: () => link.close(),
  };
}
