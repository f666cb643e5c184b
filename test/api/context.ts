// One engine (and one start-page server) per test file: started in beforeAll, stopped in
// afterAll with every session the file created removed first.
import { afterAll, beforeAll } from 'vitest';
import {
  Api,
  createAccount,
  removeSessions,
  removeWorkspace,
  startEngine,
  startPageServer,
  type EngineProcess,
  type PageServer,
  type PlanConfig,
  type StartOptions,
  type TestAccount,
} from './harness.js';

export interface EngineContext {
  engine: EngineProcess;
  pages: PageServer;
  /** No key. */
  anon: Api;
  /** Creates an account on the running engine's data directory and returns it with a keyed client. */
  account(plans: PlanConfig[], options?: { contact?: string; cycleStart?: string }): Promise<{ account: TestAccount; api: Api }>;
  /** Remembers a session so afterAll removes it. */
  track(api: Api, vmId: string): void;
}

export function useEngine(options: StartOptions = {}): EngineContext {
  const tracked = new Map<string, Api>();
  const ctx = {
    anon: undefined as unknown as Api,
    async account(plans: PlanConfig[], accountOptions: { contact?: string; cycleStart?: string } = {}) {
      const account = await createAccount(ctx.engine.workspace, plans, accountOptions);
      return { account, api: new Api(ctx.engine.url, account.key) };
    },
    track(api: Api, vmId: string) {
      tracked.set(vmId, api);
    },
  } as EngineContext;

  beforeAll(async () => {
    ctx.pages = await startPageServer();
    ctx.engine = await startEngine(options);
    ctx.anon = new Api(ctx.engine.url);
  }, 60_000);

  afterAll(async () => {
    try {
      if (ctx.engine?.alive()) {
        const byApi = new Map<Api, string[]>();
        for (const [vmId, api] of tracked) byApi.set(api, [...(byApi.get(api) ?? []), vmId]);
        await Promise.all([...byApi].map(([api, ids]) => removeSessions(api, ids)));
      }
    } finally {
      await ctx.engine?.stop();
      await removeWorkspace(ctx.engine?.workspace);
      await ctx.pages?.close();
    }
  }, 60_000);

  return ctx;
}
