// Framing origins through the customer's server (issue 44): the service client's embedOrigins /
// setEmbedOrigins over HTTP, and the proxy route's `<base>/embed` for the users `policy.embed`
// allows, with a create through the route narrowing one session's list; against a real engine
// (its runtime faked: the list and the headers need no browser). Refusals name the field and
// change nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProxyRoute, createServiceClient, engineService, isRemoteBrowserError, type ProxyRoute } from '../../src/server/index.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';

const SECRET = 'a-test-secret-of-at-least-32-characters!';
const ORIGIN = 'http://app.example';
const APP = 'https://app.example.com';
const LOCAL = 'http://localhost:3000';
let fixture: EngineFixture<FakeRuntime>;
let route: ProxyRoute;

async function call(method: string, path: string, body?: unknown, user = 'admin') {
  const response = await route(new Request(`${ORIGIN}/api/remote-browser${path}`, {
    method,
    headers: { origin: ORIGIN, cookie: `user=${user}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  }));
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

beforeAll(async () => {
  fixture = await startEngine({ name: 'proxy-embed', runtime: 'fake' });
  route = createProxyRoute({
    service: engineService(fixture.engine, { apiKey: fixture.account.key }),
    authorize: (request) => ({ id: /user=([^;]+)/.exec(request.headers.get('cookie') ?? '')?.[1] ?? '' }),
    secret: SECRET,
    policy: { embed: ({ user }) => user.id === 'admin' },
  });
});

afterAll(async () => {
  await fixture?.close();
});

describe('the service client', () => {
  it('sets and reads the list; a refused origin throws denied naming it, and the list stays', async () => {
    const client = createServiceClient({ baseUrl: fixture.engine.url, apiKey: fixture.account.key });
    expect(await client.setEmbedOrigins([APP, LOCAL])).toEqual([APP, LOCAL]);
    expect(await client.embedOrigins()).toEqual([APP, LOCAL]);
    const refusal = await client.setEmbedOrigins([APP, 'https://*.example.com']).catch((error: unknown) => error);
    expect(isRemoteBrowserError(refusal) && refusal.code).toBe('denied');
    expect((refusal as Error).message).toMatch(/^origins\[1\]: .*no wildcards/);
    expect(await client.embedOrigins()).toEqual([APP, LOCAL]);
  });
});

describe('the proxy route', () => {
  it('lets the users policy.embed names read and set the list, and nobody else', async () => {
    expect(await call('POST', '/embed', { origins: [LOCAL] })).toEqual({ status: 200, json: { status: 'ok', origins: [LOCAL] } });
    expect(await call('GET', '/embed')).toEqual({ status: 200, json: { status: 'ok', origins: [LOCAL] } });
    expect(await call('GET', '/embed', undefined, 'alice')).toMatchObject({ status: 403, json: { status: 'denied' } });
    expect(await call('POST', '/embed', { origins: [] }, 'alice')).toMatchObject({ status: 403, json: { status: 'denied' } });
    expect(await call('POST', '/embed', { origins: ['http://app.example.com'] })).toMatchObject({ status: 400, json: { status: 'denied', message: expect.stringMatching(/^origins\[0\]: .*must be https/) } });
    expect((await call('DELETE', '/embed')).status).toBe(405);
    expect(await call('GET', '/embed')).toEqual({ status: 200, json: { status: 'ok', origins: [LOCAL] } });
  });

  it("passes a create's embed on: a narrowed session's page names its origins; an origin the account lacks is refused, naming it", async () => {
    await call('POST', '/embed', { origins: [APP, LOCAL] });
    const created = await call('POST', '/sessions', { browser: 'chromium', embed: { origins: [LOCAL] } });
    expect(created).toMatchObject({ status: 200, json: { status: 'ok' } });
    const page = await fetch(created.json.shareUrl);
    await page.arrayBuffer();
    expect(page.headers.get('content-security-policy')).toMatch(/; frame-ancestors http:\/\/localhost:3000$/);
    expect(page.headers.get('x-frame-options')).toBeNull();
    const refused = await call('POST', '/sessions', { browser: 'chromium', embed: { origins: ['https://other.example.com'] } });
    expect(refused).toMatchObject({ status: 400, json: { status: 'denied', message: expect.stringMatching(/^embed: the origin "https:\/\/other.example.com" is not one the account allows/) } });
  });
});
