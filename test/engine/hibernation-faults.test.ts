// Hibernation's faults (issue 46, decisions.md 165-168) with a real engine and real, confined
// Chromium: a saved state altered in the database ends the session at its resume with the reason,
// which vm/data and the share link say, its viewer told it no longer runs; five viewers arriving at
// once on a hibernated session resume it once and each sees it; a session with an uploaded file
// and a download is hibernated, and after the resume lists and serves the same bytes; one whose
// state is past the cap stays in standby (its state could not be kept); a hibernated session past its
// plan's idle timeout ends normally, with nothing to stop; and after a kill -9 of the engine (a
// child process on SQLite) and a restart, a hibernated session is still hibernated and resumes.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/engine/config.js';
import { createAccount, makeWorkspace, removeWorkspace, startEngine as startEngineProcess, testConfig, PLANS, type EngineProcess, type Workspace } from '../api/harness.js';
import { shareLinkOf } from '../helpers/automation.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { DOWNLOAD_BYTES, hibernationSite, PAGE_COLOURS, type PageReport } from '../helpers/hibernation-site.js';
import { connectRfb } from '../helpers/rfb-client.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';

const SLEEPY = { standby: { afterSeconds: 1, hibernateAfterMinutes: 0.05 } };
const reports: PageReport[] = [];
type Call = (path: string, body?: unknown) => Promise<Record<string, any>>;

/** Creates a session on the login page and waits until it is hibernated; answers its id and share link. */
async function hibernatedSession(call: Call, origin: string): Promise<{ id: string; link: string }> {
  const created = await call('/vm/create', { browser: 'chromium', url: `${origin}/login` });
  expect(created.status, JSON.stringify(created)).toBe('ok');
  expect((await call(`/vm/data?id=${created.vmId}&wait=30000`)).data[0].status).toBe('running');
  const asleep = await waitFor(async () => (await call(`/vm/data?id=${created.vmId}`)).data[0], (e) => e.hibernated === true || e.status !== 'running', 60_000);
  expect(asleep).toMatchObject({ status: 'running', hibernated: true });
  return { id: created.vmId, link: shareLinkOf(created.shareUrl) };
}

