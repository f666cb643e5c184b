// Hibernation of a session on a saved profile (issue 46, decisions.md 179) with a real engine and
// real, confined Chromium: a session on a profile, logged in on a loopback site with three tabs, is
// hibernated (its processes end) while its profile stays its own (a second create on it and the
// profile's remove are refused); a viewer resumes it on the same tabs, logged in; a program adds a
// cookie; hibernated again, it is removed while asleep, and its profile is written back from the
// hibernated state: the next session on the profile has both cookies. A session on the profile
// whose hibernated state was altered ends at its resume with the reason, and the profile is free
// again with the version it had; one removed asleep with an altered state writes nothing into the
// profile, which says why.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shareLinkOf } from '../helpers/automation.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { hibernationSite, PAGE_COLOURS, type PageReport } from '../helpers/hibernation-site.js';
import { connectRfb } from '../helpers/rfb-client.js';
import { waitFor } from '../helpers/session.js';

const FREEZER = '/sys/fs/cgroup/freezer/remote-browser-kit';
const groupOf = (runtimeId: string) => (existsSync(FREEZER) ? readdirSync(FREEZER).filter((name) => name.endsWith(`-${runtimeId}`)).map((name) => join(FREEZER, name))[0] : undefined);

let fixture: EngineFixture;
const reports: PageReport[] = [];

beforeAll(async () => {
  fixture = await startEngine({ name: 'hibernation-profile', site: hibernationSite(reports), config: { standby: { afterSeconds: 1, hibernateAfterMinutes: 0.05 } } });
}, 180_000);

afterAll(async () => {
  await fixture?.close();
});

const entry = async (id: string) => (await fixture.call(`/vm/data?id=${id}`)).data[0] as Record<string, any>;
const profileOf = async (id: string) => (await fixture.call(`/profile/data?id=${id}`)).profiles[0] as Record<string, any>;
const shareState = async (link: string) => (await (await fetch(`${fixture.engine.url}/share/${link}`)).json()) as Record<string, any>;
const tabAction = (link: string, body: unknown) =>
  fetch(`${fixture.engine.url}/share/${link}/tabs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.status);
const tabsOf = (state: Record<string, any>) => ((state.tabs ?? []) as Array<{ url: string; active: boolean }>).map((tab) => `${new URL(tab.url).pathname}${tab.active ? '*' : ''}`).join(',');
const rfbUrl = (link: string) => `${fixture.engine.url.replace(/^http/, 'ws')}/share/${link}/rfb`;

/** Waits until the session is hibernated and checks its processes are gone. */
async function hibernated(id: string): Promise<void> {
  const runtimeId = (await waitFor(() => fixture.engine.store.session(id), (row) => Boolean(row?.runtime_id), 10_000))!.runtime_id!;
  const asleep = await waitFor(() => entry(id), (e) => e.hibernated === true || e.status !== 'running', 60_000);
  expect(asleep).toMatchObject({ status: 'running', standby: true, hibernated: true });
  expect(fixture.engine.runtime.get(runtimeId)).toBeUndefined();
  expect(groupOf(runtimeId)).toBeUndefined();
}

/** Starts a session on the profile at /home and answers its id, its link, and the cookie its page reported. */
async function onProfile(profileId: string): Promise<{ id: string; link: string; cookie: string }> {
  const since = reports.length;
  const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/home`, profile: { id: profileId } });
  expect(created.status, JSON.stringify(created)).toBe('ok');
  expect((await fixture.call(`/vm/data?id=${created.vmId}&wait=30000`)).data[0].status).toBe('running');
  const report = await waitFor(() => reports.slice(since).find((r) => r.page === 'home'), Boolean, 30_000);
  return { id: created.vmId, link: shareLinkOf(created.shareUrl), cookie: report!.cookie };
}

