// Replay links (issue 35, decisions.md 110-111) with real parts: a recorded Chromium session ends,
// its owner mints a link with the API key, and whoever holds the link reads the recording's
// description and its MP4 (ranges) from the viewer site without a key. A tampered or expired token
// opens nothing and says nothing of the session; the link lives no longer than the recording is
// kept; removing the recording ends it; v7 has no such call; tokens that open nothing are limited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/engine/config.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { waitFor } from '../helpers/session.js';

const DAY_MS = 86_400_000;
let fixture: EngineFixture;
/** Moves the engine's clock (ms ahead of now): expiry is tested without waiting. */
let clockAhead = 0;
let vmId: string;

beforeAll(async () => {
  const pro = DEFAULT_PLANS.find((plan) => plan.id === 'pro')!;
  fixture = await startEngine({
    name: 'replay-link',
    now: () => Date.now() + clockAhead,
    plans: ['recorded'],
    config: { plans: [...DEFAULT_PLANS, { ...pro, id: 'recorded', name: 'Recorded', recording: true }] },
    site: '<!doctype html><title>Kept</title><body style="background:#fff"><h1>kept page</h1></body>',
  });
  const { call, site } = fixture;
  const created = await call('/vm/create', { browser: 'chromium', url: `${site.origin}/kept`, record: true });
  expect(created.status).toBe('ok');
  vmId = created.vmId;
  await waitFor(() => call(`/vm/recording?id=${vmId}`), (answer) => answer.recording?.timeline.some((entry: { url?: string; title?: string }) => entry.url === `${site.origin}/kept` && entry.title === 'Kept') && answer.recording.duration_ms > 2000, 90_000);
  await call('/vm/remove', { id: vmId });
  await waitFor(() => call(`/vm/recording?id=${vmId}`), (answer) => answer.recording?.state === 'ended', 60_000);
}, 180_000);

afterAll(async () => {
  await fixture?.close();
});

/** A replay link's API, asked as a stranger would: no key, no cookie. */
const open = (url: string, init: RequestInit = {}) => fetch(url, init);
const json = async (response: Response) => ({ http: response.status, body: (await response.json()) as Record<string, any> });

