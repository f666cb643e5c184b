// Saved profiles as a feature of the engine (decisions.md 85-89; module.ts): the service the
// sessions restore from and save into (so it is opened before them), the API's profile calls
// (profiles/api-routes.ts) and the account's profile meters.
import type { EngineBase } from '../core.js';
import type { EngineModule } from '../module.js';
import { profileApiRoutes } from '../profiles/api-routes.js';
import { openProfileService, type ProfileService } from '../profiles/profiles.js';

export function openProfiles(base: EngineBase): ProfileService {
  const { config, dataDir, store, accounts, runtime, now, logger } = base;
  return openProfileService({ config, dataDir, store, plan: (id) => accounts.plan(id), image: (id) => runtime.image(id), now, warn: (message) => logger.warn(message) });
}

export function profilesModule(profiles: ProfileService): EngineModule {
  return { name: 'profiles', apiRoutes: profileApiRoutes(profiles), accountMeters: [async (account) => (await profiles.meters(account)) ?? {}] };
}
