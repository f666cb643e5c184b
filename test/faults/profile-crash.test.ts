// A saved profile survives the engine's kill -9 during a save (issue 34, decisions.md 86): the
// engine (a child process, SQLite) is killed the moment a session on the profile is removed, while
// its browser closes and its state is packed; after a restart the profile is free, holds the
// earlier version, and a new session restores it.
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
async function open(page: string, profileId: string): Promise<string> {
  const before = site.reports.length;
  const created = await api('/vm/create', { browser: 'chromium', url: `${site.origin}/${page}`, profile: { id: profileId } });
  expect(created.status, JSON.stringify(created)).toBe('ok');
  expect(await waitFor(() => site.reports.slice(before).some((r) => r.page === page), Boolean, 60_000)).toBe(true);
  expect(await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
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
