// A save a restore would refuse, and saves of saved profiles at once (issue 47, findings 1, 7b and
// 7c), against a real engine and its
// SQLite database; the sessions run on the fake runtime, whose browsers hand back real GNU tar
// archives of a profile folder, so that two or four saves meet at the moment a test chooses:
// a save whose archive would unpack past what a restore takes keeps the earlier version, which
// the next session starts on; two saves of one account at once never pass its plan's total together, and at most
// PROFILE_TRANSFERS_AT_ONCE saves run at once on an engine, the others waiting their turn, a
// session's restore ahead of them.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/engine/config.js';
import { writeArchive } from '../../src/engine/profiles/profile-archive.js';
import { ProfileStore } from '../../src/engine/profiles/profile-store.js';
import { PROFILE_TRANSFERS_AT_ONCE, ProfileTransfers } from '../../src/engine/profiles/profile-transfers.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { waitFor } from '../helpers/session.js';

const MB = 1024 * 1024;
/** What each browser hands back when its session ends; set by each test. */
let capture: () => Promise<Buffer> = async () => Buffer.alloc(1024);
let fixture: EngineFixture<FakeRuntime>;
let folder: string;

/** A Chromium profile folder holding `mb` MB that do not compress, as GNU tar packs it. */
async function profileArchive(mb: number): Promise<Buffer> {
  const source = await mkdtemp(join(folder, 'profile-'));
  await mkdir(join(source, 'Default', 'IndexedDB'), { recursive: true });
  await writeFile(join(source, 'Default', 'IndexedDB', 'data.bin'), randomBytes(mb * MB));
  return execFileSync('tar', ['-c', '-f', '-', '-C', source, '--format=gnu', 'Default'], { maxBuffer: 64 * MB });
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rbk-profile-saves-'));
  const pro = DEFAULT_PLANS.find((plan) => plan.id === 'pro')!;
  fixture = await startEngine({
    name: 'profile-saves',
    runtime: 'fake',
    fake: { profile: () => capture() },
    plans: ['saver'],
    config: { plans: [...DEFAULT_PLANS, { ...pro, id: 'saver', name: 'Saver', profile_limit: 10, profile_mb_limit: 10 }], profiles: { maxProfileMb: 8 }, warm: { memoryMb: 0, displays: 0 } },
  });
}, 60_000);

