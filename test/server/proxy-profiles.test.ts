// The proxy route's saved profiles (issue 34) in front of a real engine in this process: a user
// makes, lists, renames and removes their own profiles by handle and starts a session on one;
// another user of the same app (the same service account) sees none of them, cannot name them by
// handle, and a session's handle never opens as a profile's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProxyRoute, engineService, type ProxyRoute } from '../../src/server/index.js';
import { APP_ORIGIN, BASE_PATH, poll, SECRET, startTestEngine, type TestEngine } from './fixtures.js';

let t: TestEngine;
let route: ProxyRoute;

const call = (path: string, user = 'alice', method = 'GET', body?: unknown) =>
  route(new Request(`${APP_ORIGIN}${BASE_PATH}${path}`, {
    method,
    headers: { origin: APP_ORIGIN, 'x-user': user, ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  }));
const json = async (response: Response) => ({ status: response.status, body: (await response.json()) as Record<string, any> });

beforeAll(async () => {
  t = await startTestEngine();
  const { key } = await t.key();
  route = createProxyRoute({ service: engineService(t.engine, { apiKey: key }), authorize: (request) => ({ id: request.headers.get('x-user') ?? '' }), secret: SECRET });
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe("the proxy route keeps each user's saved profiles apart", () => {
  let handle: string;

  it("makes and lists a user's profile by handle, with the user's own name", async () => {
    const made = await json(await call('/profiles', 'alice', 'POST', { name: 'Work', browser: 'chromium' }));
    expect(made.status).toBe(200);
    expect(made.body.profile).toMatchObject({ name: 'Work', browser: 'chromium', bytes: 0 });
    expect(made.body.profile.id).toBeUndefined();
    handle = made.body.profile.handle;
    expect((await json(await call('/profiles'))).body.profiles).toEqual([made.body.profile]);
    expect((await json(await call('/profiles', 'alice', 'POST', { name: '', browser: 'chromium' }))).body).toEqual({ status: 'denied', message: 'name: must be 1 to 83 characters, not only spaces, without control characters' });
  });

  it('shows another user none of them and lets them name none', async () => {
    expect((await json(await call('/profiles', 'mallory'))).body).toEqual({ status: 'ok', profiles: [] });
    const path = `/profiles/${encodeURIComponent(handle)}`;
    expect((await call(path, 'mallory', 'POST', { name: 'Mine' })).status).toBe(404);
    expect((await call(path, 'mallory', 'DELETE')).status).toBe(404);
    const create = await json(await call('/sessions', 'mallory', 'POST', { browser: 'chromium', url: t.pageUrl, profile: { id: handle } }));
    expect(create).toEqual({ status: 400, body: { status: 'denied', message: 'profile: unknown profile: it may belong to someone else or have been removed' } });
  });

  it('starts a session of the user on their profile, and renames and removes it', async () => {
    const created = await json(await call('/sessions', 'alice', 'POST', { browser: 'chromium', url: t.pageUrl, profile: { id: handle } }));
    expect(created.body.status, JSON.stringify(created.body)).toBe('ok');
    const session = `/sessions/${encodeURIComponent(created.body.handle)}`;
    expect(await poll(async () => (await json(await call(session))).body.session?.status, (s) => s === 'running', 30_000)).toBe('running');
    // A session's handle is not a profile's.
    expect((await call(`/profiles/${encodeURIComponent(created.body.handle)}`, 'alice', 'DELETE')).status).toBe(404);
    expect((await call(session, 'alice', 'DELETE')).status).toBe(200);
    expect((await json(await call(`/profiles/${encodeURIComponent(handle)}`, 'alice', 'POST', { name: 'Work 2' }))).body.profile).toMatchObject({ handle: expect.any(String), name: 'Work 2' });
    await poll(async () => (await json(await call(session))).body.session?.status, (s) => s === 'deleted', 30_000);
    expect((await json(await call(`/profiles/${encodeURIComponent(handle)}`, 'alice', 'DELETE'))).body).toEqual({ status: 'ok' });
    expect((await json(await call('/profiles'))).body.profiles).toEqual([]);
  }, 90_000);
});
