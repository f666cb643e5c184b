// The v7 interface as callers of its earlier description use it, over HTTP against the real
// engine: the credit-based meter names beside the session-based ones (create's quota, user/api,
// user/quota), cycle_end, two-letter ISO country codes, and share links without a language segment.
import { afterEach, describe, expect, it } from 'vitest';
import {
  createResponseSchema,
  v7CreateResponseSchema,
  v7UserApiResponseSchema,
  v7UserQuotaResponseSchema,
} from '../../src/protocol/index.js';
import { useEngine } from './context.js';
import { addMonths, DEAD_UPSTREAM, describeReply, LOCATIONS, PLANS, removeSessions, SHARE_BASE, testConfig, type Api, type Reply } from './harness.js';

/** A v7 quota object on the basic plan (3 running, 5 a cycle) with one session started. */
function oneSessionOfBasic(cycleStart: string) {
  return {
    running_session_limit: 3,
    running_sessions_used: 1,
    running_sessions_remaining: 2,
    cycle_session_limit: 5,
    cycle_sessions_used: 1,
    cycle_sessions_remaining: 4,
    cycle_start: cycleStart,
    cycle_end: addMonths(cycleStart, 1),
    credits_total: 5,
    credits_used: 1,
    credits_available: 4,
    concurrency_total: 3,
    concurrency_used: 1,
    concurrency_available: 2,
  };
}

/** A country the list names with a code that is not its ISO code (ISO: gb). One exit, so a second session finds it taken. */
const UNITED_KINGDOM = {
  code: 'uk',
  name: 'United Kingdom',
  default: 'uk-lon',
  cities: [{ code: 'uk-lon', location: 'London', upstream: DEAD_UPSTREAM, capacity: 1 }],
};

const ctx = useEngine({ config: testConfig({ locations: [...LOCATIONS, UNITED_KINGDOM] }) });

const LINK_ID = '[A-Za-z0-9_-]{22,}';

/** Sessions of the running test: each test ends its own, so browsers do not pile up on the host. */
const made: Array<{ api: Api; vmId: string }> = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map(({ api, vmId }) => removeSessions(api, [vmId])));
});

function started(api: Api, reply: Reply): Reply {
  if (reply.json?.status === 'ok') {
    ctx.track(api, reply.json.vmId);
    made.push({ api, vmId: reply.json.vmId });
  }
  return reply;
}

const createV7 = async (api: Api, body: Record<string, unknown>) =>
  started(api, await api.post('/v7/vm/create', { browser: 'chromium', url: ctx.pages.page, ...body }));
const createV8 = async (api: Api, body: Record<string, unknown>) =>
  started(api, await api.create({ browser: 'chromium', url: ctx.pages.page, ...body }));

/** The credit-based names of the earlier v7 description for a set of session meters. */
function creditNames(meters: Record<string, unknown>) {
  return {
    credits_total: meters.cycle_session_limit,
    credits_used: meters.cycle_sessions_used,
    credits_available: meters.cycle_sessions_remaining,
    concurrency_total: meters.running_session_limit,
    concurrency_used: meters.running_sessions_used,
    concurrency_available: meters.running_sessions_remaining,
    cycle_start: meters.cycle_start,
    cycle_end: meters.cycle_end,
  };
}

