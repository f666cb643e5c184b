// Recordings as a feature of the engine (issue 35; module.ts): the recorded sessions' picture,
// sound and timeline kept on this node, any node's answered through the node link (decisions.md
// 107), what recordings may take (the plans' caps and the node's free-space floor, decisions.md
// 131-132), replay links and their keyless page's API (decisions.md 110), and the rounds that
// check the caps and forget recordings past their days. The sessions record into it and a create
// is checked against its caps, so it is opened before them.
import { join } from 'node:path';
import type { EngineBase, EngineCore } from '../core.js';
import type { EngineModule } from '../module.js';
import { recordingAccountMeter, recordingApiRoutes } from '../recordings/api-routes.js';
import { RecordingCaps, type RecordingPlanCaps } from '../recordings/caps.js';
import { recordingsHere } from '../recordings/media.js';
import { followRecordedSessions, Recordings, type RecordingsAccess } from '../recordings/recordings.js';
import { RecordingsLink } from '../recordings/recordings-link.js';
import { ReplayLinks } from '../recordings/replay-links.js';
import { createReplayApi } from '../recordings/replay-api.js';

/** The recordings kept here, the way any node's are read, and their caps: before the sessions. */
export interface OpenedRecordings {
  recordings: Recordings;
  caps: RecordingCaps;
  access: RecordingsAccess;
  link: RecordingsLink | null;
}

export function openRecordings(base: EngineBase): OpenedRecordings {
  const { config, store, planOf } = base;
  const recordings = new Recordings({
    dir: join(base.dataDir, 'recordings'),
    now: base.now,
    store,
    retentionDays: async (row): Promise<number> => (await planOf(row))?.recording_days ?? config.recordings.retentionDays,
    fullUrls: async (id): Promise<boolean> => {
      const row = await store.session(id);
      return (row && (await planOf(row))?.recording_full_urls) ?? false;
    },
    timelineBytes: config.recordings.timelineKb * 1024,
    tell: (id) => base.presence.tell(id),
  });
  // A recording stays on the node that ran its session; any node answers for it.
  const here = recordingsHere(recordings);
  const link = base.clustered ? new RecordingsLink({ link: base.link, nodeId: base.nodeId, here, store }) : null;
  const caps = new RecordingCaps({
    recordings,
    store,
    planOf: (row): Promise<RecordingPlanCaps | undefined> => planOf(row),
    floorMb: config.recordings.freeSpaceFloorMb,
    now: base.now,
    ...(link ? { keptElsewhereMb: (accountId: string) => link.keptElsewhereMb(accountId) } : {}),
  });
  return { recordings, caps, access: link?.access ?? here, link };
}

export type RecordingsModule = EngineModule & { replayStatus: ReturnType<typeof createReplayApi>['pageStatus'] };

export async function recordingsModule(core: EngineCore, opened: OpenedRecordings): Promise<RecordingsModule> {
  const { metrics, logger } = core;
  const { recordings, caps, access, link } = opened;
  followRecordedSessions(recordings, { sessions: core.sessions, runtime: core.runtime, presence: core.presence, store: core.store });
  // Signed with the store's replay secret, so any node opens any node's links.
  const replayLinks = new ReplayLinks({ secret: await core.storedSecret('replay_link_secret'), shareBase: core.shareBase, now: core.now, store: core.store, recordings: access, retentionDays: recordings.retentionDays });
  const replayApi = createReplayApi({ links: replayLinks, recordings: access, limiter: core.limiter, clientAddress: core.clientAddress, ...(metrics ? { onRateLimited: () => metrics.rateLimited.inc({ limit: 'replay_lookup' }) } : {}) });
  const rounds: Array<() => void> = [];
  return {
    name: 'recordings',
    apiRoutes: recordingApiRoutes(access, replayLinks),
    accountMeters: [recordingAccountMeter(access)],
    routes: (request, response, url) => replayApi.handle(request, response, url),
    ...(link ? { nodeRoutes: link.routes } : {}),
    replayStatus: replayApi.pageStatus,
    start() {
      rounds.push(caps.checkEvery((error) => logger.warn({ err: error }, 'recordings could not be checked against their caps; the next round tries again')));
      rounds.push(recordings.forgetOldHourly((error) => logger.warn({ err: error }, 'old recordings could not be removed; the next round tries again')));
    },
    stop() {
      for (const stopRound of rounds.splice(0)) stopRound();
    },
  };
}
