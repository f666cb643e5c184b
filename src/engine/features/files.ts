// Files in and out of sessions, as a feature of the engine (decisions.md 55-57; module.ts): here
// through the program inside the session, another node's through the node link; the API's and
// the share link's transfers, and the `files` channel that tells a link's viewers what is there.
import type { EngineCore } from '../core.js';
import { FilesLink } from '../cluster/files-link.js';
import type { EngineModule } from '../module.js';
import { SessionFilesService } from '../sessions/files.js';
import { filesChannel } from '../channels/files/files.js';

export function filesModule(core: EngineCore): EngineModule {
  const { config, sessions, clustered } = core;
  const files: SessionFilesService = new SessionFilesService({ sessions, row: (id) => core.store.session(id), settings: config.files, ...(clustered ? { remote: (node: string, id: string) => link.at(node, id) } : {}) });
  const link = new FilesLink({ link: core.link, filesHere: (id) => files.here(id) });
  const transfers = { files, bytesPerSecond: config.files.bytesPerSecond };
  return {
    name: 'files',
    channels: [filesChannel({ snapshot: (id) => files.snapshot(id) })],
    api: { files: transfers },
    share: { files: transfers },
    ...(clustered ? { nodeRoutes: link.routes } : {}),
  };
}
