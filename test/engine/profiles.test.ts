// Saved profiles (issue 34) against a real engine, real confined browsers and the engine's SQLite
// database: a page on loopback stores a cookie, a localStorage entry and an IndexedDB record; the
// session ends; a new session on the profile reads all three back, one without it reads none, and
// another account cannot name the profile. Chromium and Firefox ESR. A page that fills the profile
// with 80 MB of zeros leaves one the next session starts on (issue 47, finding 1).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import { v8Caller } from '../helpers/site.js';
import { controlOf, typeAddress, waitFor, x } from '../helpers/session.js';
import { serveProfileSite, type StateReport } from '../helpers/profile-site.js';

let engine: Engine;
let dir: string;
let site: Awaited<ReturnType<typeof serveProfileSite>>;
let key: string;
let otherKey: string;
const api = v8Caller(() => engine.url, () => key);
const other = v8Caller(() => engine.url, () => otherKey);

beforeAll(async () => {
  site = await serveProfileSite('remembered');
  dir = await mkdtemp(join(tmpdir(), 'rbk-profiles-'));
  engine = await createEngine({ dataDir: dir, port: 0, config: { rateLimit: { requests: 100_000, perSeconds: 60 }, standby: { afterSeconds: false }, egress: { allow: ['127.0.0.1/32'] } } });
  key = (await engine.accounts.create({ contact: 'profiles@example.com', plans: ['pro'] })).apiKey.key;
  otherKey = (await engine.accounts.create({ contact: 'other@example.com', plans: ['pro'] })).apiKey.key;
}, 60_000);

