// The proxy route's file endpoints (issue 23) in front of a real engine in this process (the
// service client's transfers go over its loopback) and a real confined Chromium session: a user
// gives a file to their session and fetches it back with the same bytes and its own name; another
// user holding the same handle is refused; a hostile name never reaches the service.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProxyRoute, engineService, type ProxyRoute } from '../../src/server/index.js';
import { APP_ORIGIN, BASE_PATH, poll, SECRET, startTestEngine, type TestEngine } from './fixtures.js';

let t: TestEngine;
let route: ProxyRoute;
let handle: string;
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** A request from the app's own pages, signed in as `user`. */
const call = (path: string, user = 'alice', init: RequestInit & { duplex?: 'half' } = {}) =>
  route(new Request(`${APP_ORIGIN}${BASE_PATH}${path}`, { ...init, headers: { origin: APP_ORIGIN, 'x-user': user, ...(init.headers as Record<string, string> | undefined) } }));

beforeAll(async () => {
  t = await startTestEngine({}, 'real');
  const { key } = await t.key();
  route = createProxyRoute({ service: engineService(t.engine, { apiKey: key }), authorize: (request) => ({ id: request.headers.get('x-user') ?? '' }), secret: SECRET });
  const created = (await (await call('/sessions', 'alice', { method: 'POST', body: JSON.stringify({ browser: 'chromium', url: t.pageUrl }), headers: { 'content-type': 'application/json' } })).json()) as { handle: string };
  handle = created.handle;
  const running = await poll(async () => ((await (await call(`/sessions/${encodeURIComponent(handle)}`)).json()) as { session?: { status: string } }).session?.status, (s) => s === 'running', 30_000);
  expect(running).toBe('running');
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('the proxy route moves files of the user\'s own sessions', () => {
  const given = randomBytes(1024 * 1024 + 5);

  it('takes a file into the session, lists it, and hands it back with its own name and the same bytes', async () => {
    const path = `/sessions/${encodeURIComponent(handle)}/files`;
    const uploaded = await call(`${path}/upload?name=${encodeURIComponent('Résumé.pdf')}`, 'alice', { method: 'POST', body: new Uint8Array(given) as unknown as BodyInit, headers: { 'content-type': 'application/octet-stream' } });
    expect(await uploaded.json()).toEqual({ status: 'ok', name: 'Résumé.pdf', size: given.length });
    const listed = (await (await call(path)).json()) as { status: string; files: Array<{ name: string; kind: string; size: number }> };
    expect(listed.files).toEqual([expect.objectContaining({ name: 'Résumé.pdf', kind: 'upload', size: given.length })]);
    const fetched = await call(`${path}/download?name=${encodeURIComponent('Résumé.pdf')}`);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-disposition')).toBe(`attachment; filename="R_sum_.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9.pdf`);
    expect(sha(new Uint8Array(await fetched.arrayBuffer()))).toBe(sha(given));
  });

  it("refuses another user holding the same handle, and a hostile name, saying why", async () => {
    const path = `/sessions/${encodeURIComponent(handle)}/files`;
    expect((await call(path, 'mallory')).status).toBe(404);
    expect((await call(`${path}/download?name=${encodeURIComponent('Résumé.pdf')}`, 'mallory')).status).toBe(404);
    expect((await call(`${path}/upload?name=x.txt`, 'mallory', { method: 'POST', body: 'x', headers: { 'content-type': 'application/octet-stream' } })).status).toBe(404);
    // A form another site could post (text/plain) is refused before anything is read.
    expect((await call(`${path}/upload?name=x.txt`, 'alice', { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
    const hostile = await call(`${path}/download?name=${encodeURIComponent('../../etc/passwd')}`);
    expect(hostile.status).toBe(400);
    expect(await hostile.json()).toEqual({ status: 'denied', message: 'name: must be one plain file name, without "/" (no folders or paths)' });
    const missing = await call(`${path}/download?name=absent.txt`);
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { message: string }).message).toBe('name: no file named "absent.txt" in this session');
  });
});
