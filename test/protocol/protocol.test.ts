// The wire format as callers meet it: which create requests are refused and with what words, how
// share links are written and read, how a viewer's key is read under its name and its former one,
// and which channels a share state says its session is offered.
import { describe, it, expect } from 'vitest';
import {
  CALLBACK_URL_MAX,
  URL_MAX,
  createResponseSchema,
  orFailure,
  parseCreateRequest,
  parseRemoveRequest,
  parseShareLink,
  shareLinkPath,
  v6LaunchQuerySchema,
  v6ShortUrlResponseSchema,
  v7CreateResponseSchema,
  offersChannel,
  parseControlClientMessage,
  viewerKeyOf,
  viewerStateFor,
  type CreateRequest,
  type ViewerState,
} from '../../src/protocol/index.js';

const refusal = (body: unknown) => {
  const result = parseCreateRequest(body);
  expect(result.ok).toBe(false);
  return result.ok ? '' : result.message;
};

describe('parseCreateRequest', () => {
  it('accepts a full valid request', () => {
    const body: CreateRequest = {
      browser: 'chrome',
      url: 'https://example.com/path?q=1',
      language: 'pt-BR',
      layout: 'de',
      country: 'us-dal',
      egress: 'residential',
      shareLanguage: 'ja',
      callbackUrl: 'http://example.com/back',
      idempotencyKey: 'k'.repeat(128),
    };
    expect(parseCreateRequest(body)).toEqual({ ok: true, value: body });
  });

  it('drops unknown extra fields', () => {
    expect(parseCreateRequest({ browser: 'chrome', extra: 1, nested: { a: 1 } })).toEqual({
      ok: true,
      value: { browser: 'chrome' },
    });
  });

  it('refuses a body that is not an object', () => {
    for (const body of [null, 'text', 42, [], undefined]) {
      expect(refusal(body)).toBe('request body must be a JSON object');
    }
  });

  it('requires browser', () => {
    expect(refusal({})).toMatch(/^browser: /);
    expect(refusal({ browser: '' })).toMatch(/^browser: /);
    expect(refusal({ browser: 7 })).toMatch(/^browser: /);
  });

  it('accepts url up to 10,000 characters and refuses longer', () => {
    const base = 'https://example.com/';
    expect(parseCreateRequest({ browser: 'chrome', url: base + 'a'.repeat(URL_MAX - base.length) }).ok).toBe(true);
    expect(refusal({ browser: 'chrome', url: base + 'a'.repeat(URL_MAX - base.length + 1) })).toBe(
      'url: must be an http or https address of at most 10,000 characters, or a short-URL id',
    );
  });

  it('refuses url schemes other than http and https', () => {
    for (const url of ['ftp://example.com/file', 'javascript:alert(1)', 'file:///etc/passwd', 'example.com', '']) {
      expect(refusal({ browser: 'chrome', url })).toMatch(/^url: /);
    }
  });

  it('accepts a v6 short-URL id as url', () => {
    expect(parseCreateRequest({ browser: 'chrome', url: 'url_0123456789' }).ok).toBe(true);
    expect(refusal({ browser: 'chrome', url: 'url_123' })).toMatch(/^url: /);
  });

  it('checks callbackUrl scheme and length', () => {
    expect(refusal({ browser: 'chrome', callbackUrl: 'javascript:alert(1)' })).toBe(
      'callbackUrl: must be an http or https address of at most 2,000 characters',
    );
    const base = 'https://example.com/';
    expect(refusal({ browser: 'chrome', callbackUrl: base + 'a'.repeat(CALLBACK_URL_MAX) })).toMatch(/^callbackUrl: /);
  });

  it('refuses idempotency keys of 0 and 129 characters, and any with a NUL (decisions.md 36)', () => {
    expect(parseCreateRequest({ browser: 'chrome', idempotencyKey: 'k' }).ok).toBe(true);
    expect(refusal({ browser: 'chrome', idempotencyKey: '' })).toBe('idempotencyKey: must be a string of 1 to 128 characters, without NUL (U+0000)');
    expect(refusal({ browser: 'chrome', idempotencyKey: 'k'.repeat(129) })).toMatch(/^idempotencyKey: /);
    expect(refusal({ browser: 'chrome', idempotencyKey: 'key\u0000one' })).toMatch(/^idempotencyKey: .*NUL/);
  });

  it('checks language and layout against the supported lists', () => {
    expect(refusal({ browser: 'chrome', language: 'xx-YY' })).toMatch(/^language: /);
    expect(refusal({ browser: 'chrome', layout: 'qwerty' })).toMatch(/^layout: /);
    expect(parseCreateRequest({ browser: 'chrome', language: 'en', layout: 'us' }).ok).toBe(true);
  });

  it('takes a supported language with a region (de-AT), and nothing else shaped like one', () => {
    for (const language of ['de-AT', 'fr-BE', 'en-AU', 'es-419', 'pt-BR']) expect(parseCreateRequest({ browser: 'chrome', language }).ok, language).toBe(true);
    for (const language of ['de-at', 'xx-AT', 'de-AT-x', 'de-', 'DE-AT', 'de-ATT', 'de-1234']) expect(refusal({ browser: 'chrome', language }), language).toMatch(/^language: /);
  });

  it('allows only residential as egress', () => {
    expect(refusal({ browser: 'chrome', egress: 'datacenter' })).toBe('egress: the only allowed value is residential');
  });

  it('allows only the seven share languages', () => {
    expect(refusal({ browser: 'chrome', shareLanguage: 'ru' })).toBe('shareLanguage: must be one of en, de, fr, es, it, pt, ja');
  });

  it('refuses wrong types and null with the field named', () => {
    expect(refusal({ browser: 'chrome', country: 5 })).toMatch(/^country: /);
    expect(refusal({ browser: 'chrome', language: null })).toMatch(/^language: /);
  });

  it('names the first failing field when several fail', () => {
    expect(refusal({ browser: 'chrome', url: 'ftp://x', layout: 'nope' })).toMatch(/^url: /);
  });
});

