// Recordings as a feature of the engine (issue 35; module.ts): the recorded sessions' picture,
// sound and timeline kept on this node, any node's answered through the node link (decisions.md
// 107), replay links and their keyless page's API (decisions.md 110), and the hourly forgetting of
// recordings past their days. The sessions write into it (`recordHere`), so it is opened before them.
import { join } from 'node:path';
import type { EngineBase, EngineCore } from '../core.js';
import { RecordingsLink } from '../cluster/recordings-link.js';
import { recordingsHere } from '../http/recordings.js';
import type { EngineModule } from '../module.js';
import { createReplayApi } from '../viewer/replay-api.js';
import { followRecordedSessions, Recordings } from '../recordings/recordings.js';
import { ReplayLinks } from '../recordings/replay-links.js';

/** The recordings kept here, before the sessions that record into them. */
export function openRecordings(base: EngineBase): Recordings {
  const { config, store, planOf } = base;
  return new Recordings({
    dir: join(base.dataDir, 'recordings'),
    now: base.now,
    store,
    retentionDays: async (row): Promise<number> => (await planOf(row))?.recording_days ?? config.recordings.retentionDays,
    fullUrls: async (id): Promise<boolean> => {
      const row = await store.session(id);
      return (row && (await planOf(row))?.recording_full_urls) ?? false;
    },
    timelineBytes: config.recordings.timelineKb * 1024,
  });
}

export type RecordingsModule = EngineModule & { replayStatus: ReturnType<typeof createReplayApi>['pageStatus'] };

export async function recordingsModule(core: EngineCore, recordings: Recordings): Promise<RecordingsModule> {
  const { metrics, logger } = core;
  followRecordedSessions(recordings, { sessions: core.sessions, runtime: core.runtime, presence: core.presence, store: core.store });
  const here = recordingsHere(recordings);
  const link = core.clustered ? new RecordingsLink({ link: core.link, nodeId: core.nodeId, here, store: core.store }) : null;
  const access = link?.access ?? here;
  // Signed with the store's replay secret, so any node opens any node's links.
  const replayLinks = new ReplayLinks({ secret: await core.storedSecret('replay_link_secret'), shareBase: core.shareBase, now: core.now, store: core.store, recordings: access, retentionDays: recordings.retentionDays });
  const replayApi = createReplayApi({ links: replayLinks, recordings: access, limiter: core.limiter, clientAddress: core.clientAddress, ...(metrics ? { onRateLimited: () => metrics.rateLimited.inc({ limit: 'replay_lookup' }) } : {}) });
  let stopForgetting: (() => void) | undefined;
  return {
    name: 'recordings',
    api: { recordings: access, replayLinks },
    routes: (request, response, url) => replayApi.handle(request, response, url),
    ...(link ? { nodeRoutes: (request, response, url) => link.handle(request, response, url) } : {}),
    replayStatus: replayApi.pageStatus,
    start() {
      stopForgetting = recordings.forgetOldHourly((error) => logger.warn({ err: error }, 'old recordings could not be removed; the next round tries again'));
    },
    stop() {
      stopForgetting?.();
    },
  };
}
