// The node link's route table (cluster/node-routes.ts, issue 48): over a real HTTP server, a call
// reaches its route only when signed with the cluster secret over its method, path with query,
// time and JSON body; an unsigned, stale, re-addressed or altered call is refused before any
// route runs; an unknown internal path gets the envelope's 404; two routes for one path stop the start.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signCall, verifyCall } from '../../src/engine/cluster/node-link.js';
import { serveNodeRoutes, type NodeCall, type NodeRoute } from '../../src/engine/cluster/node-routes.js';
import { sendJson } from '../../src/engine/http/respond.js';

const SECRET = 'a cluster secret of at least thirty-two characters';
const ID = '0123456789abcdef0123456789abcdef';

describe('the node link route table', () => {
  const reached: Array<{ route: string; call: Pick<NodeCall, 'id' | 'body'> }> = [];
  const route = (method: 'GET' | 'POST', path: string, body: NodeRoute['body']): NodeRoute => ({
    method, path, body,
    async answer(call, response) {
      reached.push({ route: `${method} ${path}`, call: { id: call.id, body: call.body } });
      sendJson(response, { status: 'ok', id: call.id, query: call.url.search });
    },
  });
  let server: Server;
  let base = '';

  beforeAll(async () => {
    const serve = serveNodeRoutes([route('POST', 'sessions/:id/act', 'json'), route('GET', 'sessions/:id/read', 'none'), route('GET', 'meters', 'none')], (request, path, body) =>
      verifyCall(SECRET, request.headers['x-rbk-node-auth'] as string | undefined, request.method ?? 'GET', path, body, Date.now()));
    server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://node');
      void serve(request, response, url).then((served) => {
        if (!served) sendJson(response, { status: 'elsewhere' }, 418);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const call = async (method: string, path: string, options: { body?: string; signedBody?: string; signedPath?: string; time?: number; secret?: string; unsigned?: boolean } = {}) => {
    const headers: Record<string, string> = options.body ? { 'content-type': 'application/json' } : {};
    if (!options.unsigned) headers['x-rbk-node-auth'] = signCall(options.secret ?? SECRET, method, options.signedPath ?? path, options.signedBody ?? options.body ?? '', options.time ?? Date.now());
    const response = await fetch(`${base}${path}`, { method, headers, ...(options.body ? { body: options.body } : {}) });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  it('a signed call reaches its route with the id its path names and its body', async () => {
    reached.length = 0;
    const posted = await call('POST', `/internal/v1/sessions/${ID}/act`, { body: JSON.stringify({ action: 'go' }) });
    expect(posted).toEqual({ status: 200, json: { status: 'ok', id: ID, query: '' } });
    const read = await call('GET', `/internal/v1/sessions/${ID}/read?kind=upload`);
    expect(read.json).toEqual({ status: 'ok', id: ID, query: '?kind=upload' });
    const meters = await call('GET', '/internal/v1/meters?account=a');
    expect(meters.json).toMatchObject({ status: 'ok', id: '' });
    expect(reached).toEqual([
      { route: 'POST sessions/:id/act', call: { id: ID, body: { action: 'go' } } },
      { route: 'GET sessions/:id/read', call: { id: ID, body: undefined } },
      { route: 'GET meters', call: { id: '', body: undefined } },
    ]);
  });

  it('refuses, before any route runs, a call unsigned, signed with another secret, stale, signed for another path or query, or whose body changed', async () => {
    reached.length = 0;
    const refused = { status: 403, json: { status: 'denied', message: 'not a call from a node of this cluster' } };
    const act = `/internal/v1/sessions/${ID}/act`;
    const body = JSON.stringify({ action: 'go' });
    expect(await call('POST', act, { body, unsigned: true })).toEqual(refused);
    expect(await call('POST', act, { body, secret: 'another secret of at least thirty-two characters' })).toEqual(refused);
    expect(await call('POST', act, { body, time: Date.now() - 120_000 })).toEqual(refused);
    expect(await call('POST', act, { body, signedBody: JSON.stringify({ action: 'stop' }) })).toEqual(refused);
    expect(await call('POST', act, { body: 'not json', signedBody: 'not json' })).toEqual(refused);
    expect(await call('GET', `/internal/v1/sessions/${ID}/read?kind=upload`, { signedPath: `/internal/v1/sessions/${ID}/read?kind=download` })).toEqual(refused);
    expect(await call('GET', `/internal/v1/sessions/${ID}/read`, { signedPath: `/internal/v1/sessions/${'f'.repeat(32)}/read` })).toEqual(refused);
    expect(reached).toEqual([]);
  });

  it('answers an unknown internal path or method with the envelope\'s 404, and leaves other paths to the rest of the engine', async () => {
    expect(await call('GET', `/internal/v1/sessions/${ID}/act`)).toEqual({ status: 404, json: { status: 'denied', message: `no endpoint GET /internal/v1/sessions/${ID}/act` } });
    expect((await call('POST', '/internal/v1/sessions/not-an-id/act', { body: '{}' })).status).toBe(404);
    expect((await call('GET', '/v8/vm/list')).status).toBe(418);
  });

  it('refuses two routes for one method and path at once', () => {
    expect(() => serveNodeRoutes([route('GET', 'meters', 'none'), route('GET', 'meters', 'none')], () => true)).toThrow('two node-link routes for GET meters');
  });
});
