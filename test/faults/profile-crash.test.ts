// A saved profile survives the engine's kill -9 during a save (issue 34, decisions.md 86): the
// engine (a child process, SQLite) is killed the moment a session on the profile is removed, while
// its browser closes and its state is packed; after a restart the profile is free, holds the
// earlier version, and a new session restores it. The same for a session that ends while
// hibernated (issue 46, decisions.md 179), whose profile is written from its hibernated state:
// killed as that write begins, the restart ends the session, frees the profile with a whole
// version (the earlier one, or the new one if the write had finished), never a broken one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, makeWorkspace, removeWorkspace, startEngine, testConfig, PLANS, type EngineProcess, type Workspace } from '../api/harness.js';
import { serveProfileSite } from '../helpers/profile-site.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';

let workspace: Workspace;
let engine: EngineProcess;
let site: Awaited<ReturnType<typeof serveProfileSite>>;
let key: string;
const api = v8Caller(() => engine.url, () => key);

beforeAll(async () => {
  site = await serveProfileSite('survives');
  workspace = await makeWorkspace(testConfig());
  engine = await startEngine({ workspace });
  key = (await createAccount(workspace, [PLANS.unlimited])).key;
}, 60_000);

afterAll(async () => {
  await engine?.stop();
  site?.server.close();
  await removeWorkspace(workspace);
});

/** Starts a session on `page` with the profile and waits for the page's report; answers its id. */
async function open(page: string, profileId: string, call = api): Promise<string> {
  const before = site.reports.length;
  const created = await call('/vm/create', { browser: 'chromium', url: `${site.origin}/${page}`, profile: { id: profileId } });
  expect(created.status, JSON.stringify(created)).toBe('ok');
  expect(await waitFor(() => site.reports.slice(before).some((r) => r.page === page), Boolean, 60_000)).toBe(true);
  expect(await waitFor(async () => (await call(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
  return created.vmId;
}

describe('kill -9 of the engine during a save', () => {
  it('keeps the earlier version, which the next session restores', async () => {
    const profileId = (await api('/profile/create', { name: 'Crash', browser: 'chromium' })).profile.id;
    const first = await open('set', profileId);
    await api('/vm/remove', { id: first });
    expect(await waitFor(async () => (await api(`/vm/data?id=${first}`)).data?.[0]?.status, (s) => s === 'deleted', 60_000)).toBe('deleted');
    const earlier = (await api(`/profile/data?id=${profileId}`)).profiles[0];
    expect(earlier.bytes).toBeGreaterThan(0);

    // A session that stores 4 MB more; the engine dies as its save begins.
    const second = await open('big', profileId);
    expect((await api('/vm/remove', { id: second })).status).toBe('ok');
    await engine.kill9();
    engine = await startEngine({ workspace });

    const after = (await api(`/profile/data?id=${profileId}`)).profiles[0];
    expect(after).toMatchObject({ id: profileId, bytes: earlier.bytes });
    const before = site.reports.length;
    const third = await open('read', profileId);
    expect(site.reports.slice(before).find((r) => r.page === 'read')).toMatchObject({ cookie: expect.stringContaining('kept=survives'), local: 'survives', indexed: 'survives' });
    await api('/vm/remove', { id: third });
  }, 240_000);
});

describe('kill -9 of the engine while a hibernated session writes its profile', () => {
  it('ends the session at the restart and frees the profile with a whole version, which the next session restores', async () => {
    const sleepy = await makeWorkspace(testConfig({ standby: { afterSeconds: 1, hibernateAfterMinutes: 0.05 } }));
    let node = await startEngine({ workspace: sleepy });
    const sleepyKey = (await createAccount(sleepy, [PLANS.unlimited])).key;
    const call = v8Caller(() => node.url, () => sleepyKey);
    try {
      const profileId = (await call('/profile/create', { name: 'Asleep', browser: 'chromium' })).profile.id;
      const first = await open('set', profileId, call);
      await call('/vm/remove', { id: first });
      expect(await waitFor(async () => (await call(`/vm/data?id=${first}`)).data?.[0]?.status, (s) => s === 'deleted', 60_000)).toBe('deleted');
      const earlier = (await call(`/profile/data?id=${profileId}`)).profiles[0];
      expect(earlier.bytes).toBeGreaterThan(0);

      // A session that stores 4 MB more is hibernated; removed asleep, the engine dies as the
      // write from its hibernated state begins.
      const second = await open('big', profileId, call);
      expect(await waitFor(async () => (await call(`/vm/data?id=${second}`)).data?.[0], (e) => e?.hibernated === true, 60_000)).toMatchObject({ status: 'running', hibernated: true });
      expect((await call('/vm/remove', { id: second })).status).toBe('ok');
      await node.kill9();
      node = await startEngine({ workspace: sleepy });

      // Ended, not left asleep; the profile free, holding a whole version.
      expect(await waitFor(async () => (await call(`/vm/data?id=${second}`)).data?.[0]?.status, (s) => s === 'deleted', 60_000)).toBe('deleted');
      const after = (await call(`/profile/data?id=${profileId}`)).profiles[0];
      const whole = after.bytes === earlier.bytes || after.bytes > earlier.bytes + 4 * 1024 * 1024 * 0.9;
      expect(whole, `profile bytes ${after.bytes} against ${earlier.bytes} before`).toBe(true);
      const before = site.reports.length;
      const third = await open('read', profileId, call);
      expect(site.reports.slice(before).find((r) => r.page === 'read')).toMatchObject({ cookie: expect.stringContaining('kept=survives'), local: 'survives', indexed: 'survives' });
      await call('/vm/remove', { id: third });
    } finally {
      await node.stop();
      await removeWorkspace(sleepy);
    }
  }, 300_000);
});