/** Changes one byte of the session's sealed state, as a damaged disk or a tampering hand would. */
async function alterState(sessionId: string): Promise<void> {
  const [chunk] = await fixture.engine.store.sql.all<{ state_id: string; seq: number; data: Buffer }>('SELECT state_id, seq, data FROM hibernation_chunks WHERE session_id = ? ORDER BY seq', [sessionId]);
  const data = Buffer.from(chunk!.data);
  data[data.length - 1]! ^= 0xff;
  expect(await fixture.engine.store.sql.run('UPDATE hibernation_chunks SET data = ? WHERE state_id = ? AND seq = ?', [data, chunk!.state_id, chunk!.seq])).toBe(1);
}

describe('a session on a saved profile', () => {
  let profileId: string;
  let id: string;
  let link: string;

  it('is hibernated with its three tabs, and its profile stays its own while it sleeps', async () => {
    profileId = (await fixture.call('/profile/create', { name: 'Shop', browser: 'chromium' })).profile.id;
    const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/login`, profile: { id: profileId } });
    expect(created.status, JSON.stringify(created)).toBe('ok');
    id = created.vmId;
    link = shareLinkOf(created.shareUrl);
    expect((await fixture.call(`/vm/data?id=${id}&wait=30000`)).data[0].status).toBe('running');
    expect(await tabAction(link, { action: 'open', url: `${fixture.site.origin}/second` })).toBe(200);
    expect(await tabAction(link, { action: 'open', url: `${fixture.site.origin}/third` })).toBe(200);
    const three = await waitFor(() => shareState(link), (s) => (s.tabs ?? []).length === 3, 20_000);
    const second = (three.tabs as Array<{ id: string; url: string }>).find((tab) => tab.url.endsWith('/second'))!;
    expect(await tabAction(link, { action: 'switch', tab: second.id })).toBe(200);
    await waitFor(() => shareState(link), (s) => tabsOf(s) === '/home,/second*,/third', 10_000);
    await hibernated(id);
    // Nothing was written to the profile: its version is written at the session's end.
    expect((await profileOf(profileId)).bytes).toBe(0);
    const again = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/home`, profile: { id: profileId } });
    expect(again).toMatchObject({ status: 'denied' });
    expect(again.message).toMatch(/a session runs on this profile now/);
    expect((await fixture.call('/profile/remove', { id: profileId })).message).toMatch(/a session runs on this profile/);
    // The refused create woke nothing.
    expect((await entry(id)).hibernated).toBe(true);
  }, 180_000);

  it('is resumed by a viewer on its profile: the same tabs, still logged in', async () => {
    const since = reports.length;
    const viewer = await connectRfb(rfbUrl(link), 60_000);
    try {
      await viewer.waitForPixel(640, 600, PAGE_COLOURS.second, 60_000);
      expect(tabsOf(await waitFor(() => shareState(link), (s) => tabsOf(s) === '/home,/second*,/third', 20_000))).toBe('/home,/second*,/third');
      const pages = await waitFor(() => reports.slice(since), (got) => ['home', 'second', 'third'].every((p) => got.some((r) => r.page === p)), 30_000);
      for (const report of pages) expect(report.cookie).toContain('login=alice');
    } finally {
      viewer.close();
    }
    expect((await entry(id)).hibernated).toBeUndefined();
    expect((await fixture.engine.store.session(id))!.profile_id).toBe(profileId);
  }, 180_000);

  it('ended while hibernated, writes back to its profile what its pages stored, once', async () => {
    // A program's page stores one more cookie after the resume.
    const answer = await fixture.call(`/vm/automation?id=${id}`);
    expect(answer.status, JSON.stringify(answer)).toBe('ok');
    const browser = await chromium.connectOverCDP(answer.browserWSEndpoint, { timeout: 60_000 });
    try {
      const pages = await waitFor(() => browser.contexts().flatMap((context) => context.pages()), (list) => list.length >= 3, 20_000);
      const home = pages.find((page) => page.url().endsWith('/home'))!;
      await home.evaluate(() => void (document.cookie = 'later=kept; Max-Age=86400; Path=/; SameSite=Lax'));
      expect(await home.evaluate(() => document.cookie)).toContain('later=kept');
    } finally {
      await browser.close();
    }
    await hibernated(id);
    expect((await fixture.call('/vm/remove', { id })).status).toBe('ok');
    expect(await waitFor(async () => (await entry(id)).status, (s) => s === 'deleted', 60_000)).toBe('deleted');
    const saved = await profileOf(profileId);
    expect(saved.save_error).toBeUndefined();
    expect(saved.bytes).toBeGreaterThan(0);
    // The state is gone once the profile holds it.
    expect(await fixture.engine.store.sql.all('SELECT state_id FROM hibernation_chunks WHERE session_id = ?', [id])).toEqual([]);
    // The next session on the profile starts logged in, with the cookie stored after the resume.
    const next = await onProfile(profileId);
    expect(next.cookie).toContain('login=alice');
    expect(next.cookie).toContain('later=kept');
    expect((await fixture.call('/vm/remove', { id: next.id })).status).toBe('ok');
    await waitFor(async () => (await entry(next.id)).status, (s) => s === 'deleted', 60_000);
  }, 240_000);

  it('whose hibernated state was altered ends at its resume with the reason, and frees its profile as it was', async () => {
    const before = (await profileOf(profileId)).bytes as number;
    const { id: sleeper, link: sleeperLink } = await onProfile(profileId);
    await hibernated(sleeper);
    await alterState(sleeper);
    const viewer = await connectRfb(rfbUrl(sleeperLink), 30_000).catch((error: Error) => error);
    if (!(viewer instanceof Error)) {
      await expect(viewer.waitForPixel(640, 600, PAGE_COLOURS.home, 10_000)).rejects.toThrow();
      viewer.close();
    }
    const ended = await waitFor(() => entry(sleeper), (e) => e.status !== 'running', 20_000);
    expect(ended.status).toBe('suspended');
    const reason = (await fixture.engine.store.session(sleeper))!.end_reason!;
    expect(reason).toMatch(/^the session could not be resumed from hibernation: its saved state was refused \(.*altered/);
    expect(await shareState(sleeperLink)).toMatchObject({ state: 'ended', reason });
    expect(await fixture.engine.store.sql.all('SELECT state_id FROM hibernation_chunks WHERE session_id = ?', [sleeper])).toEqual([]);
    // The profile is free at once and kept the version it had: nothing was written from the damaged state.
    const profile = await profileOf(profileId);
    expect(profile).toMatchObject({ bytes: before });
    expect(profile.save_error).toBeUndefined();
    const after = await onProfile(profileId);
    expect(after.cookie).toContain('later=kept');
    expect((await fixture.call('/vm/remove', { id: after.id })).status).toBe('ok');
    await waitFor(async () => (await entry(after.id)).status, (s) => s === 'deleted', 60_000);
  }, 240_000);

  it('whose hibernated state was altered, removed asleep, writes nothing into its profile and says why', async () => {
    const before = (await profileOf(profileId)).bytes as number;
    const { id: sleeper } = await onProfile(profileId);
    await hibernated(sleeper);
    await alterState(sleeper);
    expect((await fixture.call('/vm/remove', { id: sleeper })).status).toBe('ok');
    expect(await waitFor(async () => (await entry(sleeper)).status, (s) => s === 'deleted', 60_000)).toBe('deleted');
    const profile = await profileOf(profileId);
    expect(profile.bytes).toBe(before);
    expect(profile.save_error).toMatch(/the previous version stays/);
    expect(await fixture.engine.store.sql.all('SELECT state_id FROM hibernation_chunks WHERE session_id = ?', [sleeper])).toEqual([]);
    // The profile is free, on the version it had.
    const after = await onProfile(profileId);
    expect(after.cookie).toContain('later=kept');
    expect((await fixture.call('/vm/remove', { id: after.id })).status).toBe('ok');
  }, 240_000);
});
