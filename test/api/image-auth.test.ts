// GET /v8/image (no key) and the authentication checks of every other endpoint: missing, unknown
// and revoked keys, requests made by a web browser, accounts without programmatic access.
import { describe, expect, it } from 'vitest';
import { failureSchema, imageListResponseSchema, userApiResponseSchema, userQuotaResponseSchema } from '../../src/protocol/index.js';
import { useEngine } from './context.js';
import { Api, createKey, describeReply, listKeys, LOCATIONS, PLANS, revokeKey, type Reply } from './harness.js';

const ctx = useEngine();

/** Every authenticated endpoint, called with a harmless request. */
const AUTHENTICATED: { name: string; call: (api: Api) => Promise<Reply> }[] = [
  { name: 'POST /v8/vm/create', call: (api) => api.create({ browser: 'chromium', url: 'http://127.0.0.1:9/' }) },
  { name: 'GET /v8/vm/data', call: (api) => api.data() },
  { name: 'GET /v8/vm/data?id=', call: (api) => api.data('nonexistent-session-id') },
  { name: 'POST /v8/vm/remove', call: (api) => api.remove('nonexistent-session-id') },
  { name: 'GET /v8/user/api', call: (api) => api.user() },
  { name: 'GET /v8/user/quota', call: (api) => api.quota() },
];

