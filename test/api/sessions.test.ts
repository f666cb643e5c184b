// A session's life through the v8 interface: create answers at once, the session starts and runs,
// vm/data shows it (masked id, timestamp, browser name), remove ends it.
import { beforeAll, describe, expect, it } from 'vitest';
import { createResponseSchema, failureSchema, removeResponseSchema, vmDataResponseSchema } from '../../src/protocol/index.js';
import { useEngine } from './context.js';
import { Api, describeReply, maskId, PLANS, removeSessions, send, SHARE_BASE, sessionStatus, waitForStatus } from './harness.js';

const ctx = useEngine();

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const HEX = /^[0-9a-fA-F]+$/;

/** At least 128 bits: 32 hex digits, or 22 base64url characters. */
function expectAtLeast128Bits(id: string) {
  if (HEX.test(id)) expect(id.length, id).toBeGreaterThanOrEqual(32);
  else {
    expect(id, id).toMatch(BASE64URL);
    expect(id.length, id).toBeGreaterThanOrEqual(22);
  }
}

let api: Api;
let chromiumName: string;

beforeAll(async () => {
  api = (await ctx.account([PLANS.burst])).api;
  const image = await ctx.anon.image();
  chromiumName = (image.json.images as { id: string; name: string }[]).find((i) => i.id === 'chromium')!.name;
});

