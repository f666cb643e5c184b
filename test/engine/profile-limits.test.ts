// Saved profiles' rules (issue 34) against a real engine with its SQLite database and confined
// Chromium: bad input, the count cap, the size cap (the earlier version stays), a crafted archive
// in the database (refused before any session starts), two creates at once on one profile
// (exactly one runs), a file at a path over 1,024 characters (left out, the rest saved), a remove
// right after its session's (it waits for the last save), the
// meters, and expiry after the operator's days unused. Each refusal is a clear message in v8's
// envelope and changes nothing.
import { mkdir, readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/engine/config.js';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import { ProfileStore } from '../../src/engine/profiles/profile-store.js';
import { LAST_SAVE_RETRY_S, ProfileService } from '../../src/engine/profiles/profiles.js';
import { parseProfileKey } from '../../src/engine/profiles/profile-key.js';
import { sealState } from '../../src/engine/profiles/sealed-state.js';
import { v8Caller } from '../helpers/site.js';
import { waitFor } from '../helpers/session.js';
import { serveProfileSite } from '../helpers/profile-site.js';

const DAY_MS = 86_400_000;
let engine: Engine;
let dir: string;
let site: Awaited<ReturnType<typeof serveProfileSite>>;
let key: string;
let clock = Date.now();
const api = v8Caller(() => engine.url, () => key);
const rows = () => new ProfileStore(engine.store);
const PLANS = DEFAULT_PLANS.map((plan) => (plan.id === 'pro' ? { ...plan, profile_limit: 3, profile_mb_limit: 50 } : plan));
const PROFILE_SETTINGS = { enabled: true, key: null, maxProfileMb: 3, expireDays: 30 };

beforeAll(async () => {
  site = await serveProfileSite('remembered');
  dir = await mkdtemp(join(tmpdir(), 'rbk-profile-limits-'));
  engine = await createEngine({ dataDir: dir, port: 0, now: () => clock++, config: { plans: PLANS, rateLimit: { requests: 100_000, perSeconds: 60 }, standby: { afterSeconds: false }, egress: { allow: ['127.0.0.1/32'] }, profiles: PROFILE_SETTINGS } });
  key = (await engine.accounts.create({ contact: 'limits@example.com', plans: ['pro'] })).apiKey.key;
}, 60_000);

afterAll(async () => {
  await engine?.close();
  site?.server.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function ended(vmId: string): Promise<void> {
  expect((await api('/vm/remove', { id: vmId })).status).toBe('ok');
  expect(await waitFor(async () => (await api(`/vm/data?id=${vmId}`)).data?.[0]?.status, (s) => s === 'deleted', 60_000)).toBe('deleted');
}

async function visit(page: string, profileId: string): Promise<void> {
  const before = site.reports.length;
  const created = await api('/vm/create', { browser: 'chromium', url: `${site.origin}/${page}`, profile: { id: profileId } });
  expect(created.status, JSON.stringify(created)).toBe('ok');
  expect(await waitFor(() => site.reports.slice(before).some((r) => r.page === page), Boolean, 60_000)).toBe(true);
  // Removing a session still `starting` cancels its start, which saves nothing: it must run first.
  expect(await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
  await ended(created.vmId);
}

describe('saved profiles', () => {
  let profileId: string;

  it('refuse bad input naming the field, and keep the account as it was', async () => {
    expect(await api('/profile/create', { name: '', browser: 'chromium' })).toEqual({ status: 'denied', message: 'name: must be 1 to 100 characters, not only spaces, without control characters' });
    expect(await api('/profile/create', { name: 'x' })).toEqual({ status: 'denied', message: 'browser: required; a browser id listed by GET /v8/image' });
    expect(await api('/profile/create', { name: 'x', browser: 'netscape' })).toEqual({ status: 'denied', message: 'browser: unknown browser "netscape"; GET /v8/image lists the browsers' });
    expect(await api('/profile/rename', { id: 'f'.repeat(32), name: 'y' })).toEqual({ status: 'denied', message: 'id: unknown profile' });
    expect(await api('/vm/create', { browser: 'chromium', profile: 'mine' })).toEqual({ status: 'denied', message: 'profile: must be an object {id, save, tabs}' });
    expect(await api('/vm/create', { browser: 'chromium', profile: { id: 'f'.repeat(32), save: 'yes' } })).toEqual({ status: 'denied', message: 'profile.save: must be true or false' });
    expect(await api('/vm/create', { browser: 'chromium', profile: { id: 'f'.repeat(32) } })).toEqual({ status: 'denied', message: 'profile.id: unknown profile' });
    expect((await api('/profile/data')).profiles).toEqual([]);
    expect((await api('/vm/data')).data).toEqual([]);
  });

  it('are capped in number by the plan, and counted in user/quota', async () => {
    profileId = (await api('/profile/create', { name: 'Main', browser: 'chromium' })).profile.id;
    const firefox = (await api('/profile/create', { name: 'Fox', browser: 'firefox-esr' })).profile.id;
    expect((await api('/profile/create', { name: 'Third', browser: 'chromium' })).status).toBe('ok');
    expect(await api('/profile/create', { name: 'Fourth', browser: 'chromium' })).toEqual({ status: 'upgrade', message: 'profile limit reached (3 of 3); remove a profile or upgrade your plan' });
    expect((await api('/profile/data')).profiles.map((p: { name: string }) => p.name)).toEqual(['Main', 'Fox', 'Third']);
    expect(await api('/vm/create', { browser: 'chromium', profile: { id: firefox } })).toEqual({ status: 'denied', message: 'profile.id: the profile "Fox" is for Firefox-family browsers; Chromium cannot use it' });
    expect(await api('/profile/rename', { id: firefox, name: 'Fox 2' })).toMatchObject({ status: 'ok', profile: { id: firefox, name: 'Fox 2' } });
    expect(await api('/profile/remove', { id: firefox })).toEqual({ status: 'ok' });
    expect(await api('/user/quota')).toMatchObject({ profile_limit: 3, profiles_used: 2, profile_mb_limit: 50, profile_mb_used: 0 });
  });

  it('run one session at a time: of two creates at once, exactly one runs', async () => {
    const before = site.reports.length;
    const both = await Promise.all([1, 2].map(() => api('/vm/create', { browser: 'chromium', url: `${site.origin}/set`, profile: { id: profileId } })));
    expect(both.map((c) => c.status).sort()).toEqual(['denied', 'ok']);
    expect(both.find((c) => c.status === 'denied')!.message).toMatch(/^profile\.id: a session runs on this profile now/);
    expect(await api('/profile/remove', { id: profileId })).toEqual({ status: 'denied', message: 'id: a session runs on this profile; remove it after the session ends' });
    expect(await waitFor(() => site.reports.slice(before).some((r) => r.page === 'set'), Boolean, 60_000)).toBe(true);
    const runningId = both.find((c) => c.status === 'ok')!.vmId;
    expect(await waitFor(async () => (await api(`/vm/data?id=${runningId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
    await ended(runningId);
    const saved = (await api(`/profile/data?id=${profileId}`)).profiles[0];
    expect(saved.save_error).toBeUndefined();
    expect(saved.bytes).toBeGreaterThan(0);
  }, 120_000);

  it('keep the earlier version when a save would pass the size cap, and say why', async () => {
    const before = (await rows().get(profileId))!;
    await visit('big', profileId);
    const after = (await rows().get(profileId))!;
    expect(after.version_id).toBe(before.version_id);
    expect(after.bytes).toBe(before.bytes);
    expect((await api(`/profile/data?id=${profileId}`)).profiles[0].save_error).toBe('the profile is larger than 3 MB, the cap of one profile; the previous version stays');
  }, 120_000);

  it('leave out a file at a path over 1,024 characters and save the rest (issue 47, finding 7a)', async () => {
    const before = (await rows().get(profileId))!;
    const reports = site.reports.length;
    const created = await api('/vm/create', { browser: 'chromium', url: `${site.origin}/set?deep`, profile: { id: profileId } });
    expect(created.status, JSON.stringify(created)).toBe('ok');
    expect(await waitFor(() => site.reports.slice(reports).some((r) => r.page === 'set'), Boolean, 60_000)).toBe(true);
    expect(await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
    // A file deep in a folder the profile keeps, 1,232 characters from the profile's top (each folder name within Linux's 255).
    const session = engine.runtime.get((await engine.store.session(created.vmId))!.runtime_id!)!;
    const deep = `Default/IndexedDB/${Array.from({ length: 6 }, (_, i) => String(i).padEnd(200, 'd')).join('/')}`;
    const hostDeep = session.sandbox.hostPath(`${session.sandbox.dir}/profile/${deep}`);
    await mkdir(hostDeep, { recursive: true });
    await writeFile(join(hostDeep, 'deep.bin'), 'deep');
    await ended(created.vmId);
    const after = (await rows().get(profileId))!;
    expect(after.save_error).toBeNull();
    expect(after.version_id).not.toBe(before.version_id);
    // The saved version restores: a new session starts on it and reads what the page stored.
    const read = site.reports.length;
    const again = await api('/vm/create', { browser: 'chromium', url: `${site.origin}/read?deep`, profile: { id: profileId } });
    expect(again.status, JSON.stringify(again)).toBe('ok');
    expect(await waitFor(() => site.reports.slice(read).find((r) => r.page === 'read'), Boolean, 60_000)).toMatchObject({ local: 'remembered', indexed: 'remembered' });
    expect(await waitFor(async () => (await api(`/vm/data?id=${again.vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
    await ended(again.vmId);
  }, 180_000);

  it('refuse a crafted archive before any session starts, and change nothing', async () => {
    const row = (await rows().get(profileId))!;
    const profileKey = parseProfileKey(await readFile(join(dir, 'profile.key'), 'utf8'), 'profile.key');
    // A link to a host file, as if the database had been written by someone else with the key.
    const header = Buffer.alloc(512);
    header.write('Default/Cookies', 0);
    header.write('0000644\0', 100);
    header.write('00000000000\0', 124);
    header.write('2', 156);
    header.write('/etc/shadow', 157);
    header.write('ustar\u000000', 257, 'latin1');
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : header[i]!;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
    const versionId = 'c'.repeat(32);
    const sealed = await sealState(Buffer.concat([header, Buffer.alloc(1024)]), profileKey, profileId, versionId);
    await engine.store.sql.run('INSERT INTO profile_versions (id, profile_id, created_at, bytes, data) VALUES (?, ?, ?, ?, ?)', [versionId, profileId, clock, 1536, sealed]);
    await engine.store.sql.run('UPDATE profiles SET version_id = ? WHERE id = ?', [versionId, profileId]);
    const sessionsBefore = (await api('/vm/data')).data.length;
    const refused = await api('/vm/create', { browser: 'chromium', url: `${site.origin}/read`, profile: { id: profileId } });
    expect(refused).toEqual({ status: 'denied', message: 'profile.id: the saved state of "Main" was refused (the archive holds a symbolic link ("Default/Cookies"); only plain files and folders are restored); nothing was started; remove the profile or start without it' });
    expect((await api('/vm/data')).data.length).toBe(sessionsBefore);
    expect((await rows().get(profileId))!.session_id).toBe(row.session_id);
    await engine.store.sql.run('UPDATE profiles SET version_id = ? WHERE id = ?', [row.version_id, profileId]);
  });

  it('are written back when the session ends at the idle timeout', async () => {
    const before = (await rows().get(profileId))!;
    const reports = site.reports.length;
    const created = await api('/vm/create', { browser: 'chromium', url: `${site.origin}/set?idle`, profile: { id: profileId } });
    expect(created.status).toBe('ok');
    expect(await waitFor(() => site.reports.slice(reports).some((r) => r.page === 'set'), Boolean, 60_000)).toBe(true);
    expect(await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
    // Nobody watches: past the plan's idle timeout the sweep ends it (suspended), saving first.
    clock += 31 * 60_000;
    expect(await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'suspended', 30_000)).toBe('suspended');
    const after = await waitFor(async () => (await rows().get(profileId))!, (row) => row.session_id === null, 30_000);
    expect(after.version_id).not.toBe(before.version_id);
    expect(after.save_error).toBeNull();
  }, 120_000);

  it('keep the earlier version when the browser crashes, and are free again', async () => {
    const before = (await rows().get(profileId))!;
    const reports = site.reports.length;
    const created = await api('/vm/create', { browser: 'chromium', url: `${site.origin}/set?crash`, profile: { id: profileId } });
    expect(await waitFor(() => site.reports.slice(reports).some((r) => r.page === 'set'), Boolean, 60_000)).toBe(true);
    const runtimeId = await waitFor(async () => (await engine.store.session(created.vmId))?.runtime_id, Boolean, 30_000);
    const session = engine.runtime.get(runtimeId!)!;
    process.kill(-session.browser.process.pid, 'SIGKILL');
    expect(await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'suspended', 30_000)).toBe('suspended');
    const after = await waitFor(async () => (await rows().get(profileId))!, (row) => row.session_id === null, 30_000);
    expect(after.session_id).toBeNull();
    expect(after.version_id).toBe(before.version_id);
  }, 120_000);

  it('are removed right after their session is, once its last save is done (issue 43, finding 7)', async () => {
    const made = await api('/profile/create', { name: 'Gone at once', browser: 'chromium' });
    expect(made.status, JSON.stringify(made)).toBe('ok');
    const reports = site.reports.length;
    const created = await api('/vm/create', { browser: 'chromium', url: `${site.origin}/set?gone`, profile: { id: made.profile.id } });
    expect(created.status, JSON.stringify(created)).toBe('ok');
    expect(await waitFor(() => site.reports.slice(reports).some((r) => r.page === 'set'), Boolean, 60_000)).toBe(true);
    expect(await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
    expect((await api('/vm/remove', { id: created.vmId })).status).toBe('ok');
    // Past its wait, a remove says the last save is under way and when to try again (this one waits not at all).
    const impatient = new ProfileService({ store: engine.store, settings: PROFILE_SETTINGS, key: { key: parseProfileKey(await readFile(join(dir, 'profile.key'), 'utf8'), 'profile.key') }, plan: (id) => PLANS.find((plan) => plan.id === id), image: () => undefined, now: () => clock, lastSaveWaitMs: 0 });
    const account = (await engine.store.account((await rows().get(made.profile.id))!.account_id))!;
    expect(await impatient.remove(account, made.profile.id)).toEqual({ status: 'denied', message: `id: the last save of the session that ran on this profile is still under way; try again in ${LAST_SAVE_RETRY_S} s`, retryAfter: LAST_SAVE_RETRY_S });
    // At once, while the session writes the profile back: the session is gone for the caller, so is the profile.
    expect(await api('/profile/remove', { id: made.profile.id })).toEqual({ status: 'ok' });
    expect((await api(`/profile/data?id=${made.profile.id}`)).profiles).toEqual([]);
    expect(await engine.store.sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM profile_versions WHERE profile_id = ?', [made.profile.id])).toEqual({ n: 0 });
    expect(await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'deleted', 60_000)).toBe('deleted');
  }, 120_000);

  it('are forgotten after the days unused, with their state', async () => {
    expect((await api('/profile/data')).profiles).toHaveLength(2);
    clock += 31 * DAY_MS;
    expect((await api('/profile/data')).profiles).toEqual([]);
    expect(await engine.store.sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM profile_versions')).toEqual({ n: 0 });
    expect(await api('/user/quota')).toMatchObject({ profiles_used: 0, profile_mb_used: 0 });
  });
});

describe('saved profiles turned off', () => {
  it('by the operator: every profile call and a create with one is denied, saying so', async () => {
    const offDir = await mkdtemp(join(tmpdir(), 'rbk-profiles-off-'));
    const plans = DEFAULT_PLANS.map((plan) => (plan.id === 'free' ? { ...plan, profiles: false } : plan));
    const off = await createEngine({ dataDir: offDir, port: 0, config: { plans, warm: { memoryMb: 0, displays: 0 }, profiles: { enabled: false } } });
    const on = await createEngine({ dataDir: join(offDir, 'on'), port: 0, config: { plans, warm: { memoryMb: 0, displays: 0 } } });
    try {
      const offKey = (await off.accounts.create({ contact: 'off@example.com', plans: ['pro'] })).apiKey.key;
      const offApi = v8Caller(() => off.url, () => offKey);
      const refusal = { status: 'denied', message: 'saved profiles are not offered by this service' };
      expect(await offApi('/profile/create', { name: 'x', browser: 'chromium' })).toEqual(refusal);
      expect(await offApi('/profile/data')).toEqual(refusal);
      expect(await offApi('/vm/create', { browser: 'chromium', profile: { id: 'f'.repeat(32) } })).toEqual({ status: 'denied', message: 'profile: saved profiles are not offered by this service' });
      expect((await offApi('/vm/data')).data).toEqual([]);
      expect((await offApi('/user/quota')).profile_limit).toBeUndefined();
      // By a plan: the account's plan leaves them out.
      const freeKey = (await on.accounts.create({ contact: 'free@example.com', plans: ['free'] })).apiKey.key;
      const freeApi = v8Caller(() => on.url, () => freeKey);
      expect(await freeApi('/profile/create', { name: 'x', browser: 'chromium' })).toEqual({ status: 'upgrade', message: 'saved profiles are not included in your plan' });
    } finally {
      await off.close();
      await on.close();
      await rm(offDir, { recursive: true, force: true });
    }
  }, 60_000);
});
