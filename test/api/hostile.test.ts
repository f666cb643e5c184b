// Malformed and hostile input never crashes the engine: every request gets an envelope answer,
// and the engine still serves afterwards.
import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { envelopeSchema, failureSchema } from '../../src/protocol/index.js';
import { useEngine } from './context.js';
import { Api, describeReply, PLANS, send, type Reply } from './harness.js';

const ctx = useEngine();
let api: Api;

beforeAll(async () => {
  api = (await ctx.account([PLANS.burst])).api;
});

function expectDeniedEnvelope(reply: Reply) {
  expect(reply.http, describeReply(reply)).toBe(200);
  expect(reply.headers['content-type']).toMatch(/^application\/json/);
  expect(failureSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
  expect(reply.json.status, describeReply(reply)).toBe('denied');
}

const DEPTH = 30_000;

const HOSTILE_BODIES: [string, () => Buffer | string][] = [
  ['deeply nested arrays', () => '['.repeat(DEPTH) + ']'.repeat(DEPTH)],
  ['a deeply nested browser field', () => `{"browser":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}`],
  ['deeply nested objects', () => '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000)],
  ['unbalanced nesting', () => '{"browser":' + '['.repeat(DEPTH)],
  ['a 60 KB browser string', () => JSON.stringify({ browser: 'x'.repeat(60_000) })],
  ['a 60 KB key', () => JSON.stringify({ ['k'.repeat(60_000)]: 1, browser: 'chromium' }).replace('"browser":"chromium"', '"browser":1')],
  ['a 2 MB body', () => JSON.stringify({ browser: 'chromium', url: 'http://127.0.0.1/', filler: 'f'.repeat(2 * 1024 * 1024) })],
  ['null', () => 'null'],
  ['a number', () => '1e999999'],
  ['wrong types everywhere', () => JSON.stringify({ browser: {}, url: [], language: null, layout: 1.5, country: false, egress: {}, shareLanguage: [], callbackUrl: 0, idempotencyKey: true })],
  ['invalid UTF-8 in a string', () => Buffer.concat([Buffer.from('{"browser":"chrom'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('ium"}')])],
  ['invalid UTF-8 outside strings', () => Buffer.concat([Buffer.from('{"browser":"chromium"'), Buffer.from([0xc0, 0xaf]), Buffer.from('}')])],
  ['a lone surrogate escape', () => '{"browser":"\\ud800chromium"}'],
  ['a NUL in a field', () => '{"browser":"chromium\\u0000","url":"http://127.0.0.1/\\u0000"}'],
  ['__proto__ carrying the fields', () => '{"__proto__":{"browser":"chromium","url":"http://127.0.0.1/"}}'],
  ['constructor.prototype', () => '{"constructor":{"prototype":{"browser":"chromium"}}}'],
  ['duplicate keys ending on a bad value', () => '{"browser":"chromium","browser":42}'],
  ['a byte-order mark then garbage', () => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{{{')])],
  ['an empty body', () => ''],
];

describe('hostile bodies to vm/create and vm/remove', () => {
  it.each(HOSTILE_BODIES)('%s -> denied envelope', async (_name, make) => {
    const raw = make();
    const before = (await api.quota()).json;
    expectDeniedEnvelope(await api.post('/v8/vm/create', undefined, { raw, timeoutMs: 30_000 }));
    expectDeniedEnvelope(await api.post('/v8/vm/remove', undefined, { raw, timeoutMs: 30_000 }));
    const after = (await api.quota()).json;
    expect(after.cycle_sessions_used).toBe(before.cycle_sessions_used);
    expect(after.running_sessions_used).toBe(0);
    expect(ctx.engine.alive()).toBe(true);
  });

  it('__proto__ in a body does not leak into other objects', async () => {
    await api.post('/v8/vm/create', undefined, { raw: '{"__proto__":{"status":"ok","isAdmin":true,"running_session_limit":999}}' });
    const quota = (await api.quota()).json;
    expect(quota.running_session_limit).toBe(PLANS.burst.running_session_limit);
    expect(quota).not.toHaveProperty('isAdmin');
  });
});

describe('odd requests', () => {
  it('odd vm/data ids -> an envelope answer', async () => {
    const paths = [
      '/v8/vm/data?id=',
      '/v8/vm/data?id=%00',
      '/v8/vm/data?id=%ff%fe',
      `/v8/vm/data?id=${'a'.repeat(6000)}`,
      '/v8/vm/data?id=a&id=b',
      '/v8/vm/data?id[]=x',
      "/v8/vm/data?id=' OR 1=1 --",
      '/v8/vm/data?id=../../etc/passwd',
    ];
    for (const path of paths) {
      const reply = await api.get(path.replace(/ /g, '%20'));
      expect(reply.http, `${path}: ${describeReply(reply)}`).toBe(200);
      expect(envelopeSchema.safeParse(reply.json).success, `${path}: ${describeReply(reply)}`).toBe(true);
      if (reply.json.status === 'ok') expect(reply.json.data, path).toEqual([]);
      else expect(reply.json.status, path).toBe('denied');
    }
  });

  it('a huge or odd Authorization header -> HTTP 401 denied', async () => {
    for (const authorization of [`Bearer ${'k'.repeat(6000)}`, 'Bearer \u00e9\u00e9', "Bearer ' OR 1=1 --", 'Bearer %00']) {
      const reply = await send(ctx.engine.url, 'GET', '/v8/user/quota', { headers: { authorization: Buffer.from(authorization, 'utf8').toString('latin1') } });
      expect(reply.http, describeReply(reply)).toBe(401);
      expect(reply.json?.status, describeReply(reply)).toBe('denied');
    }
  });

  it('many hostile requests at once -> all answered', async () => {
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) => api.post('/v8/vm/create', undefined, { raw: HOSTILE_BODIES[i % HOSTILE_BODIES.length]![1](), timeoutMs: 30_000 })),
    );
    for (const reply of replies) expectDeniedEnvelope(reply);
  });

  it('a 2 MB body sent in chunks without a length -> denied envelope, not a broken connection', async () => {
    const reply = await new Promise<{ http: number; text: string }>((resolve, reject) => {
      const req = httpRequest(new URL('/v8/vm/create', ctx.engine.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        timeout: 30_000,
      }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve({ http: res.statusCode ?? 0, text }));
      });
      req.on('error', reject).on('timeout', () => req.destroy(new Error('no answer within 30 s')));
      const piece = 'f'.repeat(64 * 1024);
      req.write(`{"browser":"chromium","filler":"`);
      for (let i = 0; i < 32; i++) req.write(piece);
      req.end('"}');
    });
    expect(reply.http).toBe(200);
    expect(JSON.parse(reply.text)).toMatchObject({ status: 'denied', message: 'request body is larger than 64 KiB' });
  });

  it('the engine still answers GET /v8/image and authenticated calls afterwards', async () => {
    expect(ctx.engine.alive()).toBe(true);
    const image = await ctx.anon.image();
    expect(image.http).toBe(200);
    expect(image.json.status).toBe('ok');
    const quota = await api.quota();
    expect(quota.json.status).toBe('ok');
    expect(quota.json.cycle_sessions_used).toBe(0);
    expect((await api.data()).json).toEqual({ status: 'ok', data: [] });
  });
});
