// GET /v8/user/api and GET /v8/user/quota: the meters at top level are sums over the account's
// pools (null when any pool's value is null); running counts starting and running sessions, the
// cycle counts the sessions created; each cycle's dates are cycle_start and cycle_end.
import { describe, expect, it } from 'vitest';
import { userApiResponseSchema, userQuotaResponseSchema } from '../../src/protocol/index.js';
import { useEngine } from './context.js';
import { addMonths, describeReply, PLANS, removeSessions, sessionStatus, waitForStatus, type PlanConfig, type TestAccount } from './harness.js';

const ctx = useEngine();

const METER_FIELDS = [
  'cycle_start',
  'cycle_end',
  'cycle_session_limit',
  'cycle_sessions_used',
  'cycle_sessions_remaining',
  'running_session_limit',
  'running_sessions_used',
  'running_sessions_remaining',
  'residential_cycle_mb_limit',
  'residential_bytes_used_cycle',
];

function expectedPool(account: TestAccount, index: number, plan: PlanConfig) {
  const subscription = account.subscriptions[index]!;
  return {
    subscription_id: subscription.id,
    plan_id: plan.id,
    plan_name: plan.name,
    cycle_start: subscription.cycle_start,
    cycle_end: addMonths(subscription.cycle_start, 1),
    cycle_session_limit: plan.cycle_session_limit,
    cycle_sessions_used: 0,
    cycle_sessions_remaining: plan.cycle_session_limit,
    running_session_limit: plan.running_session_limit,
    running_sessions_used: 0,
    running_sessions_remaining: plan.running_session_limit,
    residential_cycle_mb_limit: plan.residential_cycle_mb_limit,
    residential_bytes_used_cycle: 0,
  };
}