describe('create', () => {
  let vmId: string;
  let created: any;
  let elapsedMs: number;
  let firstStatus: string | null;

  beforeAll(async () => {
    const before = Date.now();
    // The page answers after 3 s: a service that waited for readiness would answer late.
    const reply = await api.create({ browser: 'chromium', url: ctx.pages.slow(3000) });
    elapsedMs = Date.now() - before;
    created = reply.json;
    expect(createResponseSchema.safeParse(created).success, describeReply(reply)).toBe(true);
    vmId = created.vmId;
    ctx.track(api, vmId);
    firstStatus = await sessionStatus(api, vmId);
  });

  it('answers at once with status ok, and the session is starting', () => {
    expect(created.status).toBe('ok');
    expect(elapsedMs).toBeLessThan(2500);
    expect(firstStatus).toBe('starting');
  });

  it('returns a vmId with at least 128 random bits', () => {
    expectAtLeast128Bits(vmId);
  });

  it('returns the share link {share_base}/en/s?<link_id> and its path', () => {
    expect(created.shareUrl).toBeDefined();
    const match = /^\/en\/s\?([^&#]+)$/.exec(created.shareUrlPath);
    expect(match, created.shareUrlPath).not.toBeNull();
    expect(created.shareUrl).toBe(`${SHARE_BASE}${created.shareUrlPath}`);
    const linkId = match![1]!;
    expect(linkId).toMatch(BASE64URL);
    expect(linkId.length).toBeGreaterThanOrEqual(22);
    // The link works like a password of its own: it is not the session id.
    expect(linkId).not.toBe(vmId);
  });

  it('returns the quota counting the new session, and no v7 location fields', async () => {
    expect(created.quota).toMatchObject({
      running_session_limit: 3,
      running_sessions_used: 1,
      running_sessions_remaining: 2,
      cycle_session_limit: 200,
      cycle_sessions_used: 1,
      cycle_sessions_remaining: 199,
    });
    const quota = (await api.quota()).json;
    expect(created.quota.cycle_start).toBe(quota.cycle_start);
    expect(created).not.toHaveProperty('location_applied');
    expect(created).not.toHaveProperty('location_reason');
  });

  it('then runs', async () => {
    expect(await waitForStatus(api, vmId, ['running'])).toBe('running');
  });

  it('vm/data?id= shows the session: masked id, browser display name, ISO 8601 UTC created with milliseconds', async () => {
    const reply = await api.data(vmId);
    expect(vmDataResponseSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
    expect(reply.json.data).toHaveLength(1);
    const entry = reply.json.data[0];
    expect(entry.id).toBe(maskId(vmId));
    expect(entry.id.slice(0, 4)).toBe(vmId.slice(0, 4));
    expect(entry.id.slice(-4)).toBe(vmId.slice(-4));
    expect(entry.id.slice(4, -4)).toMatch(/^\*+$/);
    expect(entry.id.length).toBe(vmId.length);
    expect(entry.status).toBe('running');
    expect(entry.name).toBe(chromiumName);
    expect(entry.created).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const createdAt = Date.parse(entry.created);
    expect(Math.abs(createdAt - Date.now())).toBeLessThan(60_000);
  });

  it('its share page answers 200 while the session exists, with and without the language segment', async () => {
    const linkId = created.shareUrlPath.split('?')[1];
    for (const path of [created.shareUrlPath, `/s?${linkId}`, `/de/s?${linkId}`]) {
      const page = await send(ctx.engine.url, 'GET', path, { headers: { accept: 'text/html' } });
      expect(page.http, path).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
    }
  });

  it('remove -> ok; the session is stopping or deleted at once, then deleted', async () => {
    const reply = await api.remove(vmId);
    expect(reply.http).toBe(200);
    expect(reply.json).toEqual({ status: 'ok' });
    expect(removeResponseSchema.safeParse(reply.json).success).toBe(true);
    expect(['stopping', 'deleted']).toContain(await sessionStatus(api, vmId));
    expect(await waitForStatus(api, vmId, ['deleted'], 10_000)).toBe('deleted');
    const quota = (await api.quota()).json;
    expect(quota.running_sessions_used).toBe(0);
    expect(quota.cycle_sessions_used).toBe(1);
  });

  it('remove again -> ok, and the session stays deleted', async () => {
    const reply = await api.remove(vmId);
    expect(reply.json).toEqual({ status: 'ok' });
    const data = await api.data(vmId);
    expect(data.json.data).toHaveLength(1);
    expect(data.json.data[0].status).toBe('deleted');
    expect(data.json.data[0].id).toBe(maskId(vmId));
  });

  it('its share page then answers 410 (gone), and a link that never existed 404, with the same page, so previews and crawlers see it', async () => {
    const linkId = created.shareUrlPath.split('?')[1];
    const unknownLink = await send(ctx.engine.url, 'GET', '/en/s?x', { headers: { accept: 'text/html' } });
    for (const path of [created.shareUrlPath, `/s?${linkId}`, `/ja/s?${linkId}`]) {
      const page = await send(ctx.engine.url, 'GET', path, { headers: { accept: 'text/html' } });
      expect(page.http, path).toBe(410);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.text).toBe(unknownLink.text);
      expect(page.headers['cache-control']).toBe('no-store');
    }
    for (const path of ['/en/s?AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '/s?AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '/fr/s?not%20a%20link', '/s']) {
      expect((await send(ctx.engine.url, 'GET', path, { headers: { accept: 'text/html' } })).http, path).toBe(404);
    }
  });
});

describe('share language', () => {
  it.each(['de', 'fr', 'es', 'it', 'pt', 'ja', 'en'].map((lang) => [lang, lang]))('shareLanguage %s -> a link under /%s/s?<link_id>', async (lang) => {
    const reply = await api.create({ browser: 'chromium', url: ctx.pages.page, shareLanguage: lang });
    expect(createResponseSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
    ctx.track(api, reply.json.vmId);
    expect(reply.json.shareUrlPath).toMatch(new RegExp(`^/${lang}/s\\?[A-Za-z0-9_-]{22,}$`));
    expect(reply.json.shareUrl).toBe(`${SHARE_BASE}${reply.json.shareUrlPath}`);
    await removeSessions(api, [reply.json.vmId]);
  });
});

describe('vm/data and vm/remove', () => {
  it('every session gets its own vmId and share link', async () => {
    const replies = [];
    for (let i = 0; i < 3; i++) {
      const reply = await api.create({ browser: 'chromium', url: ctx.pages.page });
      expect(reply.json.status, describeReply(reply)).toBe('ok');
      ctx.track(api, reply.json.vmId);
      replies.push(reply.json);
    }
    expect(new Set(replies.map((r) => r.vmId)).size).toBe(3);
    expect(new Set(replies.map((r) => r.shareUrl)).size).toBe(3);
    for (const r of replies) expectAtLeast128Bits(r.vmId);
    await removeSessions(api, replies.map((r) => r.vmId));
  });

  it('the list without id holds the caller\'s sessions, newest first', async () => {
    const { api: fresh } = await ctx.account([PLANS.burst]);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const reply = await fresh.create({ browser: 'chromium', url: ctx.pages.page });
      expect(reply.json.status, describeReply(reply)).toBe('ok');
      ctx.track(fresh, reply.json.vmId);
      ids.push(reply.json.vmId);
      await new Promise((r) => setTimeout(r, 20));
    }
    await removeSessions(fresh, ids);
    const list = await fresh.data();
    expect(vmDataResponseSchema.safeParse(list.json).success, describeReply(list)).toBe(true);
    expect(list.json.data.map((e: { id: string }) => e.id)).toEqual([...ids].reverse().map(maskId));
    const times = list.json.data.map((e: { created: string }) => Date.parse(e.created));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    // Another account sees none of them.
    const { api: other } = await ctx.account([PLANS.burst]);
    expect((await other.data()).json).toEqual({ status: 'ok', data: [] });
  });

  it('unknown id -> ok with empty data', async () => {
    for (const id of ['nonexistent', 'A'.repeat(22), maskId('abcdefghijklmnopqrstuvwx')]) {
      const reply = await api.data(id);
      expect(reply.http).toBe(200);
      expect(reply.json).toEqual({ status: 'ok', data: [] });
    }
  });

  it('a masked id is not a session id: vm/data and vm/remove do not take it', async () => {
    const reply = await api.create({ browser: 'chromium', url: ctx.pages.page });
    ctx.track(api, reply.json.vmId);
    const masked = maskId(reply.json.vmId);
    expect((await api.data(masked)).json).toEqual({ status: 'ok', data: [] });
    const remove = await api.remove(masked);
    expect(remove.json.status).toBe('denied');
    expect(remove.json.message).toContain('unknown session');
    expect(['starting', 'running']).toContain(await sessionStatus(api, reply.json.vmId));
    await removeSessions(api, [reply.json.vmId]);
  });

  it('remove of an unknown id -> denied "unknown session"', async () => {
    const reply = await api.remove('nonexistent-session-id');
    expect(reply.http).toBe(200);
    expect(failureSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
    expect(reply.json.status).toBe('denied');
    expect(reply.json.message).toContain('unknown session');
  });

  it('another account\'s session is unknown: empty vm/data, remove denied "unknown session", the session lives on', async () => {
    const reply = await api.create({ browser: 'chromium', url: ctx.pages.page });
    expect(reply.json.status, describeReply(reply)).toBe('ok');
    const vmId: string = reply.json.vmId;
    ctx.track(api, vmId);
    const { api: other } = await ctx.account([PLANS.burst]);
    expect((await other.data(vmId)).json).toEqual({ status: 'ok', data: [] });
    const removal = await other.remove(vmId);
    expect(removal.json.status).toBe('denied');
    expect(removal.json.message).toContain('unknown session');
    expect(await waitForStatus(api, vmId, ['running'])).toBe('running');
    await removeSessions(api, [vmId]);
    expect(await sessionStatus(api, vmId)).toBe('deleted');
  });

  it('remove of a starting session -> ok, stopping or deleted at once, then deleted', async () => {
    const reply = await api.create({ browser: 'chromium', url: ctx.pages.hang });
    const vmId: string = reply.json.vmId;
    ctx.track(api, vmId);
    expect(await sessionStatus(api, vmId)).toBe('starting');
    const removal = await api.remove(vmId);
    expect(removal.json).toEqual({ status: 'ok' });
    expect(['stopping', 'deleted']).toContain(await sessionStatus(api, vmId));
    expect(await waitForStatus(api, vmId, ['deleted'], 10_000)).toBe('deleted');
  });

  it('remove body without a string id -> denied naming id', async () => {
    for (const body of [{}, { id: 42 }, { id: null }, { id: '' }, { vmId: 'x' }]) {
      const reply = await api.post('/v8/vm/remove', body);
      expect(reply.http, describeReply(reply)).toBe(200);
      expect(reply.json.status, describeReply(reply)).toBe('denied');
      expect(reply.json.message).toContain('id');
    }
  });
});
