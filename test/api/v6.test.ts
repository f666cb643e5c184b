// The deprecated v6 interface as an older caller uses it, over HTTP against the real engine:
// getKey on the server, /b opened by the client's browser (one session per client, the share link
// as the redirect), short URLs that v8 create also resolves, each failure's v6 envelope, and the
// deprecation headers on every answer.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { v6GetKeyResponseSchema, v6ShortUrlResponseSchema } from '../../src/protocol/index.js';
import { useEngine } from './context.js';
import {
  describeReply,
  makeWorkspace,
  PLANS,
  poll,
  removeWorkspace,
  revokeKey,
  SHARE_BASE,
  startEngine,
  testConfig,
  waitForStatus,
  type Api,
  type Reply,
} from './harness.js';

const clockDir = mkdtempSync(join(tmpdir(), 'rbk-api-v6-clock-'));
const clockFile = join(clockDir, 'offset');
writeFileSync(clockFile, '0');
/** The operator's sunset day for v6 (configuration `v6.sunset`). */
const SUNSET = '2027-05-31';
const ctx = useEngine({ env: { RBK_CLOCK_OFFSET_FILE: clockFile }, config: testConfig({ v6: { sunset: SUNSET } }) });

const getKey = (key: string, headers: Record<string, string> = {}) => ctx.anon.get(`/api/v6/getKey?key=${encodeURIComponent(key)}`, { headers });
const launch = (query: Record<string, string>) => ctx.anon.get(`/b?${new URLSearchParams(query)}`);
const shortUrl = (body: unknown) => ctx.anon.post('/api/v6/shortUrl', body);

async function token(api: Api): Promise<string> {
  const reply = await getKey(api.key!);
  expect(reply.json.success, describeReply(reply)).toBe(true);
  return reply.json.token as string;
}

function expectV6Failure(reply: Reply, message: 'auth-failed' | 'quota-exceeded' | 'srv-error', detail: RegExp) {
  expect(reply.json, describeReply(reply)).toMatchObject({ success: false, message });
  expect(reply.json.detail).toMatch(detail);
  expect(reply.json).not.toHaveProperty('status');
}

/** The account's sessions, newest first, as GET /v8/vm/data lists them (ids masked). */
async function sessions(api: Api): Promise<{ id: string; status: string; name: string }[]> {
  return (await api.data()).json.data as { id: string; status: string; name: string }[];
}

/** A /b session's status once it is `wanted` (or the last seen): /b gives its client no vmId, so by list entry. */
async function listedStatus(api: Api, maskedId: string, wanted: string): Promise<string | undefined> {
  const status = async () => (await sessions(api)).find((s) => s.id === maskedId)?.status;
  return poll(status, (value) => value === wanted, 20_000);
}

