// Rate limit per API key (decisions.md 19): over the configured requests per window -> HTTP 429
// with Retry-After (seconds) and {status:"insecure", reason:"rate_limited", message}.
import { describe, expect, it } from 'vitest';
import { failureSchema } from '../../src/protocol/index.js';
import { useEngine } from './context.js';
import { createKey, describeReply, PLANS, sleep, testConfig, type Reply } from './harness.js';

const REQUESTS = 5;
const PER_SECONDS = 3;

const ctx = useEngine({ config: testConfig({ rateLimit: { requests: REQUESTS, perSeconds: PER_SECONDS } }) });

function expectRateLimited(reply: Reply) {
  expect(reply.http, describeReply(reply)).toBe(429);
  const retryAfter = reply.headers['retry-after'];
  expect(retryAfter, 'Retry-After header').toBeDefined();
  expect(String(retryAfter)).toMatch(/^\d+$/);
  const seconds = Number(retryAfter);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(PER_SECONDS);
  expect(failureSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
  expect(reply.json).toMatchObject({ status: 'insecure', reason: 'rate_limited' });
  expect(typeof reply.json.message).toBe('string');
  expect(reply.json.message.length).toBeGreaterThan(0);
  return seconds;
}

describe('rate limit', () => {
  it(`the ${REQUESTS + 1}th request of a key within ${PER_SECONDS} s -> 429; other keys go on; after Retry-After the key works again`, async () => {
    const { account, api } = await ctx.account([PLANS.basic]);
    const second = api.withKey((await createKey(ctx.engine.workspace, account.id)).key);
    const other = (await ctx.account([PLANS.basic])).api;

    const started = Date.now();
    for (let i = 0; i < REQUESTS; i++) {
      const reply = await api.quota();
      expect(reply.http, `request ${i + 1}: ${describeReply(reply)}`).toBe(200);
      expect(reply.json.status).toBe('ok');
    }
    expect(Date.now() - started, 'the allowed requests took too long for this test to mean anything').toBeLessThan(PER_SECONDS * 1000);
    const limited = await api.quota();
    expectRateLimited(limited);
    // Every endpoint of that key is limited; a limited create starts nothing.
    expectRateLimited(await api.data());
    const seconds = expectRateLimited(await api.create({ browser: 'chromium', url: ctx.pages.page }));

    // Limits are per key: the account's second key and another account's key still work.
    const viaSecond = await second.quota();
    expect(viaSecond.http, describeReply(viaSecond)).toBe(200);
    expect(viaSecond.json).toMatchObject({ status: 'ok', cycle_sessions_used: 0, running_sessions_used: 0 });
    expect((await second.data()).json).toEqual({ status: 'ok', data: [] });
    expect((await other.quota()).http).toBe(200);

    await sleep(seconds * 1000 + 250);
    const again = await api.quota();
    expect(again.http, describeReply(again)).toBe(200);
    expect(again.json.status).toBe('ok');
  });

  it('v6 session keys spend their API key\'s budget: a second session key gets no budget of its own, and v8 is limited with them', async () => {
    const { account, api } = await ctx.account([PLANS.basic]);
    const getKey = () => ctx.anon.get(`/api/v6/getKey?key=${encodeURIComponent(api.key!)}`);
    const first = await getKey();
    const second = await getKey();
    expect([first.http, second.http], describeReply(second)).toEqual([200, 200]);
    // A launch that spends a point and starts nothing: a browser this host does not have.
    const launch = (token: string) => ctx.anon.get(`/b?key=${encodeURIComponent(token)}&browser=Edge`);
    expect((await launch(first.json.token)).http).toBe(400);
    expect((await launch(second.json.token)).http).toBe(400);
    expect((await api.quota()).http).toBe(200);
    // Five points spent, by five requests through three credentials of one key.
    const limited = await launch(second.json.token);
    expect(limited.http, describeReply(limited)).toBe(429);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expectRateLimited(await api.quota());
    expect((await launch(first.json.token)).http).toBe(429);
    expect((await getKey()).http).toBe(429);
    // Another key of the same account has its own budget.
    const other = api.withKey((await createKey(ctx.engine.workspace, account.id)).key);
    expect((await other.quota()).http).toBe(200);
  });

  it('GET /v8/image needs no key and is not limited by a key\'s budget', async () => {
    const { api } = await ctx.account([PLANS.basic]);
    for (let i = 0; i <= REQUESTS; i++) await api.quota();
    expectRateLimited(await api.quota());
    const image = await ctx.anon.image();
    expect(image.http).toBe(200);
    expect(image.json.status).toBe('ok');
  });
});
