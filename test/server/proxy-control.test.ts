// The proxy route's part in who drives (issue 36), against a real engine (its runtime faked: no
// browser is needed to decide who drives): only the user the handle is sealed to gets a viewer
// pass (named by the app's `policy.viewerName`) and hands control over; bad requests are refused
// in the envelope and change nothing; the named viewer shows under its name to the others.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProxyRoute, engineService, type ProxyRoute } from '../../src/server/index.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { connectPeople } from '../helpers/people-client.js';
import { waitFor } from '../helpers/session.js';

const SECRET = 'a-test-secret-of-at-least-32-characters!';
const ORIGIN = 'http://app.example';
let fixture: EngineFixture<FakeRuntime>;
let route: ProxyRoute;
let handle: string;
let linkId: string;

const NAMES: Record<string, string> = { alice: 'Alice Example' };

async function call(method: string, path: string, body: unknown = method === 'POST' ? {} : undefined, user = 'alice') {
  const response = await route(new Request(`${ORIGIN}/api/remote-browser${path}`, {
    method,
    headers: { origin: ORIGIN, cookie: `user=${user}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  }));
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

beforeAll(async () => {
  fixture = await startEngine({ name: 'proxy-control', runtime: 'fake' });
  route = createProxyRoute({
    service: engineService(fixture.engine, { apiKey: fixture.account.key }),
    authorize: (request) => ({ id: /user=([^;]+)/.exec(request.headers.get('cookie') ?? '')?.[1] ?? '' }),
    secret: SECRET,
    policy: { viewerName: ({ user }) => NAMES[user.id] },
  });
  const created = await call('POST', '/sessions', { browser: 'chromium', control: 'one' });
  expect(created.status).toBe(200);
  handle = created.json.handle;
  linkId = new URL(created.json.shareUrl).search.slice(1);
  await waitFor(async () => (await call('GET', `/sessions/${handle}`)).json.session?.status, (status) => status === 'running', 20_000);
}, 60_000);

afterAll(async () => {
  await fixture?.close();
});

describe('control through the proxy route', () => {
  it('gives the owner a pass that names their viewer, and the others see the name', async () => {
    const pass = await call('POST', `/sessions/${handle}/viewer`);
    expect(pass).toMatchObject({ status: 200, json: { status: 'ok', pass: expect.any(String) } });
    const ws = fixture.engine.url.replace(/^http/, 'ws');
    const owner = await connectPeople(`${ws}/share/${linkId}/people`, { pass: pass.json.pass });
    const guest = await connectPeople(`${ws}/share/${linkId}/people`);
    const seen = await guest.until((p) => p.people.some((person) => person.name === 'Alice Example' && person.owner === true));
    expect(seen.people.find((person) => person.id === seen.you)).toMatchObject({ guest: expect.any(Number) });
    expect(seen.people.find((person) => person.id === seen.you)?.name).toBeUndefined();

    // The owner takes control through the route: their own viewer drives.
    const taken = await call('POST', `/sessions/${handle}/control`, { action: 'take' });
    expect(taken).toMatchObject({ status: 200, json: { status: 'ok', mode: 'one', driver: { name: 'Alice Example', owner: true } } });
    await guest.until((p) => p.driver?.name === 'Alice Example');
    // And gives it to the guest.
    const guestId = guest.picture()!.you;
    expect((await call('POST', `/sessions/${handle}/control`, { action: 'give', to: guestId })).json).toMatchObject({ status: 'ok', driver: { id: guestId } });
    await owner.until((p) => p.driver?.id === guestId);
    owner.close();
    guest.close();
  });

  it('refuses another user, a bad action and a wrong method, changing nothing', async () => {
    expect(await call('POST', `/sessions/${handle}/viewer`, undefined, 'mallory')).toMatchObject({ status: 404, json: { status: 'denied' } });
    expect(await call('POST', `/sessions/${handle}/control`, { action: 'take' }, 'mallory')).toMatchObject({ status: 404, json: { status: 'denied' } });
    expect(await call('POST', `/sessions/${handle}/control`, { action: 'steal' })).toMatchObject({ status: 400, json: { status: 'denied', message: expect.stringMatching(/^action:/) } });
    expect(await call('POST', `/sessions/${handle}/control`, { action: 'give', to: 'nobody' })).toMatchObject({ status: 400, json: { status: 'denied', message: expect.stringMatching(/^to:/) } });
    expect((await call('GET', `/sessions/${handle}/control`)).status).toBe(405);
    const state = (await (await fetch(`${fixture.engine.url}/share/${linkId}`)).json()) as Record<string, unknown>;
    expect(state).toMatchObject({ controlMode: 'one' });
  });

  it('switches the mode for everyone', async () => {
    expect((await call('POST', `/sessions/${handle}/control`, { action: 'mode', mode: 'shared' })).json).toMatchObject({ status: 'ok', mode: 'shared' });
    const state = await waitFor(async () => (await (await fetch(`${fixture.engine.url}/share/${linkId}`)).json()) as Record<string, unknown>, (s) => s.controlMode === undefined);
    expect(state.driver).toBeUndefined();
  });
});
