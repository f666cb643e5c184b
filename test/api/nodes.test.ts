// The operator's `nodes` commands on one engine (SQLite here, Postgres in the api-postgres project):
// the engine is a node of its own; list shows its load; drain stops new sessions while the
// running ones go on; a live node cannot be removed. (A cluster of three: test/cluster.)
import { describe, expect, it } from 'vitest';
import { useEngine } from './context.js';
import { PLANS, runCli, TEST_STORE, waitForStatus } from './harness.js';

const ctx = useEngine();

type NodeView = { id: string; state: string; alive: boolean; load: number; capacity: number | null; browsers: string[] };
const list = async () => (await runCli(ctx.engine.workspace, ['nodes', 'list'])) as NodeView[];

describe('remote-browser-kit nodes', () => {
  it('serve says which node it is and on which database', () => {
    expect(ctx.engine.facts.node).toMatch(/^node-[0-9a-f]{12}$/);
    expect(ctx.engine.facts.database).toBe(TEST_STORE);
  });

  it('list shows the engine as one live node, with the sessions it runs', async () => {
    expect(await list()).toEqual([expect.objectContaining({ id: ctx.engine.facts.node, state: 'active', alive: true, load: 0, capacity: null })]);
    const { api } = await ctx.account([PLANS.basic]);
    const created = await api.create({ browser: 'chromium', url: ctx.pages.page });
    expect(created.json.status).toBe('ok');
    ctx.track(api, created.json.vmId);
    expect((await list())[0]!.load).toBe(1);
    expect((await list())[0]!.browsers).toContain('chromium');
  });

  it('a node that runs cannot be removed; an unknown node is named', async () => {
    await expect(runCli(ctx.engine.workspace, ['nodes', 'remove', String(ctx.engine.facts.node)])).rejects.toThrow(/is running; drain it/);
    await expect(runCli(ctx.engine.workspace, ['nodes', 'drain', 'node-nope'])).rejects.toThrow(/unknown node \\?"node-nope/);
  });

  it('drain: no new session starts there, the running one goes on', async () => {
    const { api } = await ctx.account([PLANS.basic]);
    const running = await api.create({ browser: 'chromium', url: ctx.pages.page });
    ctx.track(api, running.json.vmId);
    expect(await runCli(ctx.engine.workspace, ['nodes', 'drain', String(ctx.engine.facts.node)])).toMatchObject({ id: ctx.engine.facts.node });
    const refused = await api.create({ browser: 'chromium', url: ctx.pages.page });
    expect(refused.json).toEqual({ status: 'error', message: expect.stringMatching(/at capacity.*try again/) });
    expect(await waitForStatus(api, running.json.vmId, ['running'], 20_000)).toBe('running');
    expect((await list())[0]).toMatchObject({ state: 'draining', alive: true });
  });
});
