// The proxy route's recording endpoints (issue 35, decisions.md 97) in front of a real engine in
// this process on the fake runtime: no browser is needed to test the route, so the recorder's part
// (its Matroska file and timeline in the engine's recordings directory) is played by a clip ffmpeg
// makes here. A user reads their session's recording and its MP4 by handle, with byte ranges once
// it is whole; another user holding the handle is refused; a session not recorded and a removed
// recording are refused saying which; the engine's 503 for a busy copy (made to happen by the
// service's fetch) passes on with its Retry-After; the API key never reaches the browser.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProxyRoute, createServiceClient, engineService, type ProxyRoute } from '../../src/server/index.js';
import { APP_ORIGIN, BASE_PATH, Exposure, PLANS, poll, SECRET, SHARE_BASE, startTestEngine, type TestEngine } from './fixtures.js';

let t: TestEngine;
let route: ProxyRoute;
let apiKey: string;
const exposure = new Exposure();

/** A request from the app's own pages, signed in as `user`. */
const call = (path: string, user = 'alice', init: RequestInit = {}) =>
  route(new Request(`${APP_ORIGIN}${BASE_PATH}${path}`, { ...init, headers: { origin: APP_ORIGIN, 'x-user': user, ...(init.headers as Record<string, string> | undefined) } }));
const json = async (response: Response) => (await exposure.record(response)).json;

/** Three seconds of a red picture (H.264) and a tone (Opus) in Matroska, as the recorder writes them. */
function clip(): Buffer {
  return execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=red:s=320x240:r=10', '-f', 'lavfi', '-i', 'sine=f=440:r=48000', '-t', '3', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'libopus', '-f', 'matroska', 'pipe:1'], { maxBuffer: 16 * 1024 * 1024 });
}

/** A session of alice's, started through the route; `recorded` sessions get the recorder's files. */
async function session(record: boolean): Promise<{ handle: string; vmId: string }> {
  const before = new Set((await t.engine.store.recordedSessions(accountId)).map((row) => row.id));
  const created = await json(await call('/sessions', 'alice', { method: 'POST', body: JSON.stringify({ browser: 'chromium', url: t.pageUrl, record }), headers: { 'content-type': 'application/json' } }));
  expect(created.status).toBe('ok');
  const handle = created.handle as string;
  await poll(async () => (await json(await call(`/sessions/${encodeURIComponent(handle)}`))).session?.status, (s) => s === 'running', 20_000);
  if (!record) return { handle, vmId: '' };
  // The handle is sealed; the test finds the vmId the way only the engine's operator could.
  const vmId = (await t.engine.store.recordedSessions(accountId)).find((row) => !before.has(row.id))!.id;
  {
    const dir = t.engine.recordings.dirOf(vmId);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'media.mkv'), clip());
    const started = Date.now();
    const entry = (ms: number, fields: object) => JSON.stringify({ time: new Date(started + ms).toISOString(), ...fields });
    writeFileSync(join(dir, 'timeline.jsonl'), `${entry(0, { type: 'navigation', tab: 't1', url: `${t.pageUrl}first`, title: 'First' })}\n${entry(1500, { type: 'navigation', tab: 't1', url: `${t.pageUrl}second`, title: 'Second' })}\n`);
  }
  return { handle, vmId };
}

let accountId: string;

beforeAll(async () => {
  t = await startTestEngine({ plans: PLANS.map((plan) => ({ ...plan, recording: true })) });
  const created = await t.key();
  apiKey = created.key;
  accountId = created.accountId;
  const key = apiKey;
  route = createProxyRoute({ service: engineService(t.engine, { apiKey: key }), authorize: (request) => ({ id: request.headers.get('x-user') ?? '' }), secret: SECRET });
}, 60_000);

afterAll(async () => {
  await t?.close();
  // Nothing the browser side saw carries the API key.
  for (const seen of exposure.seen) expect(seen.text).not.toContain(apiKey);
});