describe('other requests', () => {
  it('remove needs an id', () => {
    expect(parseRemoveRequest({ id: 'abc' })).toEqual({ ok: true, value: { id: 'abc' } });
    expect(parseRemoveRequest({})).toEqual({ ok: false, message: 'id: required; must be the vmId returned by vm/create' });
  });

  it('v6 /b defaults browser to Chrome and refuses others', () => {
    expect(v6LaunchQuerySchema.parse({ key: 't' }).browser).toBe('Chrome');
    expect(v6LaunchQuerySchema.safeParse({ key: 't', browser: 'Safari' }).error?.issues[0]?.message).toMatch(/^browser: /);
  });

  it('v6 short-URL ids are url_ and ten digits', () => {
    expect(v6ShortUrlResponseSchema.safeParse({ success: true, id: 'url_0123456789' }).success).toBe(true);
    expect(v6ShortUrlResponseSchema.safeParse({ success: true, id: 'url_abc' }).success).toBe(false);
  });
});

describe('responses', () => {
  const quota = {
    running_session_limit: 2,
    running_sessions_used: 1,
    running_sessions_remaining: 1,
    cycle_session_limit: null,
    cycle_sessions_used: 4,
    cycle_sessions_remaining: null,
    cycle_start: '2025-01-15',
    cycle_end: '2025-02-15',
  };

  it('reads a create answer or a failure', () => {
    const read = orFailure(createResponseSchema);
    expect(read.parse({ status: 'ok', vmId: 'v', quota }).status).toBe('ok');
    expect(read.parse({ status: 'insecure', reason: 'rate_limited', message: 'slow down' }).status).toBe('insecure');
    expect(read.safeParse({ status: 'insecure', message: 'no reason' }).success).toBe(false);
  });

  it('v7 create answers say whether the location was applied, and name the meters as credits and concurrency too', () => {
    const credits = { credits_total: null, credits_used: 4, credits_available: null, concurrency_total: 2, concurrency_used: 1, concurrency_available: 1 };
    const v7Quota = { ...quota, ...credits };
    const answer = { status: 'ok', vmId: 'v', quota: v7Quota, location_applied: false, location_reason: 'unavailable' };
    expect(v7CreateResponseSchema.parse(answer).location_reason).toBe('unavailable');
    expect(v7CreateResponseSchema.safeParse({ status: 'ok', vmId: 'v', quota: v7Quota }).success).toBe(false);
    expect(v7CreateResponseSchema.safeParse({ ...answer, quota }).success).toBe(false);
  });
});