describe('on one engine', () => {
  let fixture: EngineFixture;
  let briefKey: string;
  const brief = v8Caller(() => fixture.engine.url, () => briefKey);
  const rfbUrl = (link: string) => `${fixture.engine.url.replace(/^http/, 'ws')}/share/${link}/rfb`;

  beforeAll(async () => {
    const pro = DEFAULT_PLANS.find((plan) => plan.id === 'pro')!;
    // A plan whose sessions end after 20 s without a viewer, and whose hibernated sessions do not fill its running limit.
    fixture = await startEngine({ name: 'hibernation-faults', site: hibernationSite(reports), config: { ...SLEEPY, plans: [...DEFAULT_PLANS, { ...pro, id: 'brief', name: 'Brief', idle_timeout_minutes: 1 / 3, hibernated_count_running: false }] } });
    briefKey = (await fixture.engine.accounts.create({ contact: 'brief@example.com', plans: ['brief'] })).apiKey.key;
  }, 180_000);

  afterAll(async () => {
    await fixture?.close();
  });

  it('ends a session whose saved state was altered, at its resume, saying why on vm/data and the share link', async () => {
    const { id, link } = await hibernatedSession(fixture.call, fixture.site.origin);
    // One byte of its sealed state changed, as a damaged disk or a tampering hand would.
    const [chunk] = await fixture.engine.store.sql.all<{ state_id: string; seq: number; data: Buffer }>('SELECT state_id, seq, data FROM hibernation_chunks WHERE session_id = ? ORDER BY seq', [id]);
    const data = Buffer.from(chunk!.data);
    data[data.length - 1]! ^= 0xff;
    expect(await fixture.engine.store.sql.run('UPDATE hibernation_chunks SET data = ? WHERE state_id = ? AND seq = ?', [data, chunk!.state_id, chunk!.seq])).toBe(1);
    const viewer = await connectRfb(rfbUrl(link), 30_000).catch((error: Error) => error);
    if (!(viewer instanceof Error)) {
      await expect(viewer.waitForPixel(640, 600, PAGE_COLOURS.home, 10_000)).rejects.toThrow();
      viewer.close();
    }
    const ended = await waitFor(async () => (await fixture.call(`/vm/data?id=${id}`)).data[0], (e) => e.status !== 'running', 20_000);
    expect(ended.status).toBe('suspended');
    const reason = (await fixture.engine.store.session(id))!.end_reason!;
    expect(reason).toMatch(/^the session could not be resumed from hibernation: its saved state was refused \(.*altered/);
    const state = (await (await fetch(`${fixture.engine.url}/share/${link}`)).json()) as Record<string, unknown>;
    expect(state).toMatchObject({ state: 'ended', reason });
    // Nothing of its state is left in the store.
    expect(await fixture.engine.store.sql.all('SELECT state_id FROM hibernation_chunks WHERE session_id = ?', [id])).toEqual([]);
  }, 180_000);

  it('resumes a session once when five viewers arrive at once, and each sees it', async () => {
    const { id, link } = await hibernatedSession(fixture.call, fixture.site.origin);
    const wakes = (await fixture.engine.store.session(id))!.wakes ?? 0;
    const viewers = await Promise.all(Array.from({ length: 5 }, () => connectRfb(rfbUrl(link), 60_000)));
    try {
      await Promise.all(viewers.map((viewer) => viewer.waitForPixel(640, 600, PAGE_COLOURS.home, 60_000)));
      expect((await fixture.engine.store.session(id))!.wakes).toBe(wakes + 1);
      // One browser for it: the engine runs this one session, once.
      expect(fixture.engine.runtime.list()).toHaveLength(1);
    } finally {
      for (const viewer of viewers) viewer.close();
    }
    expect((await fixture.call('/vm/remove', { id })).status).toBe('ok');
  }, 180_000);

  it('hibernates a session with an uploaded file and a download, and after the resume lists and serves the same bytes', async () => {
    const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
    // Its page downloads a file as it loads: the browser saves it into the session's downloads folder.
    const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/get` });
    expect(created.status, JSON.stringify(created)).toBe('ok');
    expect((await fixture.call(`/vm/data?id=${created.vmId}&wait=30000`)).data[0].status).toBe('running');
    const link = shareLinkOf(created.shareUrl);
    const given = randomBytes(150 * 1024);
    expect((await fetch(`${fixture.engine.url}/share/${link}/files/upload?name=${encodeURIComponent('notes 1.bin')}`, { method: 'POST', body: new Uint8Array(given) as unknown as BodyInit })).status).toBe(200);
    const listed = (list: Record<string, any>) => ((list.files ?? []) as Array<{ kind: string; name: string; size: number; state?: string }>).map((f) => `${f.kind} ${f.name} ${f.size} ${f.state ?? ''}`).sort();
    const before = await waitFor(async () => listed(await fixture.call(`/vm/files?id=${created.vmId}`)), (files) => files.some((f) => f.startsWith('download report.bin') && f.endsWith('complete')), 30_000);
    expect(before, before.join(', ')).toEqual([`download report.bin ${DOWNLOAD_BYTES.length} complete`, `upload notes 1.bin ${given.length} complete`]);
    const runtimeId = (await fixture.engine.store.session(created.vmId))!.runtime_id!;
    expect(fixture.engine.runtime.get(runtimeId)).toBeDefined();
    const asleep = await waitFor(async () => (await fixture.call(`/vm/data?id=${created.vmId}`)).data[0], (e) => e.hibernated === true || e.status !== 'running', 60_000);
    expect(asleep).toMatchObject({ status: 'running', hibernated: true });
    // Its sandbox, which held its folders, is gone.
    expect(fixture.engine.runtime.get(runtimeId)).toBeUndefined();
    // The files call resumes it, and finds what it had.
    expect(listed(await fixture.call(`/vm/files?id=${created.vmId}`))).toEqual(before);
    expect((await fixture.call(`/vm/data?id=${created.vmId}`)).data[0].hibernated).toBeUndefined();
    for (const [name, bytes] of [['report.bin', DOWNLOAD_BYTES], ['notes 1.bin', given]] as const) {
      const response = await fetch(`${fixture.engine.url}/share/${link}/files/download?name=${encodeURIComponent(name)}`);
      expect(response.status).toBe(200);
      expect(sha(new Uint8Array(await response.arrayBuffer()))).toBe(sha(bytes));
    }
    expect((await fixture.call('/vm/remove', { id: created.vmId })).status).toBe('ok');
  }, 180_000);

  it('counts hibernated sessions as running unless the plan says not', async () => {
    const { id } = await hibernatedSession(fixture.call, fixture.site.origin);
    expect((await fixture.call('/user/quota')).running_sessions_used).toBe(1);
    expect((await fixture.call('/vm/remove', { id })).status).toBe('ok');
  }, 180_000);

  it('ends a hibernated session past its idle timeout, normally (its plan not counting it as running meanwhile)', async () => {
    const { id } = await hibernatedSession(brief, fixture.site.origin);
    expect((await brief('/user/quota')).running_sessions_used).toBe(0);
    const ended = await waitFor(async () => (await brief(`/vm/data?id=${id}`)).data[0], (e) => e.status !== 'running', 60_000);
    expect(ended.status).toBe('suspended');
    expect(ended.hibernated).toBeUndefined();
    expect((await fixture.engine.store.session(id))!.end_reason).toBe('no viewer for the idle timeout');
    expect(await fixture.engine.store.sql.all('SELECT state_id FROM hibernation_chunks WHERE session_id = ?', [id])).toEqual([]);
  }, 180_000);
});

describe('a state past the cap', () => {
  let fixture: EngineFixture;

  beforeAll(async () => {
    fixture = await startEngine({ name: 'hibernation-cap', site: hibernationSite(reports), config: { ...SLEEPY, profiles: { maxProfileMb: 1 } } });
  }, 180_000);

  afterAll(async () => {
    await fixture?.close();
  });

  it('keeps the session in standby, while a small one is hibernated', async () => {
    const since = reports.length;
    const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/big` });
    expect(created.status, JSON.stringify(created)).toBe('ok');
    expect(await waitFor(() => reports.slice(since).some((r) => r.page === 'big'), Boolean, 60_000)).toBe(true);
    // Created after the big one stored its 20 MB: once it is hibernated, the big one had as long.
    const small = await hibernatedSession(fixture.call, fixture.site.origin);
    const big = (await fixture.call(`/vm/data?id=${created.vmId}`)).data[0];
    expect(big).toMatchObject({ status: 'running', standby: true });
    expect(big.hibernated).toBeUndefined();
    for (const id of [created.vmId, small.id]) expect((await fixture.call('/vm/remove', { id })).status).toBe('ok');
  }, 180_000);
});

