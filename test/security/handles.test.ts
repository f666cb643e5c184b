// Security suite, session handles at the proxy route (docs/proxy-route.md "Session handles"): a
// handle altered anywhere, forged without the route's secret, made before the secret was rotated
// (handles do not expire on their own: rotating the secret is how they expire), another user's,
// or another account's, is refused like an unknown session, and the session it names is untouched.
// A real engine in this process starts the real browser each handle names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProxyRoute, engineService, type RemoteBrowserService } from '../../src/server/index.js';
import { createSessionHandles, toBase64Url } from '../../src/server/session-handles.js';
import { APP_ORIGIN, BASE_PATH, poll, SECRET, startTestEngine, type TestEngine } from '../server/fixtures.js';

const OTHER_SECRET = 'a-different-route-secret-0123456789abcdef';
const UNKNOWN = { status: 'denied', message: 'unknown session: it may belong to someone else or have been deleted; start a new session' };

let t: TestEngine;
let service: RemoteBrowserService;
let accountId: string;
let handle: string;
let vmId: string;

function routeWith(secret: string, on: RemoteBrowserService = service) {
  return createProxyRoute<{ id: string }>({
    service: on,
    secret,
    authorize: (request) => {
      const id = request.headers.get('x-user');
      return id === null ? null : { id };
    },
    rateLimit: false,
    onError: () => undefined,
  });
}

type Route = ReturnType<typeof routeWith>;

