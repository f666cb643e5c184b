// POST /v8/vm/create field rules (decisions.md 22-24, 14-16): every bad field is refused with
// `denied` (HTTP 200) naming the field, before anything happens: no session, quota unchanged.
import { beforeAll, describe, expect, it } from 'vitest';
import { createResponseSchema, failureSchema } from '../../src/protocol/index.js';
import { useEngine } from './context.js';
import { Api, describeReply, PLANS, removeSessions, type Reply } from './harness.js';

const ctx = useEngine();

let basic: Api;
let geo: Api;

beforeAll(async () => {
  basic = (await ctx.account([PLANS.basic])).api;
  geo = (await ctx.account([PLANS.geo])).api;
});

/** The account's observable state: its session list and its meters. */
async function snapshot(api: Api) {
  const list = await api.data();
  const quota = await api.quota();
  expect(list.json?.status, describeReply(list)).toBe('ok');
  expect(quota.json?.status, describeReply(quota)).toBe('ok');
  return { data: list.json.data, quota: quota.json };
}

/** Sends one create; expects a refusal with `status` whose message contains `words`; expects no change. */
async function expectRefused(api: Api, send: () => Promise<Reply>, status: 'denied' | 'upgrade', words: string | RegExp) {
  const before = await snapshot(api);
  const reply = await send();
  expect(reply.http, describeReply(reply)).toBe(200);
  expect(failureSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
  expect(reply.json.status, describeReply(reply)).toBe(status);
  if (typeof words === 'string') expect(reply.json.message).toContain(words);
  else expect(reply.json.message).toMatch(words);
  expect(reply.json).not.toHaveProperty('vmId');
  const after = await snapshot(api);
  expect(after.data).toEqual(before.data);
  expect(after.quota).toEqual(before.quota);
}

const PAGE = () => ctx.pages.page;

describe('a bad field -> denied naming the field, nothing created', () => {
  const cases: [string, () => Record<string, unknown>, string][] = [
    ['browser missing', () => ({ url: PAGE() }), 'browser'],
    ['browser empty', () => ({ browser: '', url: PAGE() }), 'browser'],
    ['browser not a string', () => ({ browser: 42, url: PAGE() }), 'browser'],
    ['browser null', () => ({ browser: null, url: PAGE() }), 'browser'],
    ['browser unknown', () => ({ browser: 'netscape-navigator', url: PAGE() }), 'browser'],
    ['browser in the wrong case', () => ({ browser: 'Chromium', url: PAGE() }), 'browser'],
    ['url not a string', () => ({ browser: 'chromium', url: 123 }), 'url'],
    ['url file://', () => ({ browser: 'chromium', url: 'file:///etc/passwd' }), 'url'],
    ['url javascript:', () => ({ browser: 'chromium', url: 'javascript:alert(1)' }), 'url'],
    ['url data:', () => ({ browser: 'chromium', url: 'data:text/html,<h1>x</h1>' }), 'url'],
    ['url chrome://', () => ({ browser: 'chromium', url: 'chrome://settings' }), 'url'],
    ['url ftp://', () => ({ browser: 'chromium', url: 'ftp://127.0.0.1/file' }), 'url'],
    ['url not an address', () => ({ browser: 'chromium', url: 'not a url' }), 'url'],
    ['url of 10,001 characters', () => ({ browser: 'chromium', url: `${PAGE()}?q=${'a'.repeat(10_001 - PAGE().length - 3)}` }), 'url'],
    ['url a short-URL id that was never made', () => ({ browser: 'chromium', url: 'url_0000000000' }), 'url'],
    ['language unknown', () => ({ browser: 'chromium', url: PAGE(), language: 'xx-invalid' }), 'language'],
    ['language not a string', () => ({ browser: 'chromium', url: PAGE(), language: 7 }), 'language'],
    // Languages the installed images cannot show (decisions.md 42): Debian's Chromium has no Zulu
    // locale pack, Debian has no Swahili language pack for Firefox ESR, and neither has another
    // variety of the same language to show instead.
    ['language Chromium cannot show (zu)', () => ({ browser: 'chromium', url: PAGE(), language: 'zu' }), 'language: Chromium cannot show its interface in zu'],
    ['language Firefox ESR cannot show (sw)', () => ({ browser: 'firefox-esr', url: PAGE(), language: 'sw' }), 'language: Firefox ESR cannot show its interface in sw'],
    ['layout unknown', () => ({ browser: 'chromium', url: PAGE(), layout: 'qwertz' }), 'layout'],
    ['layout not a string', () => ({ browser: 'chromium', url: PAGE(), layout: ['us'] }), 'layout'],
    ['egress not residential', () => ({ browser: 'chromium', url: PAGE(), egress: 'datacenter' }), 'egress'],
    ['egress not a string', () => ({ browser: 'chromium', url: PAGE(), egress: true }), 'egress'],
    ['shareLanguage unknown', () => ({ browser: 'chromium', url: PAGE(), shareLanguage: 'ru' }), 'shareLanguage'],
    ['shareLanguage not a string', () => ({ browser: 'chromium', url: PAGE(), shareLanguage: 1 }), 'shareLanguage'],
    ['callbackUrl javascript:', () => ({ browser: 'chromium', url: PAGE(), callbackUrl: 'javascript:alert(1)' }), 'callbackUrl'],
    ['callbackUrl file://', () => ({ browser: 'chromium', url: PAGE(), callbackUrl: 'file:///etc/passwd' }), 'callbackUrl'],
    ['callbackUrl JavaScript: in mixed case after blanks', () => ({ browser: 'chromium', url: PAGE(), callbackUrl: ' \tJavaScript:alert(1)' }), 'callbackUrl'],
    ['callbackUrl java<newline>script:', () => ({ browser: 'chromium', url: PAGE(), callbackUrl: 'java\nscript:alert(1)' }), 'callbackUrl'],
    ['callbackUrl data:', () => ({ browser: 'chromium', url: PAGE(), callbackUrl: 'data:text/html,<script>alert(1)</script>' }), 'callbackUrl'],
    ['callbackUrl vbscript:', () => ({ browser: 'chromium', url: PAGE(), callbackUrl: 'vbscript:msgbox(1)' }), 'callbackUrl'],
    ['callbackUrl of 2,001 characters', () => ({ browser: 'chromium', url: PAGE(), callbackUrl: `https://example.com/${'c'.repeat(2_001 - 20)}` }), 'callbackUrl'],
    ['callbackUrl not a string', () => ({ browser: 'chromium', url: PAGE(), callbackUrl: { href: 'https://example.com' } }), 'callbackUrl'],
    ['idempotencyKey of 0 characters', () => ({ browser: 'chromium', url: PAGE(), idempotencyKey: '' }), 'idempotencyKey'],
    ['idempotencyKey of 129 characters', () => ({ browser: 'chromium', url: PAGE(), idempotencyKey: 'k'.repeat(129) }), 'idempotencyKey'],
    ['idempotencyKey not a string', () => ({ browser: 'chromium', url: PAGE(), idempotencyKey: 12345 }), 'idempotencyKey'],
    ['country not a string', () => ({ browser: 'chromium', url: PAGE(), country: 1 }), 'country'],
    ['automation not true or false', () => ({ browser: 'firefox-esr', url: PAGE(), automation: 'yes' }), 'automation: must be true or false'],
  ];

  it('the long-field cases have the lengths they claim', () => {
    const byName = new Map(cases.map(([name, body]) => [name, body()]));
    expect((byName.get('url of 10,001 characters')!.url as string).length).toBe(10_001);
    expect((byName.get('callbackUrl of 2,001 characters')!.callbackUrl as string).length).toBe(2_001);
  });

  it.each(cases)('%s', async (_name, body, field) => {
    await expectRefused(basic, () => basic.create(body()), 'denied', field);
    // The same on a plan with location access and a residential allowance.
    await expectRefused(geo, () => geo.create(body()), 'denied', field);
  });

  it('a bad field is refused even when the rest would also fail a plan check', async () => {
    // basic has no location access: the field check comes first ("before anything happens").
    await expectRefused(basic, () => basic.create({ browser: 'chromium', url: 'javascript:1', country: 'us' }), 'denied', 'url');
  });
});

describe('bodies', () => {
  it('a body that is not JSON -> denied', async () => {
    for (const raw of ['{not json', '', 'browser=chromium', '{"browser":"chromium",}']) {
      await expectRefused(basic, () => basic.post('/v8/vm/create', undefined, { raw }), 'denied', /./);
    }
  });

  it('JSON that is not an object -> denied', async () => {
    for (const raw of ['null', '"chromium"', '42', 'true', '[{"browser":"chromium"}]']) {
      await expectRefused(basic, () => basic.post('/v8/vm/create', undefined, { raw }), 'denied', /./);
    }
  });

  it('a body over 64 KiB -> denied, even when it is a valid request', async () => {
    const body = { browser: 'chromium', url: ctx.pages.page, padding: 'p'.repeat(64 * 1024) };
    expect(Buffer.byteLength(JSON.stringify(body))).toBeGreaterThan(64 * 1024);
    await expectRefused(basic, () => basic.create(body), 'denied', /./);
  });
});

describe('plan checks', () => {
  it('country on a plan without location access -> upgrade', async () => {
    await expectRefused(basic, () => basic.create({ browser: 'chromium', url: PAGE(), country: 'us' }), 'upgrade', /./);
    await expectRefused(basic, () => basic.create({ browser: 'chromium', url: PAGE(), country: 'auto' }), 'upgrade', /./);
  });

  it('an unknown country code on a plan with location access -> denied "unsupported exit location"', async () => {
    for (const country of ['zz', 'us-xxx', 'US', 'gb']) {
      await expectRefused(geo, () => geo.create({ browser: 'chromium', url: PAGE(), country }), 'denied', 'unsupported exit location');
    }
  });

  it('egress residential on a plan without residential allowance -> upgrade', async () => {
    await expectRefused(basic, () => basic.create({ browser: 'chromium', url: PAGE(), egress: 'residential' }), 'upgrade', /./);
  });
});

describe('accepted requests', () => {
  it('unknown extra fields are ignored', async () => {
    const reply = await basic.create({ browser: 'chromium', url: PAGE(), foo: 'bar', nested: { a: [1, 2, 3] }, vmId: 'mine', status: 'error' });
    expect(createResponseSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
    expect(reply.json.vmId).not.toBe('mine');
    ctx.track(basic, reply.json.vmId);
    await removeSessions(basic, [reply.json.vmId]);
  });

  it('the limits are inclusive: url of 10,000, callbackUrl of 2,000, idempotencyKey of 128 and of 1 character', async () => {
    const url = `${PAGE()}?q=${'a'.repeat(10_000 - PAGE().length - 3)}`;
    const callbackUrl = `https://example.com/${'c'.repeat(2_000 - 20)}`;
    expect(url.length).toBe(10_000);
    expect(callbackUrl.length).toBe(2_000);
    const first = await basic.create({ browser: 'chromium', url, callbackUrl, idempotencyKey: 'k'.repeat(128), language: 'de', layout: 'de', shareLanguage: 'ja' });
    expect(createResponseSchema.safeParse(first.json).success, describeReply(first)).toBe(true);
    ctx.track(basic, first.json.vmId);
    await removeSessions(basic, [first.json.vmId]);
    const second = await basic.create({ browser: 'chromium', url: PAGE(), idempotencyKey: 'k', language: 'pt-BR', layout: 'gb' });
    expect(createResponseSchema.safeParse(second.json).success, describeReply(second)).toBe(true);
    ctx.track(basic, second.json.vmId);
    await removeSessions(basic, [second.json.vmId]);
  });
});