function expectDenied401(reply: Reply) {
  expect(reply.http, describeReply(reply)).toBe(401);
  expect(reply.headers['content-type']).toMatch(/^application\/json/);
  expect(failureSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
  expect(reply.json.status).toBe('denied');
  expect(typeof reply.json.message).toBe('string');
  expect(reply.json.message.length).toBeGreaterThan(0);
}

describe('GET /v8/image', () => {
  it('answers without a key with images, locations and the residential object', async () => {
    const reply = await ctx.anon.image();
    expect(reply.http).toBe(200);
    const parsed = imageListResponseSchema.safeParse(reply.json);
    expect(parsed.success, describeReply(reply)).toBe(true);
    const images = reply.json.images as { id: string; name: string; enabled: boolean }[];
    const chromium = images.find((i) => i.id === 'chromium');
    expect(chromium).toBeDefined();
    expect(chromium!.enabled).toBe(true);
    expect(chromium!.name).toBe('Chromium');
    expect(images.some((i) => i.id === 'firefox-esr')).toBe(true);
    expect(new Set(images.map((i) => i.id)).size).toBe(images.length);
  });

  it('lists the configured exit locations with their cities, and residential as configured', async () => {
    const reply = await ctx.anon.image();
    const locations = reply.json.vpnLocations as { code: string; name: string; default: string; cities: { code: string; location: string }[] }[];
    for (const expected of LOCATIONS) {
      const found = locations.find((l) => l.code === expected.code);
      expect(found, `location ${expected.code}`).toBeDefined();
      expect(found!.name).toBe(expected.name);
      expect(found!.default).toBe(expected.default);
      expect(found!.cities.map((c) => ({ code: c.code, location: c.location }))).toEqual(
        expected.cities.map((c) => ({ code: c.code, location: c.location })),
      );
    }
    expect(reply.json.residential).toEqual({ configured: true, countries: null });
  });

  it('needs no key even when called from a web page (Origin, Sec-Fetch-Mode)', async () => {
    const reply = await ctx.anon.get('/v8/image', { headers: { origin: 'https://app.example.com', 'sec-fetch-mode': 'cors' } });
    expect(reply.http, describeReply(reply)).toBe(200);
    expect(reply.json.status).toBe('ok');
  });

  it('ignores a wrong key: it needs none', async () => {
    const reply = await ctx.anon.get('/v8/image', { key: 'not-a-key' });
    expect(reply.http, describeReply(reply)).toBe(200);
    expect(reply.json.status).toBe('ok');
  });
});

describe('authentication', () => {
  it.each(AUTHENTICATED)('$name without a key -> HTTP 401 denied', async ({ call }) => {
    expectDenied401(await call(ctx.anon));
  });

  it.each(AUTHENTICATED)('$name with an unknown key -> HTTP 401 denied', async ({ call }) => {
    expectDenied401(await call(ctx.anon.withKey('rbk_thisKeyDoesNotExist0000000000000000')));
  });

  it('a header that is not a Bearer key -> HTTP 401 denied', async () => {
    const { account } = await ctx.account([PLANS.basic]);
    for (const authorization of [`Basic ${account.key}`, 'Bearer', `Bearer ${account.key}x`, `Bearer x${account.key}`]) {
      const reply = await ctx.anon.get('/v8/user/quota', { headers: { authorization } });
      expectDenied401(reply);
    }
  });

  it('a valid key works; once revoked -> HTTP 401 denied while the other keys keep working', async () => {
    const { account, api } = await ctx.account([PLANS.basic]);
    const second = await createKey(ctx.engine.workspace, account.id);
    expect(second.account_id).toBe(account.id);
    const secondApi = api.withKey(second.key);
    expect((await secondApi.quota()).json.status).toBe('ok');

    const revoked = await revokeKey(ctx.engine.workspace, second.id);
    expect(revoked).toMatchObject({ id: second.id, revoked: true });
    const keys = await listKeys(ctx.engine.workspace, account.id);
    expect(keys.find((k) => k.id === second.id)?.revoked).toBe(true);
    expect(keys.find((k) => k.id === account.keyId)?.revoked).toBe(false);
    // The listing never shows a key itself.
    expect(JSON.stringify(keys)).not.toContain(second.key);

    for (const { call } of AUTHENTICATED) expectDenied401(await call(secondApi));
    expect((await api.quota()).json.status).toBe('ok');
  });

  describe('a request made by a web browser -> HTTP 403 insecure client_side_key', () => {
    const browserHeaders: Record<string, Record<string, string>> = {
      Origin: { origin: 'https://app.example.com' },
      'Origin null': { origin: 'null' },
      'Sec-Fetch-Mode: cors with Sec-Fetch-Site': { 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'empty' },
      'Sec-Fetch-Mode: navigate': { 'sec-fetch-mode': 'navigate' },
      'Sec-Fetch-Mode: no-cors': { 'sec-fetch-mode': 'no-cors' },
    };

    it.each(Object.entries(browserHeaders))('%s', async (_name, headers) => {
      const { api } = await ctx.account([PLANS.basic]);
      for (const { name, call } of AUTHENTICATED) {
        const reply = await call(new BrowserApi(api, headers));
        if (typeof reply.json?.vmId === 'string') ctx.track(api, reply.json.vmId);
        expect(reply.http, `${name}: ${describeReply(reply)}`).toBe(403);
        expect(failureSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
        expect(reply.json).toMatchObject({ status: 'insecure', reason: 'client_side_key' });
        expect(reply.json.message.length).toBeGreaterThan(0);
      }
      // The refused create started nothing.
      const list = await api.data();
      expect(list.json).toEqual({ status: 'ok', data: [] });
      const quota = await api.quota();
      expect(quota.json.cycle_sessions_used).toBe(0);
      expect(quota.json.running_sessions_used).toBe(0);
    });
  });

  it("Node's own fetch (Sec-Fetch-Mode: cors alone, as undici always sends it) is a server, not a browser (docs/decisions.md 20)", async () => {
    const { api } = await ctx.account([PLANS.basic]);
    const reply = await new BrowserApi(api, { 'sec-fetch-mode': 'cors' }).quota();
    expect(reply.http, describeReply(reply)).toBe(200);
    expect(reply.json.status).toBe('ok');
  });

  describe('an account without programmatic access', () => {
    it('user/api and user/quota answer, with feature_programmatic_access false', async () => {
      const { account, api } = await ctx.account([PLANS.noApi]);
      const user = await api.user();
      expect(user.http).toBe(200);
      expect(userApiResponseSchema.safeParse(user.json).success, describeReply(user)).toBe(true);
      expect(user.json.feature_programmatic_access).toBe(false);
      expect(user.json.contact).toBe(account.contact);
      const quota = await api.quota();
      expect(quota.http).toBe(200);
      expect(userQuotaResponseSchema.safeParse(quota.json).success, describeReply(quota)).toBe(true);
      expect(quota.json).not.toHaveProperty('contact');
      expect(quota.json).not.toHaveProperty('feature_programmatic_access');
    });

    it('vm/create, vm/data and vm/remove -> upgrade, and nothing starts', async () => {
      const { api } = await ctx.account([PLANS.noApi]);
      const calls: [string, () => Promise<Reply>][] = [
        ['vm/create', () => api.create({ browser: 'chromium', url: ctx.pages.page })],
        ['vm/data', () => api.data()],
        ['vm/data?id=', () => api.data('nonexistent-session-id')],
        ['vm/remove', () => api.remove('nonexistent-session-id')],
      ];
      for (const [name, call] of calls) {
        const reply = await call();
        expect(reply.http, `${name}: ${describeReply(reply)}`).toBe(200);
        expect(failureSchema.safeParse(reply.json).success, `${name}: ${describeReply(reply)}`).toBe(true);
        expect(reply.json.status, name).toBe('upgrade');
      }
      const quota = await api.quota();
      expect(quota.json.cycle_sessions_used).toBe(0);
      expect(quota.json.running_sessions_used).toBe(0);
    });

    it('a programmatic-access account says feature_programmatic_access true', async () => {
      const { api } = await ctx.account([PLANS.basic]);
      expect((await api.user()).json.feature_programmatic_access).toBe(true);
    });
  });
});

/** An Api that adds browser headers to every request. */
class BrowserApi extends Api {
  constructor(
    inner: Api,
    private readonly extra: Record<string, string>,
  ) {
    super(inner.base, inner.key);
  }
  override get(path: string, options: Parameters<Api['get']>[1] = {}) {
    return super.get(path, { ...options, headers: { ...options.headers, ...this.extra } });
  }
  override post(path: string, body: unknown, options: Parameters<Api['post']>[2] = {}) {
    return super.post(path, body, { ...options, headers: { ...options.headers, ...this.extra } });
  }
}