describe('kill -9 of the engine while a session is hibernated', () => {
  let workspace: Workspace;
  let engine: EngineProcess;
  let site: Server;
  let origin: string;
  let key: string;
  const api = v8Caller(() => engine.url, () => key);

  beforeAll(async () => {
    site = createServer(hibernationSite(reports));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    workspace = await makeWorkspace(testConfig(SLEEPY));
    engine = await startEngineProcess({ workspace });
    key = (await createAccount(workspace, [PLANS.unlimited])).key;
  }, 60_000);

  afterAll(async () => {
    await engine?.stop();
    site?.close();
    await removeWorkspace(workspace);
  });

  it('keeps it hibernated after the restart, and a viewer resumes it, logged in', async () => {
    const { id, link } = await hibernatedSession(api, origin);
    await engine.kill9();
    engine = await startEngineProcess({ workspace });
    expect((await api(`/vm/data?id=${id}`)).data[0]).toMatchObject({ status: 'running', standby: true, hibernated: true });
    const since = reports.length;
    const viewer = await connectRfb(`${engine.url.replace(/^http/, 'ws')}/share/${link}/rfb`, 60_000);
    try {
      await viewer.waitForPixel(640, 600, PAGE_COLOURS.home, 60_000);
      const report = await waitFor(() => reports.slice(since).find((r) => r.page === 'home'), Boolean, 20_000);
      expect(report?.cookie).toContain('login=alice');
      expect((await api(`/vm/data?id=${id}`)).data[0].hibernated).toBeUndefined();
    } finally {
      viewer.close();
    }
    expect((await api('/vm/remove', { id })).status).toBe('ok');
  }, 240_000);
});