/** A browser request of a signed-in user to the route, same-origin JSON. */
async function call(route: Route, method: string, path: string, user = 'alice', body?: unknown): Promise<{ status: number; json: any }> {
  const response = await route(
    new Request(`${APP_ORIGIN}${BASE_PATH}${path}`, {
      method,
      headers: { 'x-user': user, 'content-type': 'application/json', origin: APP_ORIGIN },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  );
  return { status: response.status, json: await response.json() };
}

/** Reading, ending (POST) and ending (DELETE) with `candidate` are all refused as an unknown session. */
async function expectRefusedEverywhere(route: Route, candidate: string, user = 'alice'): Promise<void> {
  const path = `/sessions/${encodeURIComponent(candidate)}`;
  for (const method of ['GET', 'POST', 'DELETE']) {
    const answer = await call(route, method, path, user);
    expect({ method, user, candidate, ...answer }).toEqual({ method, user, candidate, status: 404, json: UNKNOWN });
  }
}

const statusOfSession = async () => (await t.engine.store.session(vmId))!.status;

beforeAll(async () => {
  t = await startTestEngine();
  const account = await t.key('std');
  accountId = account.accountId;
  service = engineService(t.engine, { apiKey: account.key });
  const created = await call(routeWith(SECRET), 'POST', '/sessions', 'alice', { browser: 'chromium', url: t.pageUrl });
  expect(created.status, JSON.stringify(created.json)).toBe(200);
  handle = created.json.handle as string;
  vmId = (await t.engine.store.sessionsOf(accountId, 0, 1))[0]!.id;
  expect(await poll(statusOfSession, (status) => status === 'running')).toBe('running');
});

afterAll(async () => {
  await t?.close();
});

describe('session handles at the proxy route', () => {
  it('the genuine handle works for its own user (so every refusal below is about the handle)', async () => {
    const read = await call(routeWith(SECRET), 'GET', `/sessions/${handle}`);
    expect(read.status).toBe(200);
    expect(read.json.session).toMatchObject({ handle, status: 'running' });
  });

  it('an altered handle is refused, whichever character was changed: version, IV, ciphertext or tag', async () => {
    const route = routeWith(SECRET);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const outcomes = new Map<number, number>();
    for (let i = 0; i < handle.length; i++) {
      const replacement = alphabet[(alphabet.indexOf(handle[i]!) + 1 + (i % 63)) % 64]!;
      const altered = handle.slice(0, i) + replacement + handle.slice(i + 1);
      outcomes.set(i, (await call(route, 'GET', `/sessions/${altered}`)).status);
    }
    expect([...outcomes.values()].every((status) => status === 404), JSON.stringify([...outcomes].filter(([, s]) => s !== 404))).toBe(true);
    // Cut short, extended, or the same bytes spelt differently.
    for (const altered of [handle.slice(0, -1), handle.slice(1), `${handle}A`, `${handle}${handle}`, handle.replace(/[A-Za-z]/, (c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()))]) {
      await expectRefusedEverywhere(route, altered);
    }
    expect(await statusOfSession()).toBe('running');
  });

  it('a forged handle is refused: made without the secret, or with a secret of the forger\'s own', async () => {
    const route = routeWith(SECRET);
    const random = (n: number) => toBase64Url(globalThis.crypto.getRandomValues(new Uint8Array(n)));
    // The layout of a real handle (version 1, IV, one or more AES blocks, tag), with random bytes.
    const layout = toBase64Url(new Uint8Array([1, ...globalThis.crypto.getRandomValues(new Uint8Array(16 + 48 + 32))]));
    // A genuine handle for the same session and user, sealed by a route with another secret.
    const ownSecret = await (await createSessionHandles(OTHER_SECRET)).seal(vmId, 'alice');
    for (const forged of [layout, random(handle.length), ownSecret, vmId, toBase64Url(new TextEncoder().encode(vmId)), `1${vmId}`, 'null', 'undefined', '%00']) {
      await expectRefusedEverywhere(route, forged);
    }
    expect(await statusOfSession()).toBe('running');
  });

  it("another user's handle is refused, however close the user id", async () => {
    const route = routeWith(SECRET);
    for (const user of ['bob', 'Alice', 'ALICE', 'alic', 'alicee', 'alice2', 'a']) {
      await expectRefusedEverywhere(route, handle, user);
    }
    expect(await statusOfSession()).toBe('running');
  });

  it("another account's route refuses the handle even with the same secret", async () => {
    const other = await t.key('std');
    await expectRefusedEverywhere(routeWith(SECRET, engineService(t.engine, { apiKey: other.key })), handle);
    expect(await statusOfSession()).toBe('running');
  });

  it('a handle made before the secret was rotated has expired: refused, and the session it names is untouched', async () => {
    const rotated = routeWith(OTHER_SECRET);
    await expectRefusedEverywhere(rotated, handle);
    expect(await statusOfSession()).toBe('running');
    // New handles under the new secret work as before.
    const fresh = await call(rotated, 'POST', '/sessions', 'alice', { browser: 'chromium', url: t.pageUrl });
    expect(fresh.status, JSON.stringify(fresh.json)).toBe(200);
    expect((await call(rotated, 'GET', `/sessions/${fresh.json.handle}`)).json.session.status).toMatch(/starting|running/);
    expect((await call(rotated, 'DELETE', `/sessions/${fresh.json.handle}`)).status).toBe(200);
    // And the old route's handle cannot reach the new session.
    await expectRefusedEverywhere(routeWith(SECRET), fresh.json.handle);
  });

  it("once its session is deleted, a handle only says so: it reaches nothing else", async () => {
    const route = routeWith(SECRET);
    expect((await call(route, 'DELETE', `/sessions/${handle}`)).json).toEqual({ status: 'ok' });
    expect(await poll(statusOfSession, (status) => status === 'deleted')).toBe('deleted');
    const read = await call(route, 'GET', `/sessions/${handle}`);
    expect(read.status).toBe(200);
    expect(read.json.session).toMatchObject({ handle, status: 'deleted' });
    expect(JSON.stringify(read.json)).not.toContain(vmId);
    // Ending again changes nothing.
    expect((await call(route, 'POST', `/sessions/${handle}`)).json).toEqual({ status: 'ok' });
    expect(await statusOfSession()).toBe('deleted');
  });
});