describe('a replay link', () => {
  it('is minted with the API key and opens the recording and its MP4 without one', async () => {
    const minted = await fixture.call('/vm/recording/link', { id: vmId });
    expect(minted).toMatchObject({ status: 'ok', url: expect.stringMatching(new RegExp(`^${fixture.engine.url}/replay/[A-Za-z0-9_.-]+$`)) });
    // A week by default.
    expect(Math.abs(Date.parse(minted.expires) - (Date.now() + 7 * DAY_MS))).toBeLessThan(60_000);
    // The token is no API key and carries no secret of the account.
    expect(minted.url).not.toContain(fixture.account.key);

    const description = await json(await open(`${minted.url}/recording`));
    expect(description.http).toBe(200);
    expect(description.body.status).toBe('ok');
    expect(description.body.recording).toMatchObject({ state: 'ended', timeline: expect.arrayContaining([expect.objectContaining({ type: 'navigation', url: `${fixture.site.origin}/kept`, title: 'Kept' })]) });
    // The same description the owner reads with the key.
    expect(description.body.recording).toEqual((await fixture.call(`/vm/recording?id=${vmId}`)).recording);

    const whole = await open(`${minted.url}/media`);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/mp4');
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const bytes = Buffer.from(await whole.arrayBuffer());
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
    const part = await open(`${minted.url}/media`, { headers: { range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${bytes.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(bytes.subarray(100, 200));
  }, 60_000);

  it('is refused when tampered with or cut, saying nothing of the session', async () => {
    const { url } = await fixture.call('/vm/recording/link', { id: vmId });
    const token = url.split('/replay/')[1] as string;
    const [id, expires, signature] = token.split('.') as [string, string, string];
    const forged = [
      `${id}.${expires}.${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`,
      `${id}.${Number(expires) + DAY_MS}.${signature}`,
      `${id}.${expires}`,
      'not-a-token',
    ];
    for (const bad of forged) {
      const answer = await json(await open(`${fixture.engine.url}/replay/${bad}/recording`));
      expect(answer, bad).toEqual({ http: 404, body: { status: 'denied', reason: 'invalid', message: 'this replay link is not valid: check that it was copied whole' } });
      const media = await open(`${fixture.engine.url}/replay/${bad}/media`);
      expect(media.status, bad).toBe(404);
      expect(await media.text()).not.toContain(vmId.slice(4));
    }
    // An automation token of the same session is no replay token (the purpose is signed).
    const { automationToken } = await import('../../src/engine/channels/automation/tokens.js');
    const secret = await fixture.engine.store.settingOrInsert('replay_link_secret', 'unused');
    expect((await open(`${fixture.engine.url}/replay/${automationToken(secret, vmId, Date.now() + 60_000)}/recording`)).status).toBe(404);
    // GET, and HEAD for the headers alone (players and link checkers ask it first); nothing else.
    expect((await open(`${url}/recording`, { method: 'POST' })).status).toBe(405);
    const head = await open(`${url}/media`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('video/mp4');
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(10_000);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it('expires when it says, and never outlives the recording', async () => {
    const short = await fixture.call('/vm/recording/link', { id: vmId, expires_in_s: 60 });
    expect(Math.abs(Date.parse(short.expires) - (Date.now() + 60_000))).toBeLessThan(5000);
    expect((await open(`${short.url}/recording`)).status).toBe(200);
    clockAhead = 61_000;
    try {
      expect(await json(await open(`${short.url}/recording`))).toEqual({ http: 410, body: { status: 'denied', reason: 'expired', message: 'this replay link has expired; ask whoever shared it for a new one' } });
      expect((await open(`${short.url}/media`)).status).toBe(410);
    } finally {
      clockAhead = 0;
    }
    // A year asked: cut at the recording's removal (the service's 30 days after its session ended).
    const long = await fixture.call('/vm/recording/link', { id: vmId, expires_in_s: 365 * 86_400 });
    const row = (await fixture.engine.store.session(vmId))!;
    expect(Date.parse(long.expires)).toBe(row.ended_at! + 30 * DAY_MS);
  });

  it('refuses bad requests in the envelope and changes nothing', async () => {
    for (const body of [{ id: vmId, expires_in_s: 10 }, { id: vmId, expires_in_s: 1.5 }, { id: vmId, expires_in_s: '60' }, { id: vmId, expires_in_s: 400 * 86_400 }]) {
      expect(await fixture.call('/vm/recording/link', body), JSON.stringify(body)).toMatchObject({ status: 'denied', message: expect.stringMatching(/^expires_in_s: /) });
    }
    expect(await fixture.call('/vm/recording/link', {})).toMatchObject({ status: 'denied', message: expect.stringMatching(/^id: /) });
    expect(await fixture.call('/vm/recording/link', { id: 'f'.repeat(32) })).toEqual({ status: 'denied', message: 'id: unknown session' });
    // Another account's session is not confirmed.
    const other = await fixture.engine.accounts.create({ contact: 'replay-other@example.com', plans: ['recorded'] });
    const foreign = await fetch(`${fixture.engine.url}/v8/vm/recording/link`, { method: 'POST', headers: { authorization: `Bearer ${other.apiKey.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ id: vmId }) });
    expect(await foreign.json()).toEqual({ status: 'denied', message: 'id: unknown session' });
    // No key: 401. v7 has no replay links.
    const keyless = await fetch(`${fixture.engine.url}/v8/vm/recording/link`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: vmId }) });
    expect(keyless.status).toBe(401);
    const v7 = await fetch(`${fixture.engine.url}/v7/vm/recording/link`, { method: 'POST', headers: { authorization: `Bearer ${fixture.account.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ id: vmId }) });
    expect(v7.status).toBe(404);
    expect(await v7.json()).toMatchObject({ status: 'denied', message: 'no endpoint POST /v7/vm/recording/link' });
    // A session that was not recorded has nothing to link to.
    const plain = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/plain` });
    expect(await fixture.call('/vm/recording/link', { id: plain.vmId })).toMatchObject({ status: 'denied', message: expect.stringMatching(/not recorded/) });
    await fixture.call('/vm/remove', { id: plain.vmId });
  }, 60_000);

  it('ends when the recording is removed', async () => {
    const { url } = await fixture.call('/vm/recording/link', { id: vmId });
    expect((await open(`${url}/recording`)).status).toBe(200);
    expect(await fixture.call('/vm/recording/remove', { id: vmId })).toEqual({ status: 'ok' });
    expect(await json(await open(`${url}/recording`))).toEqual({ http: 410, body: { status: 'denied', reason: 'removed', message: 'this recording was removed' } });
    expect((await open(`${url}/media`)).status).toBe(404);
    expect(await fixture.call('/vm/recording/link', { id: vmId })).toMatchObject({ status: 'denied', message: expect.stringMatching(/removed/) });
  });

  it('limits the look-ups of tokens that open nothing, per address, as share links are', async () => {
    let answer: Response | undefined;
    for (let i = 0; i < 130 && answer?.status !== 429; i++) answer = await open(`${fixture.engine.url}/replay/guess-${i}/recording`);
    expect(answer!.status).toBe(429);
    expect(await answer!.json()).toMatchObject({ status: 'insecure', reason: 'rate_limited' });
    expect(answer!.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  });
});