describe('v7 quota objects carry the credit-based names too', () => {
  it('create: quota has credits (cycle sessions), concurrency (running sessions), cycle_start and cycle_end', async () => {
    const { account, api } = await ctx.account([PLANS.basic]);
    const reply = await createV7(api, {});
    expect(v7CreateResponseSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
    const cycleStart = account.subscriptions[0]!.cycle_start;
    expect(reply.json.quota).toEqual(oneSessionOfBasic(cycleStart));
    // v8 is unchanged.
    const v8 = await createV8(api, {});
    expect(createResponseSchema.safeParse(v8.json).success, describeReply(v8)).toBe(true);
    expect(Object.keys(v8.json.quota).sort()).toEqual(Object.keys(createResponseSchema.shape.quota.shape).sort());
  });

  it('an idempotent repeat answers the same quota, credit names included', async () => {
    const { api } = await ctx.account([PLANS.basic]);
    const first = await createV7(api, { idempotencyKey: 'v7-repeat' });
    const again = await createV7(api, { idempotencyKey: 'v7-repeat' });
    expect(again.json, describeReply(again)).toEqual(first.json);
    expect(again.json.quota).toMatchObject({ credits_used: 1, concurrency_used: 1 });
  });

  it('GET /v7/user/api: everything v8 answers, plus api_enabled, browser_quota, browser_used, browser_remaining and quota', async () => {
    const { account, api } = await ctx.account([PLANS.basic], { contact: 'v7-user@example.com' });
    await createV7(api, {});
    const reply = await api.get('/v7/user/api');
    expect(v7UserApiResponseSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
    const v8 = (await api.user()).json;
    expect(reply.json).toMatchObject(v8);
    const cycleStart = account.subscriptions[0]!.cycle_start;
    expect(reply.json).toMatchObject({
      contact: 'v7-user@example.com',
      api_enabled: true,
      cycle_start: cycleStart,
      browser_quota: 5,
      browser_used: 1,
      browser_remaining: 4,
    });
    expect(reply.json.quota).toEqual(oneSessionOfBasic(cycleStart));
    expect(reply.json.quota).toMatchObject(creditNames(v8));
    // The v8 answer has none of them.
    for (const field of ['api_enabled', 'browser_quota', 'quota', 'credits_total']) expect(v8).not.toHaveProperty(field);
  });

  it('GET /v7/user/quota: everything v8 answers, plus the quota fields flat', async () => {
    const { api } = await ctx.account([PLANS.basic, PLANS.geo]);
    await createV7(api, {});
    const reply = await api.get('/v7/user/quota');
    expect(v7UserQuotaResponseSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
    const v8 = (await api.quota()).json;
    expect(reply.json).toMatchObject(v8);
    expect(reply.json).toMatchObject({
      credits_total: 25,
      credits_used: 1,
      credits_available: 24,
      concurrency_total: 5,
      concurrency_used: 1,
      concurrency_available: 4,
      cycle_start: v8.cycle_start,
      cycle_end: v8.cycle_end,
    });
    expect(v8).not.toHaveProperty('credits_total');
  });

  it('credits are null when the cycle has no cap; api_enabled follows programmatic access', async () => {
    const { api } = await ctx.account([PLANS.unlimited]);
    expect((await api.get('/v7/user/quota')).json).toMatchObject({ credits_total: null, credits_used: 0, credits_available: null, concurrency_total: 3 });
    const user = (await api.get('/v7/user/api')).json;
    expect(user).toMatchObject({ api_enabled: true, browser_quota: null, browser_used: 0, browser_remaining: null });
    expect(user.quota).toMatchObject({ credits_total: null, credits_available: null });
    const created = await createV7(api, {});
    expect(created.json.quota).toMatchObject({ credits_total: null, credits_used: 1, credits_available: null });

    const viewer = await ctx.account([PLANS.noApi]);
    const viewerUser = await viewer.api.get('/v7/user/api');
    expect(viewerUser.json, describeReply(viewerUser)).toMatchObject({ status: 'ok', api_enabled: false, feature_programmatic_access: false });
  });
});

describe('v7 country takes two-letter ISO codes', () => {
  it('gb means the listed uk; v8 still takes codes only as listed', async () => {
    const { api } = await ctx.account([PLANS.unlimited]);
    const viaIso = await createV7(api, { country: 'gb' });
    expect(viaIso.json, describeReply(viaIso)).toMatchObject({ status: 'ok', location_applied: true });
    // The one London exit is taken by the gb session: a uk session finds no free exit.
    const viaListed = await createV7(api, { country: 'uk' });
    expect(viaListed.json, describeReply(viaListed)).toMatchObject({ status: 'ok', location_applied: false, location_reason: 'unavailable' });

    const v8 = await createV8(api, { country: 'gb' });
    expect(v8.json).toEqual({ status: 'denied', message: 'country: unsupported exit location' });
    for (const country of ['zz', 'GB', 'gb-lon']) {
      const unknown = await createV7(api, { country });
      expect(unknown.json, country).toEqual({ status: 'denied', message: 'country: unsupported exit location' });
    }
  });

  it('still needs location access in the plan', async () => {
    const { api } = await ctx.account([PLANS.basic]);
    expect((await createV7(api, { country: 'gb' })).json).toMatchObject({ status: 'upgrade' });
  });
});

describe('v7 share links', () => {
  it('without shareLanguage: {share_base}/s?<link_id>, which the share API reads as English', async () => {
    const { api } = await ctx.account([PLANS.burst]);
    const reply = await createV7(api, {});
    expect(reply.json.shareUrlPath, describeReply(reply)).toMatch(new RegExp(`^/s\\?${LINK_ID}$`));
    expect(reply.json.shareUrl).toBe(`${SHARE_BASE}${reply.json.shareUrlPath}`);
    const linkId = reply.json.shareUrlPath.slice('/s?'.length);
    expect((await ctx.anon.get(`/share/${linkId}`)).json).toMatchObject({ status: 'ok', language: 'en' });
    // The same request repeated under its idempotency key keeps the form.
    const keyed = await createV7(api, { idempotencyKey: 'v7-link' });
    expect((await createV7(api, { idempotencyKey: 'v7-link' })).json.shareUrl).toBe(keyed.json.shareUrl);
    expect(keyed.json.shareUrlPath).toMatch(new RegExp(`^/s\\?${LINK_ID}$`));
  });

  it('with shareLanguage: /<lang>/s?<link_id>; v8 without it: /en/s?<link_id>', async () => {
    const { api } = await ctx.account([PLANS.burst]);
    const german = await createV7(api, { shareLanguage: 'de' });
    expect(german.json.shareUrl, describeReply(german)).toMatch(new RegExp(`^${SHARE_BASE}/de/s\\?${LINK_ID}$`));
    const english = await createV7(api, { shareLanguage: 'en' });
    expect(english.json.shareUrlPath).toMatch(new RegExp(`^/en/s\\?${LINK_ID}$`));
    const v8 = await createV8(api, {});
    expect(v8.json.shareUrlPath, describeReply(v8)).toMatch(new RegExp(`^/en/s\\?${LINK_ID}$`));
  });
});