describe("the proxy route serves the user's own session's recording", () => {
  it('describes a recording still being made and streams its MP4 up to now, without ranges', async () => {
    const { handle } = await session(true);
    const described = await json(await call(`/sessions/${encodeURIComponent(handle)}/recording`));
    expect(described.status).toBe('ok');
    expect(described.recording.state).toBe('recording');
    expect(described.recording.timeline.map((entry: { title: string }) => entry.title)).toEqual(['First', 'Second']);
    const media = await call(`/sessions/${encodeURIComponent(handle)}/recording/media`, 'alice', { headers: { range: 'bytes=0-99' } });
    expect(media.status).toBe(200);
    expect(media.headers.get('content-type')).toBe('video/mp4');
    expect(media.headers.get('accept-ranges')).toBeNull();
    const bytes = Buffer.from(await media.arrayBuffer());
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
  });

  it('hands out a whole recording with byte ranges once its session ended, then removes it on request', async () => {
    const { handle, vmId } = await session(true);
    const path = `/sessions/${encodeURIComponent(handle)}/recording`;
    // Removal while the session runs is refused, saying what to do first.
    const early = await call(path, 'alice', { method: 'DELETE', headers: { 'content-type': 'application/json' } });
    expect(early.status).toBe(409);
    expect((await json(early)).message).toMatch(/still running/);
    expect((await call(`/sessions/${encodeURIComponent(handle)}`, 'alice', { method: 'DELETE', headers: { 'content-type': 'application/json' } })).status).toBe(200);
    // The recorder's mark that the file is whole (the fake runtime has no recorder).
    await poll(async () => (await t.engine.store.session(vmId))?.status, (status) => status === 'deleted' || status === 'suspended', 20_000);
    writeFileSync(join(t.engine.recordings.dirOf(vmId), 'media.mkv.closed'), '');
    const described = await json(await call(path));
    expect(described.recording.state).toBe('ended');

    const whole = await call(`${path}/media`);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const size = Number(whole.headers.get('content-length'));
    const all = Buffer.from(await whole.arrayBuffer());
    expect(all.length).toBe(size);
    const part = await call(`${path}/media`, 'alice', { headers: { range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${size}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(all.subarray(100, 200))).toBe(true);
    expect((await call(`${path}/media`, 'alice', { headers: { range: `bytes=${size + 10}-` } })).status).toBe(416);

    expect(await json(await call(path, 'alice', { method: 'DELETE', headers: { 'content-type': 'application/json' } }))).toEqual({ status: 'ok' });
    const gone = await call(path);
    expect(gone.status).toBe(404);
    expect(await json(gone)).toMatchObject({ status: 'denied', reason: 'removed' });
    const goneMedia = await call(`${path}/media`);
    expect(goneMedia.status).toBe(404);
    expect(await json(goneMedia)).toMatchObject({ reason: 'removed' });
  });

  it("refuses another user's request, a session not recorded, and a form from another site, saying why", async () => {
    const recorded = await session(true);
    const path = `/sessions/${encodeURIComponent(recorded.handle)}/recording`;
    for (const asked of [call(path, 'mallory'), call(`${path}/media`, 'mallory'), call(path, 'mallory', { method: 'DELETE', headers: { 'content-type': 'application/json' } })]) {
      const answer = await asked;
      expect(answer.status).toBe(404);
      expect((await json(answer)).message).toMatch(/^unknown session/);
    }
    expect((await call(path, 'alice', { method: 'DELETE', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
    expect((await call(`${path}/media`, 'alice', { method: 'POST', headers: { 'content-type': 'application/json' } })).status).toBe(405);
    const plain = await session(false);
    const notRecorded = await call(`/sessions/${encodeURIComponent(plain.handle)}/recording`);
    expect(notRecorded.status).toBe(404);
    expect(await json(notRecorded)).toEqual({ status: 'denied', reason: 'not_recorded', message: 'this session was not recorded' });
    await call(`/sessions/${encodeURIComponent(plain.handle)}`, 'alice', { method: 'DELETE', headers: { 'content-type': 'application/json' } });
  });

  it('makes a replay link by handle that opens the recording on the engine without a key (decisions.md 110)', async () => {
    const { handle } = await session(true);
    const path = `/sessions/${encodeURIComponent(handle)}/recording/link`;
    const post = (user: string, body: string, type = 'application/json') => call(path, user, { method: 'POST', body, headers: { 'content-type': type } });
    const minted = await json(await post('alice', '{}'));
    expect(minted).toMatchObject({ status: 'ok', url: expect.stringMatching(/\/replay\/[A-Za-z0-9_.-]+$/), expires: expect.any(String) });
    expect(Math.abs(Date.parse(minted.expires) - (Date.now() + 7 * 86_400_000))).toBeLessThan(60_000);
    const shorter = await json(await post('alice', JSON.stringify({ expires_in_s: 3600 })));
    expect(Math.abs(Date.parse(shorter.expires) - (Date.now() + 3_600_000))).toBeLessThan(60_000);
    // The link's API, asked as a stranger (no key, no sign-in), describes the same recording.
    // (The link is on the service's viewer site, `shareBase`; the test reaches the same engine directly.)
    expect(minted.url.startsWith(`${SHARE_BASE}/replay/`)).toBe(true);
    expect(await (await fetch(`${t.engine.url}${new URL(minted.url).pathname}/recording`)).json()).toMatchObject({ status: 'ok', recording: { timeline: [{ title: 'First' }, { title: 'Second' }] } });
    // Refusals: another user, a bad lifetime, a body that is no JSON object, a form from another site.
    expect(await json(await post('mallory', '{}'))).toMatchObject({ status: 'denied', message: expect.stringMatching(/^unknown session/) });
    const tooShort = await post('alice', JSON.stringify({ expires_in_s: 5 }));
    expect(tooShort.status).toBe(400);
    expect((await json(tooShort)).message).toMatch(/^expires_in_s: /);
    expect((await post('alice', '[1]')).status).toBe(400);
    expect((await post('alice', '{}', 'text/plain')).status).toBe(415);
    expect((await call(path)).status).toBe(405);
    await call(`/sessions/${encodeURIComponent(handle)}`, 'alice', { method: 'DELETE', headers: { 'content-type': 'application/json' } });
  });

  it("passes the service's 503 for a busy copy on with its Retry-After", async () => {
    const { handle } = await session(true);
    // The fault: the engine's own answer when four copies run at once (recordings/media.ts), made
    // to happen here by the service's fetch, since holding four real copies open depends on buffers.
    const busyEngine = createServiceClient({
      baseUrl: 'http://engine.in-process',
      apiKey,
      retries: 0,
      fetch: async (url, init) =>
        new URL(url).pathname === '/v8/vm/recording/media'
          ? new Response(JSON.stringify({ status: 'error', message: 'recordings are being prepared for other requests; try again in a few seconds' }), { status: 503, headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': '5' } })
          : t.engine.fetch(new Request(url, init)),
    });
    const busyRoute = createProxyRoute({ service: busyEngine, authorize: (request) => ({ id: request.headers.get('x-user') ?? '' }), secret: SECRET });
    const busy = await busyRoute(new Request(`${APP_ORIGIN}${BASE_PATH}/sessions/${encodeURIComponent(handle)}/recording/media`, { headers: { origin: APP_ORIGIN, 'x-user': 'alice' } }));
    expect(busy.status).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('5');
    expect(await json(busy)).toEqual({ status: 'error', message: 'the recording is being prepared for other requests; try again in 5 s' });
  });
});