afterAll(async () => {
  await fixture?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

/** Starts a session on each of `count` new profiles, then ends them all at once and waits until each has ended (its save done). */
async function endTogether(count: number, label: string): Promise<string[]> {
  const { call } = fixture;
  const profiles: string[] = [];
  for (let i = 0; i < count; i++) {
    const made = await call('/profile/create', { name: `${label} ${i}`, browser: 'chromium' });
    expect(made.status, JSON.stringify(made)).toBe('ok');
    profiles.push(made.profile.id);
  }
  const sessions: string[] = [];
  for (const id of profiles) {
    const created = await call('/vm/create', { browser: 'chromium', profile: { id } });
    expect(created.status, JSON.stringify(created)).toBe('ok');
    sessions.push(created.vmId);
  }
  for (const vmId of sessions) expect(await waitFor(async () => (await call(`/vm/data?id=${vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
  await Promise.all(sessions.map(async (vmId) => expect((await call('/vm/remove', { id: vmId })).status).toBe('ok')));
  for (const vmId of sessions) expect(await waitFor(async () => (await call(`/vm/data?id=${vmId}`)).data?.[0]?.status, (s) => s === 'deleted', 60_000)).toBe('deleted');
  return profiles;
}

describe('a save a restore would refuse (finding 1)', () => {
  it('keeps the earlier version, says why in the profile, and the next session starts on that version', async () => {
    const { call } = fixture;
    const profileId = (await call('/profile/create', { name: 'Kept', browser: 'chromium' })).profile.id;
    const session = async () => {
      const created = await call('/vm/create', { browser: 'chromium', profile: { id: profileId } });
      expect(created.status, JSON.stringify(created)).toBe('ok');
      expect(await waitFor(async () => (await call(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
      expect((await call('/vm/remove', { id: created.vmId })).status).toBe('ok');
      expect(await waitFor(async () => (await call(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'deleted', 60_000)).toBe('deleted');
    };
    const good = await profileArchive(1);
    capture = async () => good;
    await session();
    const earlier = (await new ProfileStore(fixture.engine.store).get(profileId))!;
    expect(earlier.save_error).toBeNull();
    // 20,000 tiny files under long names: a few bytes of files, but 30 MB of headers, past the 8 MB cap and its 16 MB of room.
    const deep = `Default/IndexedDB/${'n'.repeat(280)}`;
    capture = async () => writeArchive([{ path: 'Default', kind: 'folder', mtime: 0, data: Buffer.alloc(0) }, ...Array.from({ length: 20_000 }, (_, i) => ({ path: `${deep}/${i}`, kind: 'file' as const, mtime: 0, data: Buffer.from('x') }))]);
    await session();
    const listed = (await call(`/profile/data?id=${profileId}`)).profiles[0];
    expect(listed.save_error).toBe(`the saved state would grow past ${24 * MB} bytes when unpacked; the previous version stays`);
    expect((await new ProfileStore(fixture.engine.store).get(profileId))!.version_id).toBe(earlier.version_id);
    // The next create restores the earlier version (it checks it first: a version it would refuse answers `denied`).
    capture = async () => good;
    await session();
    expect((await call('/profile/remove', { id: profileId })).status).toBe('ok');
  }, 120_000);
});

describe('saves at once', () => {
  it("of one account never pass its plan's profile total together: one is kept, the other says why (finding 7b)", async () => {
    const archive = await profileArchive(6);
    // Both browsers hand their profiles back at the same moment (or after 5 s, if the engine runs one save at a time).
    const arrived: Array<() => void> = [];
    capture = () => new Promise<Buffer>((resolve) => {
      const release = () => resolve(archive);
      arrived.push(release);
      if (arrived.length === 2) for (const next of arrived) next();
      else setTimeout(release, 5_000);
    });
    const profiles = await endTogether(2, 'Half');
    const listed = (await fixture.call('/profile/data')).profiles.filter((p: { id: string }) => profiles.includes(p.id));
    // 6 MB each, 10 MB for the plan: exactly one fits.
    expect(listed.filter((p: { bytes: number }) => p.bytes > 0)).toHaveLength(1);
    const refused = listed.find((p: { bytes: number }) => p.bytes === 0);
    expect(refused.save_error).toMatch(/^the plan's profiles may hold 10 MB together; this save \(6\.0 MB\) would pass it; the previous version stays$/);
    expect((await fixture.call('/user/quota')).profile_mb_used).toBeLessThanOrEqual(10);
    for (const id of profiles) expect((await fixture.call('/profile/remove', { id })).status).toBe('ok');
  }, 120_000);

  it(`run ${PROFILE_TRANSFERS_AT_ONCE} at a time on an engine, and every one is kept (finding 7c)`, async () => {
    const archive = await profileArchive(1);
    let running = 0;
    let most = 0;
    capture = async () => {
      running++;
      most = Math.max(most, running);
      // A browser's close and pack take a moment; meanwhile the others come.
      await new Promise((resolve) => setTimeout(resolve, 300));
      running--;
      return archive;
    };
    const profiles = await endTogether(4, 'Queued');
    expect(most).toBe(PROFILE_TRANSFERS_AT_ONCE);
    const listed = (await fixture.call('/profile/data')).profiles.filter((p: { id: string }) => profiles.includes(p.id));
    expect(listed.map((p: { bytes: number; save_error?: string }) => [p.bytes >= MB, p.save_error])).toEqual(Array.from({ length: 4 }, () => [true, undefined]));
  }, 120_000);
});

describe('the transfers of an engine', () => {
  it("let a session's restore go ahead of the saves waiting, never past the limit (decisions.md 138)", async () => {
    const transfers = new ProfileTransfers(2);
    const order: string[] = [];
    const ends: Array<() => void> = [];
    const transfer = (name: string, first = false) => transfers.run(() => new Promise<void>((resolve) => {
      order.push(name);
      ends.push(resolve);
    }), first);
    const all = [transfer('save 1'), transfer('save 2'), transfer('save 3'), transfer('save 4'), transfer('restore', true)];
    expect(await waitFor(async () => order.length, (n) => n === 2, 5_000)).toBe(2);
    expect(transfers.load).toEqual({ running: 2, waiting: 3 });
    // Each transfer that ends gives its place to the next: the restore first, then the saves in order.
    for (let i = 0; i < 5; i++) {
      ends[i]!();
      await waitFor(async () => order.length, (n) => n === Math.min(5, i + 3), 5_000);
      expect(transfers.load.running).toBeLessThanOrEqual(2);
    }
    await Promise.all(all);
    expect(order).toEqual(['save 1', 'save 2', 'restore', 'save 3', 'save 4']);
    expect(transfers.load).toEqual({ running: 0, waiting: 0 });
  });
});
