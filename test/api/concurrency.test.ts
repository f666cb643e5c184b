// Limits under concurrent requests: idempotencyKey repeats start one session; the running limit
// lets exactly that many sessions through, whatever arrives at once.
import { describe, expect, it } from 'vitest';
import { createResponseSchema, failureSchema } from '../../src/protocol/index.js';
import { useEngine } from './context.js';
import { describeReply, PLANS, removeSessions, type Reply } from './harness.js';

const ctx = useEngine();

const CONCURRENT = 50;

function okReplies(replies: Reply[]) {
  return replies.filter((r) => r.json?.status === 'ok');
}

describe('idempotencyKey', () => {
  it(`${CONCURRENT} concurrent creates with the same key start exactly one session, and all answer the same`, async () => {
    const { api } = await ctx.account([PLANS.burst]);
    const body = { browser: 'chromium', url: ctx.pages.page, idempotencyKey: 'same-key-1' };
    const replies = await Promise.all(Array.from({ length: CONCURRENT }, () => api.create(body)));
    for (const r of okReplies(replies)) ctx.track(api, r.json.vmId);
    for (const reply of replies) {
      expect(reply.http, describeReply(reply)).toBe(200);
      expect(createResponseSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
    }
    const first = replies[0]!.json;
    for (const reply of replies) {
      expect(reply.json.vmId).toBe(first.vmId);
      expect(reply.json.shareUrl).toBe(first.shareUrl);
      expect(reply.json.shareUrlPath).toBe(first.shareUrlPath);
      expect(reply.json.quota).toEqual(first.quota);
    }
    expect(first.quota).toMatchObject({ running_sessions_used: 1, cycle_sessions_used: 1 });

    const list = await api.data();
    expect(list.json.data).toHaveLength(1);
    const quota = (await api.quota()).json;
    expect(quota).toMatchObject({ running_sessions_used: 1, cycle_sessions_used: 1 });

    // A later repeat still gets the first answer.
    const again = await api.create(body);
    expect(again.json).toEqual(first);
    expect((await api.data()).json.data).toHaveLength(1);

    // The same key with a different request is refused, and starts nothing.
    const different = await api.create({ ...body, shareLanguage: 'de' });
    expect(different.http).toBe(200);
    expect(failureSchema.safeParse(different.json).success, describeReply(different)).toBe(true);
    expect(different.json.status).toBe('denied');
    expect(different.json.message).toContain('idempotency key reused with a different request');
    const otherUrl = await api.create({ ...body, url: `${ctx.pages.page}?other` });
    expect(otherUrl.json.status).toBe('denied');
    expect(otherUrl.json.message).toContain('idempotency key reused with a different request');
    expect((await api.data()).json.data).toHaveLength(1);
    expect((await api.quota()).json).toMatchObject({ running_sessions_used: 1, cycle_sessions_used: 1 });

    await removeSessions(api, [first.vmId]);
    // Removing the session does not free the key for another request.
    const afterRemoval = await api.create(body);
    expect(afterRemoval.json).toEqual(first);
  });

  it('keys are per account: another account with the same key gets its own session', async () => {
    const a = await ctx.account([PLANS.burst]);
    const b = await ctx.account([PLANS.burst]);
    const body = { browser: 'chromium', url: ctx.pages.page, idempotencyKey: 'shared-between-accounts' };
    const ra = await a.api.create(body);
    const rb = await b.api.create(body);
    expect(ra.json.status, describeReply(ra)).toBe('ok');
    expect(rb.json.status, describeReply(rb)).toBe('ok');
    ctx.track(a.api, ra.json.vmId);
    ctx.track(b.api, rb.json.vmId);
    expect(rb.json.vmId).not.toBe(ra.json.vmId);
    await removeSessions(a.api, [ra.json.vmId]);
    await removeSessions(b.api, [rb.json.vmId]);
  });

  it('a first attempt that did not succeed is not remembered', async () => {
    const { api } = await ctx.account([PLANS.burst]);
    const refused = await api.create({ browser: 'netscape-navigator', url: ctx.pages.page, idempotencyKey: 'retry-me' });
    expect(refused.json.status).toBe('denied');
    const upgrade = await api.create({ browser: 'chromium', url: ctx.pages.page, idempotencyKey: 'retry-me', country: 'us' });
    expect(upgrade.json.status, describeReply(upgrade)).toBe('upgrade');
    const ok = await api.create({ browser: 'chromium', url: ctx.pages.page, idempotencyKey: 'retry-me' });
    expect(ok.json.status, describeReply(ok)).toBe('ok');
    ctx.track(api, ok.json.vmId);
    expect((await api.data()).json.data).toHaveLength(1);
    await removeSessions(api, [ok.json.vmId]);
  });
});

describe('running_session_limit', () => {
  it(`${CONCURRENT} concurrent creates on a plan with running limit 3 -> exactly 3 ok, the rest upgrade`, async () => {
    const { api } = await ctx.account([PLANS.burst]);
    const replies = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) =>
        api.create(i % 2 === 0 ? { browser: 'chromium', url: ctx.pages.page } : { browser: 'chromium', url: ctx.pages.page, idempotencyKey: `distinct-${i}` }),
      ),
    );
    const ok = okReplies(replies);
    for (const r of ok) ctx.track(api, r.json.vmId);
    try {
      for (const reply of replies) expect(reply.http, describeReply(reply)).toBe(200);
      expect(ok).toHaveLength(3);
      expect(new Set(ok.map((r) => r.json.vmId)).size).toBe(3);
      const refused = replies.filter((r) => r.json?.status !== 'ok');
      expect(refused).toHaveLength(CONCURRENT - 3);
      for (const reply of refused) {
        expect(failureSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
        expect(reply.json.status, describeReply(reply)).toBe('upgrade');
      }
      // Each ok answer counts its own session, and never more than the limit.
      for (const r of ok) {
        expect(r.json.quota.running_sessions_used).toBeGreaterThanOrEqual(1);
        expect(r.json.quota.running_sessions_used).toBeLessThanOrEqual(3);
        expect(r.json.quota.running_sessions_remaining).toBe(3 - r.json.quota.running_sessions_used);
      }

      const quota = (await api.quota()).json;
      expect(quota).toMatchObject({ running_sessions_used: 3, running_sessions_remaining: 0, cycle_sessions_used: 3, cycle_sessions_remaining: 197 });
      expect((await api.data()).json.data).toHaveLength(3);

      // A slot frees when a session is removed.
      const next = await api.create({ browser: 'chromium', url: ctx.pages.page });
      expect(next.json.status).toBe('upgrade');
      expect((await api.remove(ok[0]!.json.vmId)).json.status).toBe('ok');
      const freed = await api.create({ browser: 'chromium', url: ctx.pages.page });
      expect(freed.json.status, describeReply(freed)).toBe('ok');
      ctx.track(api, freed.json.vmId);
      expect(freed.json.quota).toMatchObject({ running_sessions_used: 3, cycle_sessions_used: 4 });
      await removeSessions(api, [freed.json.vmId]);
    } finally {
      await removeSessions(api, ok.map((r) => r.json.vmId));
    }
    expect((await api.quota()).json).toMatchObject({ running_sessions_used: 0, cycle_sessions_used: 4 });
  });

  it('two subscriptions: the running limit is the sum, checked under concurrency too', async () => {
    // geo (running 2) + geo-plus (running 1): 3 slots in all.
    const { api } = await ctx.account([PLANS.geo, PLANS.geoPlus]);
    const replies = await Promise.all(Array.from({ length: 20 }, () => api.create({ browser: 'chromium', url: ctx.pages.page })));
    const ok = okReplies(replies);
    for (const r of ok) ctx.track(api, r.json.vmId);
    try {
      expect(ok).toHaveLength(3);
      for (const reply of replies.filter((r) => r.json?.status !== 'ok')) expect(reply.json.status, describeReply(reply)).toBe('upgrade');
      const quota = (await api.quota()).json;
      expect(quota.pools[0]).toMatchObject({ running_sessions_used: 2, running_sessions_remaining: 0 });
      expect(quota.pools[1]).toMatchObject({ running_sessions_used: 1, running_sessions_remaining: 0 });
    } finally {
      await removeSessions(api, ok.map((r) => r.json.vmId));
    }
  });
});
