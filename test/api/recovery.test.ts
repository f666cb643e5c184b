// Restart recovery: the engine is killed with SIGKILL and started again on the same data. A session
// that was running is `suspended` (its runtime is gone) and no longer counts as running; one that
// was still `starting` is `error` and does not count in the cycle (decisions.md 1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Api,
  createAccount,
  describeReply,
  makeWorkspace,
  PLANS,
  removeSessions,
  removeWorkspace,
  sessionStatus,
  startEngine,
  startPageServer,
  testConfig,
  waitForStatus,
  type EngineProcess,
  type PageServer,
  type Workspace,
} from './harness.js';

let pages: PageServer;
let workspace: Workspace;
let first: EngineProcess;
let second: EngineProcess | undefined;
let running: { api: Api; vmId: string };
let starting: { api: Api; vmId: string };

beforeAll(async () => {
  pages = await startPageServer();
  workspace = await makeWorkspace(testConfig());
  first = await startEngine({ workspace });
});

afterAll(async () => {
  try {
    if (second?.alive()) {
      for (const session of [running, starting]) {
        if (session) await removeSessions(new Api(second.url, session.api.key), [session.vmId]);
      }
    }
  } finally {
    await first?.stop();
    await second?.stop();
    await removeWorkspace(workspace);
    await pages?.close();
  }
}, 60_000);

describe('after kill -9 and a restart on the same data', () => {
  it('before the kill: one session running, one still starting', async () => {
    const a = await createAccount(workspace, [PLANS.basic]);
    const b = await createAccount(workspace, [PLANS.basic]);
    const apiA = new Api(first.url, a.key);
    const apiB = new Api(first.url, b.key);

    const ra = await apiA.create({ browser: 'chromium', url: pages.page });
    expect(ra.json.status, describeReply(ra)).toBe('ok');
    running = { api: apiA, vmId: ra.json.vmId };
    expect(await waitForStatus(apiA, running.vmId, ['running'])).toBe('running');

    expect((await apiA.quota()).json).toMatchObject({ running_sessions_used: 1, cycle_sessions_used: 1 });

    // Create answers at once, while the session's sandbox, display and browser are still starting
    // (half a second or more): the engine dies right then.
    const rb = await apiB.create({ browser: 'chromium', url: pages.hang });
    expect(rb.json.status, describeReply(rb)).toBe('ok');
    starting = { api: apiB, vmId: rb.json.vmId };
    const [startingStatus, quotaB] = await Promise.all([sessionStatus(apiB, starting.vmId), apiB.quota()]);
    await first.kill9();
    expect(startingStatus).toBe('starting');
    expect(quotaB.json).toMatchObject({ running_sessions_used: 1, cycle_sessions_used: 1 });
    expect(first.alive()).toBe(false);
    second = await startEngine({ workspace });
    running = { api: new Api(second.url, a.key), vmId: running.vmId };
    starting = { api: new Api(second.url, b.key), vmId: starting.vmId };
  });

  it('the running session is suspended and no longer counts as running; it still counts in the cycle', async () => {
    const { api, vmId } = running;
    const data = await api.data(vmId);
    expect(data.json.status, describeReply(data)).toBe('ok');
    expect(data.json.data).toHaveLength(1);
    expect(data.json.data[0].status).toBe('suspended');
    expect((await api.quota()).json).toMatchObject({ running_sessions_used: 0, running_sessions_remaining: 3, cycle_sessions_used: 1 });
  });

  it('the session that was starting is error and does not count in the cycle', async () => {
    const { api, vmId } = starting;
    expect(await sessionStatus(api, vmId)).toBe('error');
    expect((await api.quota()).json).toMatchObject({ running_sessions_used: 0, running_sessions_remaining: 3, cycle_sessions_used: 0, cycle_sessions_remaining: 5 });
  });

  it('they stay so (the restarted engine does not bring them back)', async () => {
    await new Promise((r) => setTimeout(r, 1500));
    expect(await sessionStatus(running.api, running.vmId)).toBe('suspended');
    expect(await sessionStatus(starting.api, starting.vmId)).toBe('error');
  });

  it('remove moves suspended and error sessions to deleted', async () => {
    for (const { api, vmId } of [running, starting]) {
      const reply = await api.remove(vmId);
      expect(reply.json).toEqual({ status: 'ok' });
      expect(await sessionStatus(api, vmId)).toBe('deleted');
      expect((await api.remove(vmId)).json).toEqual({ status: 'ok' });
      expect(await sessionStatus(api, vmId)).toBe('deleted');
    }
  });

  it('the restarted engine starts new sessions for the same key', async () => {
    const { api } = running;
    const reply = await api.create({ browser: 'chromium', url: pages.page });
    expect(reply.json.status, describeReply(reply)).toBe('ok');
    expect(reply.json.quota).toMatchObject({ running_sessions_used: 1, cycle_sessions_used: 2 });
    expect(await waitForStatus(api, reply.json.vmId, ['running'])).toBe('running');
    await removeSessions(api, [reply.json.vmId]);
    expect(await sessionStatus(api, reply.json.vmId)).toBe('deleted');
  });
});