describe('GET /api/v6/getKey', () => {
  it('turns the API key into a session key and shows the cycle sessions as quota, count and remaining', async () => {
    const { api } = await ctx.account([PLANS.basic]);
    const reply = await getKey(api.key!);
    expect(reply.http).toBe(200);
    expect(v6GetKeyResponseSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
    expect(reply.json).toMatchObject({ success: true, quota: 5, count: 0, remaining: 5 });
    expect(reply.json.token).not.toContain(api.key!);
    // A second call makes another key; both work.
    const again = await getKey(api.key!);
    expect(again.json.token).not.toBe(reply.json.token);
  });

  it('shows no cap as null', async () => {
    const { api } = await ctx.account([PLANS.unlimited]);
    expect((await getKey(api.key!)).json).toMatchObject({ success: true, quota: null, count: 0, remaining: null });
  });

  it('refuses a missing, unknown or revoked key, a plan without API access, and a web browser', async () => {
    expectV6Failure(await ctx.anon.get('/api/v6/getKey'), 'auth-failed', /key: required/);
    expectV6Failure(await getKey('rbk_not-a-real-key'), 'auth-failed', /invalid or revoked/);
    const { account, api } = await ctx.account([PLANS.basic]);
    expectV6Failure(await getKey(api.key!, { origin: 'https://app.example.com' }), 'auth-failed', /web browser.*server/);
    await revokeKey(ctx.engine.workspace, account.keyId);
    expectV6Failure(await getKey(api.key!), 'auth-failed', /invalid or revoked/);
    const viewer = await ctx.account([PLANS.noApi]);
    expectV6Failure(await getKey(viewer.api.key!), 'auth-failed', /programmatic access/);
  });
});

describe('GET /b', () => {
  it("starts a session and sends the client's browser to its share link, in the requested language", async () => {
    const { api } = await ctx.account([PLANS.basic]);
    const reply = await launch({ key: await token(api), browser: 'Chrome', url: ctx.pages.page, language: 'de' });
    expect(reply.http, describeReply(reply)).toBe(302);
    expect(reply.headers.location).toMatch(new RegExp(`^${SHARE_BASE}/de/s\\?[A-Za-z0-9_-]+$`));
    expect(reply.json).toMatchObject({ success: true, shareUrl: reply.headers.location });
    const [session] = await sessions(api);
    expect(session!.name).toBe('Chromium'); // this host has no Google Chrome: its open-source build stands in
    expect(await listedStatus(api, session!.id, 'running')).toBe('running');
    expect((await getKey(api.key!)).json).toMatchObject({ count: 1, remaining: 4 });
  });

  it('sends the viewer back to the linking application when it leaves, unless callbackUrl says otherwise', async () => {
    const { api } = await ctx.account([PLANS.unlimited]);
    const key = await token(api);
    const leaveUrlOf = async (reply: Reply) => {
      const linkId = new URL(reply.headers.location!).search.slice(1);
      return (await ctx.anon.get(`/share/${linkId}`)).json.leaveUrl as string | null;
    };
    const fromApp = await ctx.anon.get(`/b?key=${key}&url=${encodeURIComponent(ctx.pages.page)}`, { headers: { referer: 'https://app.example.com/' } });
    expect(await leaveUrlOf(fromApp)).toBe('https://app.example.com/');
    const chosen = await launch({ key, url: ctx.pages.page, callbackUrl: 'https://app.example.com/done' });
    expect(await leaveUrlOf(chosen)).toBe('https://app.example.com/done');
  });

  it("ends the client's earlier session when it launches again, so one client holds one slot", async () => {
    // One running session at most: without the ending, the second launch would not fit.
    const { api } = await ctx.account([PLANS.geoPlus]);
    const key = await token(api);
    expect((await launch({ key, url: ctx.pages.page })).http).toBe(302);
    const [first] = await sessions(api);
    const again = await launch({ key, browser: 'Firefox', url: ctx.pages.page });
    expect(again.http, describeReply(again)).toBe(302);
    const [second, earlier] = await sessions(api);
    expect(earlier!.id).toBe(first!.id);
    expect(['stopping', 'deleted']).toContain(earlier!.status);
    expect(second!.name).toBe('Firefox ESR');
    expect(await listedStatus(api, second!.id, 'running')).toBe('running');
  });

  it('keeps one session per client when the same key launches twice at once', async () => {
    const { api } = await ctx.account([PLANS.unlimited]);
    const key = await token(api);
    expect((await launch({ key, url: ctx.pages.page })).http).toBe(302);
    // Both relaunches find the first session to end; only one of them may keep a new one.
    const replies = await Promise.all([launch({ key, url: ctx.pages.page }), launch({ key, url: ctx.pages.page })]);
    expect(replies.map((r) => r.http)).toEqual([302, 302]);
    const listed = await sessions(api);
    expect(listed).toHaveLength(3);
    expect(listed.filter((s) => ['starting', 'running'].includes(s.status))).toHaveLength(1);
  });

  it('answers quota-exceeded with the meters when another client holds the slot', async () => {
    const { api } = await ctx.account([PLANS.geoPlus]);
    expect((await launch({ key: await token(api), url: ctx.pages.page })).http).toBe(302);
    const other = await launch({ key: await token(api), url: ctx.pages.page });
    expectV6Failure(other, 'quota-exceeded', /running session limit reached/);
    expect(other.json).toMatchObject({ quota: 10, count: 1, remaining: 9 });
    expect(await sessions(api)).toHaveLength(1);
  });

  it('refuses a bad field or an unknown session key, naming what is wrong, and starts nothing', async () => {
    const { account, api } = await ctx.account([PLANS.basic]);
    const key = await token(api);
    expectV6Failure(await launch({ key, browser: 'Safari' }), 'srv-error', /^browser: must be one of Chrome, Edge, Firefox, Tor, Brave, Opera/);
    expectV6Failure(await launch({ key, browser: 'Brave' }), 'srv-error', /^browser: Brave cannot start on this service; choose one of .*Chrome/);
    expectV6Failure(await launch({ key, url: 'file:///etc/passwd' }), 'srv-error', /^url: must be an http or https address/);
    expectV6Failure(await launch({ key, layout: 'klingon' }), 'srv-error', /^layout:/);
    expectV6Failure(await launch({ key: 'v6t_unknown' }), 'auth-failed', /unknown or expired session key.*getKey/);
    expectV6Failure(await ctx.anon.get('/b'), 'srv-error', /^key: required/);
    expect(await sessions(api)).toHaveLength(0);
    // A revoked API key takes its session keys with it.
    await revokeKey(ctx.engine.workspace, account.keyId);
    expectV6Failure(await launch({ key }), 'auth-failed', /unknown or expired session key/);
  });
});

describe('POST /api/v6/shortUrl', () => {
  it('keeps an address under a url_ id that /b and v8 create both open', async () => {
    const reply = await shortUrl({ url: `${ctx.pages.page}?short=v8` });
    expect(reply.http).toBe(200);
    expect(v6ShortUrlResponseSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
    expect(reply.json.id).toMatch(/^url_\d{10}$/);

    const { api } = await ctx.account([PLANS.unlimited]);
    const created = await api.create({ browser: 'chromium', url: reply.json.id });
    expect(created.json.status, describeReply(created)).toBe('ok');
    expect(await waitForStatus(api, created.json.vmId, ['running'])).toBe('running');
    expect(ctx.pages.hits('/page?short=v8')).toBeGreaterThanOrEqual(1);

    const viaB = (await shortUrl({ url: `${ctx.pages.page}?short=b` })).json.id as string;
    expect((await launch({ key: await token(api), url: viaB })).http).toBe(302);
    expect(await poll(async () => ctx.pages.hits('/page?short=b'), (hits) => hits >= 1, 20_000)).toBeGreaterThanOrEqual(1);
  });

  it('refuses what is not a web address, or not JSON, and v8 create refuses an unknown id', async () => {
    expectV6Failure(await shortUrl({ url: 'javascript:alert(1)' }), 'srv-error', /^url: must be an http or https address/);
    expectV6Failure(await shortUrl({}), 'srv-error', /^url:/);
    expectV6Failure(await ctx.anon.post('/api/v6/shortUrl', undefined, { raw: '{"url":' }), 'srv-error', /JSON/);
    const { api } = await ctx.account([PLANS.unlimited]);
    const created = await api.create({ browser: 'chromium', url: 'url_0000000000' });
    expect(created.json).toMatchObject({ status: 'denied', message: expect.stringMatching(/^url: unknown or expired short-URL id/) });
  });

  it('answers another v6 path with the v6 envelope', async () => {
    const reply = await ctx.anon.get('/api/v6/nothing');
    expect(reply.http).toBe(404);
    expectV6Failure(reply, 'srv-error', /no endpoint GET \/api\/v6\/nothing/);
  });
});

describe('deprecation headers', () => {
  /** Deprecation since 2026-11-21 (RFC 9745: `@` and Unix seconds), the configured Sunset (an HTTP date), the successor's description. */
  function expectDeprecated(reply: Reply, what: string) {
    expect(reply.headers.deprecation, what).toBe('@1795219200');
    expect(reply.headers.sunset, what).toBe('Mon, 31 May 2027 00:00:00 GMT');
    expect(reply.headers.link, what).toBe('</v8/openapi.json>; rel="successor-version"');
  }

  it('every v6 answer, success or failure, says v6 is deprecated, when it ends, and what follows it', async () => {
    const { api } = await ctx.account([PLANS.unlimited]);
    const key = await token(api);
    const answers: Array<[string, Reply]> = [
      ['getKey', await getKey(api.key!)],
      ['getKey without a key', await ctx.anon.get('/api/v6/getKey')],
      ['getKey from a web browser', await getKey(api.key!, { origin: 'https://app.example.com' })],
      ['/b', await launch({ key, url: ctx.pages.page })],
      ['/b with a bad field', await launch({ key, browser: 'Safari' })],
      ['/b with an unknown session key', await launch({ key: 'v6t_unknown' })],
      ['shortUrl', await shortUrl({ url: ctx.pages.page })],
      ['shortUrl with a bad body', await shortUrl({})],
      ['an unknown v6 path', await ctx.anon.get('/api/v6/nothing')],
    ];
    expect(answers.map(([, reply]) => reply.http)).toEqual([200, 401, 403, 302, 400, 401, 200, 400, 404]);
    for (const [what, reply] of answers) expectDeprecated(reply, what);
  });

  it('the successor link, read against the request, is the v8 OpenAPI document the engine serves', async () => {
    const reply = await ctx.anon.get('/api/v6/getKey');
    const target = /^<([^>]+)>; rel="successor-version"$/.exec(String(reply.headers.link))![1]!;
    const successor = await ctx.anon.get(new URL(target, new URL('/api/v6/getKey', ctx.engine.url)).pathname);
    expect(successor.http).toBe(200);
    expect(successor.json).toMatchObject({ openapi: '3.0.3', info: { version: '8' } });
    expect(Object.keys(successor.json.paths)).toContain('/v8/vm/create');
  });

  it('v8 and v7 answers carry no deprecation headers', async () => {
    const { api } = await ctx.account([PLANS.basic]);
    for (const reply of [await api.quota(), await api.get('/v7/user/quota'), await ctx.anon.image()]) {
      expect(reply.headers.deprecation).toBeUndefined();
      expect(reply.headers.sunset).toBeUndefined();
    }
  });

  it('an engine refuses to start with a sunset before v6 was deprecated, naming the setting', async () => {
    for (const [sunset, message] of [['2026-01-31', /v6\.sunset: .*2026-11-21/], ['31.05.2027', /v6\.sunset: .*YYYY-MM-DD/]] as const) {
      const workspace = await makeWorkspace(testConfig({ v6: { sunset } }));
      try {
        const outcome = await startEngine({ workspace }).catch((error: Error) => error);
        if (!(outcome instanceof Error)) await outcome.stop();
        expect(outcome, sunset).toBeInstanceOf(Error);
        expect((outcome as Error).message).toMatch(message);
      } finally {
        await removeWorkspace(workspace);
      }
    }
  });
});

// Last: these move the engine's clock forward.
describe('expiry', () => {
  it('forgets a short URL after an hour and a session key after two', async () => {
    const { api } = await ctx.account([PLANS.unlimited]);
    const id = (await shortUrl({ url: ctx.pages.page })).json.id as string;
    const key = await token(api);
    writeFileSync(clockFile, String(61 * 60_000));
    const created = await api.create({ browser: 'chromium', url: id });
    expect(created.json).toMatchObject({ status: 'denied', message: expect.stringMatching(/^url: unknown or expired short-URL id/) });
    writeFileSync(clockFile, String(121 * 60_000));
    expectV6Failure(await launch({ key, url: ctx.pages.page }), 'auth-failed', /unknown or expired session key/);
    expect(await sessions(api)).toHaveLength(0);
  });
});
