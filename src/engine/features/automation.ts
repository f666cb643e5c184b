// Programs driving sessions, as a feature of the engine (decisions.md 54; module.ts): the API's
// `vm/automation` address, the `/automation/<token>` upgrade it names, and the automation channel
// that carries DevTools through the policy, on the node that runs the session.
import type { EngineCore } from '../core.js';
import { createAutomation } from '../http/automation.js';
import type { EngineModule } from '../module.js';
import type { NodeDriving } from '../channels/control/node-driving.js';
import { automationChannel } from '../channels/automation/automation.js';

export async function automationModule(core: EngineCore, driving: NodeDriving): Promise<EngineModule> {
  const { config, runtime, store } = core;
  const image = (id: string) => runtime.images.find((candidate) => candidate.id === id);
  // The automation secret, like the share-link secret, is the store's: every node checks every node's tokens.
  const automation = createAutomation({
    session: (id) => store.session(id),
    image,
    secret: await core.storedSecret('automation_secret'),
    tokenSeconds: config.automation.tokenSeconds,
    now: core.now,
    base: core.shareBase,
    router: core.router,
    clientAddress: core.clientAddress,
  });
  return {
    name: 'automation',
    channels: [automationChannel({ driving, programsPerSession: config.automation.programsPerSession, familyOf: (id) => image(id)?.family })],
    api: { automation: (account, id, version) => automation.address(account, id, version) },
    upgrades: [(request, socket, head) => automation.upgrade(request, socket, head)],
  };
}