describe('a one-plan account', () => {
  it('user/api: contact, programmatic access, has_plan, meters at top level, one pool', async () => {
    const { account, api } = await ctx.account([PLANS.basic], { contact: 'x@example.com' });
    expect(account.subscriptions).toHaveLength(1);
    expect(account.subscriptions[0]!.cycle_start).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const reply = await api.user();
    expect(reply.http).toBe(200);
    expect(userApiResponseSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
    const pool = expectedPool(account, 0, PLANS.basic);
    const { subscription_id: _s, plan_id: _p, plan_name: _n, ...meters } = pool;
    expect(reply.json).toMatchObject({ status: 'ok', contact: 'x@example.com', feature_programmatic_access: true, has_plan: true, ...meters, pools: [pool] });
  });

  it('user/quota: the same without contact and feature_programmatic_access', async () => {
    const { account, api } = await ctx.account([PLANS.basic]);
    const reply = await api.quota();
    expect(reply.http).toBe(200);
    expect(userQuotaResponseSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
    const pool = expectedPool(account, 0, PLANS.basic);
    const { subscription_id: _s, plan_id: _p, plan_name: _n, ...meters } = pool;
    expect(reply.json).toMatchObject({ status: 'ok', has_plan: true, ...meters, pools: [pool] });
    expect(reply.json).not.toHaveProperty('contact');
    expect(reply.json).not.toHaveProperty('feature_programmatic_access');
    const user = (await api.user()).json;
    for (const field of [...METER_FIELDS, 'has_plan', 'pools']) expect(reply.json[field], field).toEqual(user[field]);
  });
});

describe('an account with two subscriptions', () => {
  it('totals are sums over the pools', async () => {
    const { account, api } = await ctx.account([PLANS.geo, PLANS.geoPlus]);
    expect(account.subscriptions.map((s) => s.plan_id)).toEqual([PLANS.geo.id, PLANS.geoPlus.id]);
    for (const reply of [await api.user(), await api.quota()]) {
      expect(reply.json.pools).toMatchObject([expectedPool(account, 0, PLANS.geo), expectedPool(account, 1, PLANS.geoPlus)]);
      expect(reply.json).toMatchObject({
        status: 'ok',
        has_plan: true,
        cycle_session_limit: 30,
        cycle_sessions_used: 0,
        cycle_sessions_remaining: 30,
        running_session_limit: 3,
        running_sessions_used: 0,
        running_sessions_remaining: 3,
        residential_cycle_mb_limit: 300,
        residential_bytes_used_cycle: 0,
        cycle_start: account.subscriptions[0]!.cycle_start,
        cycle_end: addMonths(account.subscriptions[0]!.cycle_start, 1),
      });
    }
  });

  it('a total is null when any pool\'s value is null', async () => {
    const { account, api } = await ctx.account([PLANS.basic, PLANS.unlimited]);
    for (const reply of [await api.user(), await api.quota()]) {
      expect(reply.json.pools).toMatchObject([expectedPool(account, 0, PLANS.basic), expectedPool(account, 1, PLANS.unlimited)]);
      expect(reply.json.pools[1].cycle_session_limit).toBeNull();
      expect(reply.json).toMatchObject({
        cycle_session_limit: null,
        cycle_sessions_used: 0,
        cycle_sessions_remaining: null,
        running_session_limit: 6,
        running_sessions_used: 0,
        running_sessions_remaining: 6,
        residential_cycle_mb_limit: null,
        residential_bytes_used_cycle: 0,
      });
    }
    // One pool with an allowance and one without: still null.
    const mixed = await ctx.account([PLANS.geo, PLANS.basic]);
    const quota = (await mixed.api.quota()).json;
    expect(quota.residential_cycle_mb_limit).toBeNull();
    expect(quota.cycle_session_limit).toBe(25);
    expect(quota.pools.map((p: { residential_cycle_mb_limit: number | null }) => p.residential_cycle_mb_limit)).toEqual([100, null]);
  });

  it('a new session takes its slot from the first pool; the totals and the create quota follow', async () => {
    const { api } = await ctx.account([PLANS.basic, PLANS.unlimited]);
    const reply = await api.create({ browser: 'chromium', url: ctx.pages.page });
    expect(reply.json.status, describeReply(reply)).toBe('ok');
    ctx.track(api, reply.json.vmId);
    expect(reply.json.quota).toMatchObject({
      running_session_limit: 6,
      running_sessions_used: 1,
      running_sessions_remaining: 5,
      cycle_session_limit: null,
      cycle_sessions_used: 1,
      cycle_sessions_remaining: null,
    });
    const quota = (await api.quota()).json;
    expect(reply.json.quota).toMatchObject({ cycle_start: quota.cycle_start, cycle_end: quota.cycle_end });
    expect(quota.pools[0]).toMatchObject({ running_sessions_used: 1, running_sessions_remaining: 2, cycle_sessions_used: 1, cycle_sessions_remaining: 4 });
    expect(quota.pools[1]).toMatchObject({ running_sessions_used: 0, running_sessions_remaining: 3, cycle_sessions_used: 0, cycle_sessions_remaining: null });
    expect(quota).toMatchObject({ running_sessions_used: 1, running_sessions_remaining: 5, cycle_sessions_used: 1 });
    await removeSessions(api, [reply.json.vmId]);
  });

  it('when the first pool\'s cycle is used up, new sessions come from the next pool', async () => {
    const { api } = await ctx.account([PLANS.basic, PLANS.unlimited]);
    for (let i = 0; i < PLANS.basic.cycle_session_limit! + 1; i++) {
      const reply = await api.create({ browser: 'chromium', url: ctx.pages.page });
      expect(reply.json.status, describeReply(reply)).toBe('ok');
      ctx.track(api, reply.json.vmId);
      expect(reply.json.quota).toMatchObject({ cycle_sessions_used: i + 1, cycle_session_limit: null, cycle_sessions_remaining: null });
      expect(await waitForStatus(api, reply.json.vmId, ['running'])).toBe('running');
      await removeSessions(api, [reply.json.vmId]);
    }
    const quota = (await api.quota()).json;
    expect(quota.pools[0]).toMatchObject({ cycle_sessions_used: 5, cycle_sessions_remaining: 0 });
    expect(quota.pools[1]).toMatchObject({ cycle_sessions_used: 1, cycle_sessions_remaining: null });
    expect(quota).toMatchObject({ cycle_sessions_used: 6, cycle_sessions_remaining: null, running_sessions_used: 0 });
    // Six sessions started and removed one after another: on a loaded machine that takes minutes.
  }, 240_000);
});

describe('cycle_end', () => {
  it('is the day the cycle ends, one calendar month after cycle_start, the day clamped to the month\'s end', async () => {
    // A cycle start still to come is the account's first cycle, so its dates are known today.
    for (const [cycleStart, cycleEnd] of [['2099-01-31', '2099-02-28'], ['2099-12-31', '2100-01-31'], ['2096-01-30', '2096-02-29']] as const) {
      const { api } = await ctx.account([PLANS.basic, PLANS.unlimited], { cycleStart });
      for (const reply of [await api.user(), await api.quota()]) {
        expect(reply.json, describeReply(reply)).toMatchObject({ cycle_start: cycleStart, cycle_end: cycleEnd });
        for (const pool of reply.json.pools) expect(pool).toMatchObject({ cycle_start: cycleStart, cycle_end: cycleEnd });
      }
    }
  });
});

describe('counting sessions', () => {
  it('running_sessions_used counts starting and running sessions; cycle_sessions_used counts created ones', async () => {
    const { api } = await ctx.account([PLANS.basic]);
    const slow = await api.create({ browser: 'chromium', url: ctx.pages.slow(4000) });
    expect(slow.json.status, describeReply(slow)).toBe('ok');
    ctx.track(api, slow.json.vmId);
    expect(await sessionStatus(api, slow.json.vmId)).toBe('starting');
    let quota = (await api.quota()).json;
    expect(quota).toMatchObject({ running_sessions_used: 1, running_sessions_remaining: 2, cycle_sessions_used: 1, cycle_sessions_remaining: 4 });

    const fast = await api.create({ browser: 'chromium', url: ctx.pages.page });
    expect(fast.json.status, describeReply(fast)).toBe('ok');
    ctx.track(api, fast.json.vmId);
    expect(fast.json.quota).toMatchObject({ running_sessions_used: 2, running_sessions_remaining: 1, cycle_sessions_used: 2, cycle_sessions_remaining: 3 });
    expect(await waitForStatus(api, fast.json.vmId, ['running'])).toBe('running');
    expect(await waitForStatus(api, slow.json.vmId, ['running'])).toBe('running');
    quota = (await api.quota()).json;
    expect(quota).toMatchObject({ running_sessions_used: 2, running_sessions_remaining: 1, cycle_sessions_used: 2 });
    expect((await api.user()).json).toMatchObject({ running_sessions_used: 2, cycle_sessions_used: 2 });

    // An ended session no longer runs, but it was started in this cycle.
    expect((await api.remove(fast.json.vmId)).json.status).toBe('ok');
    quota = (await api.quota()).json;
    expect(quota).toMatchObject({ running_sessions_used: 1, running_sessions_remaining: 2, cycle_sessions_used: 2, cycle_sessions_remaining: 3 });
    await removeSessions(api, [slow.json.vmId, fast.json.vmId]);
    quota = (await api.quota()).json;
    expect(quota).toMatchObject({ running_sessions_used: 0, running_sessions_remaining: 3, cycle_sessions_used: 2, cycle_sessions_remaining: 3 });
    expect(quota.pools[0]).toMatchObject({ running_sessions_used: 0, cycle_sessions_used: 2 });
  });
});