afterAll(async () => {
  await engine?.close();
  site?.server.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Starts a session on `page`, waits for that page's report, ends the session and waits for its end (its save included). */
async function visit(browser: string, page: 'set' | 'read' | 'zeros', profile?: Record<string, unknown>): Promise<StateReport> {
  const before = site.reports.length;
  const created = await api('/vm/create', { browser, url: `${site.origin}/${page}?${Date.now()}`, ...(profile ? { profile } : {}) });
  expect(created.status, JSON.stringify(created)).toBe('ok');
  const report = await waitFor(() => site.reports.slice(before).find((r) => r.page === page), Boolean, 60_000);
  expect(report, `the ${page} page reported`).toBeDefined();
  // Removing a session still `starting` cancels its start, which saves nothing: it must run first.
  expect(await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
  expect((await api('/vm/remove', { id: created.vmId })).status).toBe('ok');
  const ended = await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'deleted', 60_000);
  expect(ended).toBe('deleted');
  return report!;
}

describe.each([['chromium'], ['firefox-esr']])('a saved profile in %s', (browser) => {
  let profileId: string;

  it('is made empty, keeps what a page stored, and gives it back to the next session', async () => {
    const made = await api('/profile/create', { name: `Shop (${browser})`, browser });
    expect(made.status, JSON.stringify(made)).toBe('ok');
    expect(made.profile).toMatchObject({ name: `Shop (${browser})`, browser, bytes: 0 });
    profileId = made.profile.id;
    const stored = await visit(browser, 'set', { id: profileId });
    expect(stored.indexed).toBe('remembered');
    const listed = await api(`/profile/data?id=${profileId}`);
    expect(listed.profiles[0].save_error).toBeUndefined();
    expect(listed.profiles[0].bytes).toBeGreaterThan(0);
    const read = await visit(browser, 'read', { id: profileId });
    expect(read.cookie).toContain('kept=remembered');
    expect(read.local).toBe('remembered');
    expect(read.indexed).toBe('remembered');
  }, 240_000);

  it('is not there for a session without it', async () => {
    const read = await visit(browser, 'read');
    expect(read.cookie).not.toContain('kept=');
    expect(read.local).toBeNull();
    expect(read.indexed).toBeNull();
  }, 120_000);

  it('cannot be named by another account', async () => {
    const created = await other('/vm/create', { browser, url: `${site.origin}/read`, profile: { id: profileId } });
    expect(created).toEqual({ status: 'denied', message: 'profile.id: unknown profile' });
    expect(await other(`/profile/data?id=${profileId}`)).toEqual({ status: 'ok', profiles: [] });
    expect(await other('/profile/remove', { id: profileId })).toEqual({ status: 'denied', message: 'id: unknown profile' });
    expect(await other('/profile/rename', { id: profileId, name: 'mine' })).toEqual({ status: 'denied', message: 'id: unknown profile' });
    expect((await api(`/profile/data?id=${profileId}`)).profiles[0].name).toBe(`Shop (${browser})`);
  });
});

describe.each([['chromium'], ['firefox-esr']])('a saved profile a page filled with zeros, in %s (issue 47, finding 1)', (browser) => {
  it('is kept, and the next session starts on it with everything the pages stored', async () => {
    const MB = 1024 * 1024;
    const profileId = (await api('/profile/create', { name: `Zeros (${browser})`, browser })).profile.id;
    expect((await visit(browser, 'set', { id: profileId })).indexed).toBe('remembered');
    // 80 MB of zeros, under the 300 MB cap; they compress a million-fold.
    expect((await visit(browser, 'zeros', { id: profileId })).indexed).toBe('zeros written');
    const saved = (await api(`/profile/data?id=${profileId}`)).profiles[0];
    expect(saved.save_error).toBeUndefined();
    expect(saved.bytes).toBeGreaterThan(60 * MB);
    // The create is not refused ("would grow past ... bytes when unpacked"): visit() expects `ok`.
    const read = await visit(browser, 'read', { id: profileId });
    expect(read).toMatchObject({ local: 'remembered', indexed: 'remembered', opfs: 60 * MB });
    expect(read.cookie).toContain('kept=remembered');
  }, 300_000);
});

describe('a saved profile with tabs: true in chromium', () => {
  it('brings the three open tabs back in order with their addresses', async () => {
    const profileId = (await api('/profile/create', { name: 'Tabs', browser: 'chromium' })).profile.id;
    const before = site.reports.length;
    const created = await api('/vm/create', { browser: 'chromium', url: `${site.origin}/set?tab=1`, profile: { id: profileId, tabs: true } });
    expect(created.status).toBe('ok');
    const control = await controlOf(engine, created.vmId);
    await waitFor(() => site.reports.slice(before).some((r) => r.page === 'set'), Boolean, 60_000);
    for (const tab of [2, 3]) await control!.client.send('Target.createTarget', { url: `${site.origin}/read?tab=${tab}` });
    await waitFor(() => site.reports.slice(before).filter((r) => r.page === 'read').length, (n) => n >= 2, 60_000);
    expect((await api('/vm/remove', { id: created.vmId })).status).toBe('ok');
    await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'deleted', 60_000);

    const again = await api('/vm/create', { browser: 'chromium', profile: { id: profileId, tabs: true } });
    expect(again.status).toBe('ok');
    const restored = await controlOf(engine, again.vmId);
    const pages = async () => ((await restored!.client.send('Target.getTargets', {})) as { targetInfos: Array<{ type: string; url: string }> }).targetInfos.filter((t) => t.type === 'page').map((t) => t.url);
    const urls = await waitFor(pages, (list) => list.filter((u) => u.startsWith(site.origin)).length >= 3, 30_000);
    expect(urls.filter((u) => u.startsWith(site.origin)).map((u) => new URL(u).search).sort()).toEqual(['?tab=1', '?tab=2', '?tab=3']);
    expect(urls.filter((u) => !u.startsWith(site.origin))).toEqual([]);
    // Their order: Ctrl+<n> shows the n-th tab, which says which it is (a key lost while the
    // window takes the focus after the start is pressed again).
    const session = engine.runtime.get((await engine.store.session(again.vmId))!.runtime_id!)!;
    const shown: string[] = [];
    for (const n of [2, 3, 1]) {
      let visible: string | undefined;
      for (let attempt = 0; attempt < 5 && visible !== `?tab=${n}`; attempt++) {
        await x(session, 'xdotool', ['key', `ctrl+${n}`]);
        const seen = site.reports.length;
        visible = (await waitFor(() => site.reports.slice(seen).filter((r) => r.page === 'visible').at(-1)?.local, (l) => l === `?tab=${n}`, 2_000)) ?? undefined;
      }
      shown.push(visible ?? 'none');
    }
    expect(shown).toEqual(['?tab=2', '?tab=3', '?tab=1']);
    await api('/vm/remove', { id: again.vmId });
  }, 180_000);
});

describe('a saved profile with tabs: true in firefox-esr', () => {
  it('brings the three open tabs back in order with their addresses', async () => {
    const profileId = (await api('/profile/create', { name: 'Fox tabs', browser: 'firefox-esr' })).profile.id;
    const before = site.reports.length;
    const created = await api('/vm/create', { browser: 'firefox-esr', url: `${site.origin}/set?tab=1`, profile: { id: profileId, tabs: true } });
    expect(created.status).toBe('ok');
    await waitFor(() => site.reports.slice(before).some((r) => r.page === 'set'), Boolean, 60_000);
    const runtimeId = await waitFor(async () => (await engine.store.session(created.vmId))?.runtime_id, Boolean, 30_000);
    const first = engine.runtime.get(runtimeId!)!;
    for (const tab of [2, 3]) {
      const seen = site.reports.length;
      await x(first, 'xdotool', ['key', 'ctrl+t']);
      await new Promise((r) => setTimeout(r, 500));
      await typeAddress(first, `${site.origin}/read?tab=${tab}`);
      await waitFor(() => site.reports.slice(seen).some((r) => r.page === 'read'), Boolean, 30_000);
    }
    expect((await api('/vm/remove', { id: created.vmId })).status).toBe('ok');
    await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'deleted', 60_000);

    const again = await api('/vm/create', { browser: 'firefox-esr', profile: { id: profileId, tabs: true } });
    expect(again.status).toBe('ok');
    const againId = await waitFor(async () => (await engine.store.session(again.vmId))?.runtime_id, Boolean, 30_000);
    const session = engine.runtime.get(againId!)!;
    const shown: string[] = [];
    for (const n of [2, 3, 1]) {
      let visible: string | undefined;
      for (let attempt = 0; attempt < 5 && visible !== `?tab=${n}`; attempt++) {
        // Firefox on Linux switches tabs with Alt+<n>.
        await x(session, 'xdotool', ['key', `alt+${n}`]);
        const seen = site.reports.length;
        visible = (await waitFor(() => site.reports.slice(seen).filter((r) => r.page === 'visible').at(-1)?.local, (l) => l === `?tab=${n}`, 2_000)) ?? undefined;
      }
      shown.push(visible ?? 'none');
    }
    expect(shown).toEqual(['?tab=2', '?tab=3', '?tab=1']);
    await api('/vm/remove', { id: again.vmId });
  }, 240_000);
});