describe('share links', () => {
  it('writes and reads back a share link path', () => {
    const path = shareLinkPath('de', 'AbC-_123');
    expect(path).toBe('/de/s?AbC-_123');
    expect(parseShareLink(path)).toEqual({ language: 'de', linkId: 'AbC-_123' });
  });

  it('reads full links, including under a base path', () => {
    expect(parseShareLink('https://view.example.com/ja/s?xyz')).toEqual({ language: 'ja', linkId: 'xyz' });
    expect(parseShareLink('https://example.com/viewer/fr/s?xyz')).toEqual({ language: 'fr', linkId: 'xyz' });
  });

  it('falls back to en without a language segment or with an unknown one', () => {
    expect(parseShareLink('/s?xyz')).toEqual({ language: 'en', linkId: 'xyz' });
    expect(parseShareLink('https://view.example.com/s?xyz')).toEqual({ language: 'en', linkId: 'xyz' });
    expect(parseShareLink('/ru/s?xyz')).toEqual({ language: 'en', linkId: 'xyz' });
  });

  it('gives null for something that is not a share link', () => {
    expect(parseShareLink('/de/s')).toBeNull();
    expect(parseShareLink('/de/x?xyz')).toBeNull();
    expect(parseShareLink('/de/s?a b')).toBeNull();
  });

  it('maps session status to the viewer screen', () => {
    expect(viewerStateFor('starting')).toBe('waiting');
    expect(viewerStateFor('running')).toBe('running');
    expect(viewerStateFor('error')).toBe('ended');
    expect(viewerStateFor('suspended')).toBe('ended');
    expect(viewerStateFor('deleted')).toBe('gone');
  });
});

describe('the viewer key (decisions.md 149)', () => {
  const key = 'AAAAbbbbCCCCdddd-_12';

  it('is read from a hello as `viewerKey`, and under its former name `seat` for one version', () => {
    expect(parseControlClientMessage(JSON.stringify({ type: 'hello', viewerKey: key, pass: 'p' }))).toEqual({ type: 'hello', viewerKey: key, pass: 'p' });
    expect(parseControlClientMessage(JSON.stringify({ type: 'hello', seat: key }))).toEqual({ type: 'hello', viewerKey: key });
    // The new name wins when both are given.
    expect(parseControlClientMessage(JSON.stringify({ type: 'hello', viewerKey: key, seat: 'x'.repeat(20) }))).toEqual({ type: 'hello', viewerKey: key });
    expect(parseControlClientMessage(JSON.stringify({ type: 'hello' }))).toEqual({ type: 'hello' });
    // Not a key (too short, not base64url) under either name: not a hello.
    expect(parseControlClientMessage(JSON.stringify({ type: 'hello', viewerKey: 'short' }))).toBeNull();
    expect(parseControlClientMessage(JSON.stringify({ type: 'hello', seat: 'not a key at all!!' }))).toBeNull();
  });

  it('is read from a channel address as `?viewer=`, and as `?seat=` for one version', () => {
    expect(viewerKeyOf(new URLSearchParams({ viewer: key }))).toBe(key);
    expect(viewerKeyOf(new URLSearchParams({ seat: key }))).toBe(key);
    expect(viewerKeyOf(new URLSearchParams({ viewer: key, seat: 'y'.repeat(20) }))).toBe(key);
    expect(viewerKeyOf(new URLSearchParams({ viewer: 'short' }))).toBeUndefined();
    expect(viewerKeyOf(new URLSearchParams())).toBeUndefined();
  });
});

describe('the channels a share state offers (decisions.md 150)', () => {
  const base: ViewerState = { state: 'running', language: 'en', browserName: 'Chromium', leaveUrl: null };

  it('are read under `channels`, whatever the top level says', () => {
    const state = { ...base, channels: { sound: true, people: true }, video: true } as ViewerState;
    expect(offersChannel(state, 'sound')).toBe(true);
    expect(offersChannel(state, 'people')).toBe(true);
    expect(offersChannel(state, 'video')).toBe(false);
    expect(offersChannel(state, 'toString')).toBe(false);
  });

  it('are read from the former top-level flags only from an engine before `channels`', () => {
    const former = { ...base, sound: true, editing: true, control: true } as ViewerState;
    expect(offersChannel(former, 'sound')).toBe(true);
    expect(offersChannel(former, 'editing')).toBe(true);
    expect(offersChannel(former, 'video')).toBe(false);
    // A field of the state is no channel.
    expect(offersChannel(former, 'control')).toBe(false);
    expect(offersChannel(null, 'sound')).toBe(false);
  });
});
