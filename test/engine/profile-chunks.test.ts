// A saved profile stored in sealed chunks (issue 47, decisions.md 138), on the engine's SQLite
// database and on Postgres: a profile larger than a chunk is saved as several and the next session
// starts on it byte for byte; a chunk altered, two chunks swapped or the last one cut off in the
// database refuse the create with a clear message and change nothing, and once the chunk is as it
// was the profile starts again on the same version; a version saved before chunks (one sealed blob)
// still opens; a save that is refused leaves no chunk of its own. The sessions run on the fake
// runtime, whose browsers hand back real GNU tar archives of a profile folder and take the restored
// archive as a session's tar would.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/engine/config.js';
import { ProfileStore } from '../../src/engine/profiles/profile-store.js';
import { sealState } from '../../src/engine/profiles/sealed-state.js';
import { CHUNK_BYTES } from '../../src/engine/profiles/sealed-stream.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { testDatabase } from '../helpers/postgres.js';
import { waitFor } from '../helpers/session.js';

const MB = 1024 * 1024;
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'rbk-profile-chunks-'));
});

afterAll(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
});

/** A Chromium profile folder: `mb` MB that do not compress in IndexedDB, and a cookie file. */
async function profileFolder(mb: number): Promise<string> {
  const source = await mkdtemp(join(folder, 'profile-'));
  await mkdir(join(source, 'Default', 'IndexedDB', 'https_site_0.indexeddb.blob'), { recursive: true });
  await writeFile(join(source, 'Default', 'IndexedDB', 'https_site_0.indexeddb.blob', 'data.bin'), randomBytes(mb * MB));
  await writeFile(join(source, 'Default', 'Cookies'), `signed_in=${randomBytes(8).toString('hex')}`);
  return source;
}

function packed(source: string): Buffer {
  return execFileSync('tar', ['-c', '-f', '-', '-C', source, '--format=gnu', 'Default'], { maxBuffer: 64 * MB });
}

/** The files an archive unpacks to, by path: their sizes and SHA-256 (a deep comparison of megabytes would hold the engine's event loop). */
async function unpacked(archive: Buffer): Promise<Record<string, string>> {
  const out = await mkdtemp(join(folder, 'out-'));
  execFileSync('tar', ['-x', '-f', '-', '-C', out], { input: archive, maxBuffer: 64 * MB });
  const files: Record<string, string> = {};
  for (const path of ['Default/Cookies', 'Default/IndexedDB/https_site_0.indexeddb.blob/data.bin']) {
    const bytes = await readFile(join(out, path));
    files[path] = `${bytes.length} ${createHash('sha256').update(bytes).digest('hex')}`;
  }
  return files;
}

describe.each(['sqlite', 'postgres'] as const)('a saved profile in chunks (%s)', (dialect) => {
  let fixture: EngineFixture<FakeRuntime>;
  /** What each browser hands back when its session ends; set by each test. */
  let capture: () => Promise<Buffer> = async () => Buffer.alloc(1024);
  let profileId: string;
  let source: string;
  const profileKey = randomBytes(32);
  const rows = () => new ProfileStore(fixture.engine.store);
  const sql = () => fixture.engine.store.sql;

  beforeAll(async () => {
    const pro = DEFAULT_PLANS.find((plan) => plan.id === 'pro')!;
    fixture = await startEngine({
      name: `profile-chunks-${dialect}`,
      runtime: 'fake',
      fake: { profile: () => capture() },
      plans: ['keeper'],
      ...(dialect === 'postgres' ? { database: await testDatabase() } : {}),
      config: {
        plans: [...DEFAULT_PLANS, { ...pro, id: 'keeper', name: 'Keeper', profile_limit: 10, profile_mb_limit: 100 }],
        profiles: { enabled: true, key: profileKey.toString('base64'), maxProfileMb: 12, expireDays: 30 },
        warm: { memoryMb: 0, displays: 0 },
        ...(dialect === 'postgres' ? { cluster: { secret: randomBytes(24).toString('hex') } } : {}),
      },
    });
    profileId = (await fixture.call('/profile/create', { name: 'Chunked', browser: 'chromium' })).profile.id;
  }, 60_000);

  afterAll(async () => {
    await fixture?.close();
  });

  /** Runs a session on the profile until it has ended (its save done); answers the archive it started on. */
  async function session(): Promise<Buffer | undefined> {
    const { call } = fixture;
    const created = await call('/vm/create', { browser: 'chromium', profile: { id: profileId } });
    expect(created.status, JSON.stringify(created)).toBe('ok');
    expect(await waitFor(async () => (await call(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
    const row = await fixture.engine.store.session(created.vmId);
    const restored = fixture.engine.runtime.get(row!.runtime_id!)!.restored;
    expect((await call('/vm/remove', { id: created.vmId })).status).toBe('ok');
    expect(await waitFor(async () => (await call(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'deleted', 60_000)).toBe('deleted');
    return restored;
  }

  async function chunksOf(versionId: string): Promise<Array<{ seq: number; data: Buffer }>> {
    return sql().all<{ seq: number; data: Buffer }>('SELECT seq, data FROM profile_chunks WHERE version_id = ? ORDER BY seq', [versionId]);
  }

  async function refusedCreate(): Promise<string> {
    const sessionsBefore = (await fixture.call('/vm/data')).data.length;
    const refused = await fixture.call('/vm/create', { browser: 'chromium', profile: { id: profileId } });
    expect(refused.status, JSON.stringify(refused)).toBe('denied');
    expect((await fixture.call('/vm/data')).data.length).toBe(sessionsBefore);
    return refused.message;
  }

  it('larger than a chunk, is saved in several and restored byte for byte', async () => {
    source = await profileFolder(5);
    const archive = packed(source);
    capture = async () => archive;
    expect(await session()).toBeUndefined();
    const row = (await rows().get(profileId))!;
    expect(row.save_error).toBeNull();
    expect(row.bytes).toBeGreaterThan(5 * MB);
    const chunks = await chunksOf(row.version_id!);
    // 5 MB that do not compress: at least five chunks of CHUNK_BYTES, the version's row counting them.
    expect(chunks.length).toBeGreaterThanOrEqual(Math.floor((5 * MB) / CHUNK_BYTES));
    expect(chunks.map((c) => Number(c.seq))).toEqual(chunks.map((_, i) => i));
    expect(await rows().version(row.version_id!)).toMatchObject({ chunks: chunks.length });
    expect(row.stored_bytes).toBe(chunks.reduce((sum, c) => sum + c.data.length, 0));
    // The next session starts on it: its files are the very bytes saved.
    const restored = (await session())!;
    expect(await unpacked(restored)).toEqual(await unpacked(archive));
    // That session's save replaced the version: only the new version's chunks are left.
    const next = (await rows().get(profileId))!;
    expect(next.version_id).not.toBe(row.version_id);
    expect(await sql().get('SELECT COUNT(*) AS n FROM profile_chunks WHERE profile_id = ? AND version_id <> ?', [profileId, next.version_id])).toEqual({ n: 0 });
  }, 120_000);

  it('refuses a create when a chunk was altered, swapped or cut off, changes nothing, and starts on the same version once it is as it was', async () => {
    const row = (await rows().get(profileId))!;
    const chunks = await chunksOf(row.version_id!);
    expect(chunks.length).toBeGreaterThan(2);
    const put = (seq: number, data: Buffer) => sql().run('UPDATE profile_chunks SET data = ? WHERE version_id = ? AND seq = ?', [data, row.version_id, seq]);

    // One bit of the third chunk's ciphertext flipped.
    const altered = Buffer.from(chunks[2]!.data);
    altered[altered.length - 1]! ^= 1;
    await put(2, altered);
    expect(await refusedCreate()).toBe(`profile.id: the saved state of "Chunked" was refused (chunk 3 of ${chunks.length} of the saved state does not open with this service's profile key (another key, or it was altered, moved or cut)); nothing was started; remove the profile or start without it`);
    await put(2, chunks[2]!.data);

    // The first two chunks swapped: each is sealed to its place.
    await put(0, chunks[1]!.data);
    await put(1, chunks[0]!.data);
    expect(await refusedCreate()).toMatch(/^profile\.id: the saved state of "Chunked" was refused \(chunk 1 of \d+ of the saved state does not open/);
    await put(0, chunks[0]!.data);
    await put(1, chunks[1]!.data);

    // The last chunk cut off, the count in the version's row lowered to match: the new last chunk was not sealed as the last.
    const last = chunks.length - 1;
    await sql().run('DELETE FROM profile_chunks WHERE version_id = ? AND seq = ?', [row.version_id, last]);
    await sql().run('UPDATE profile_versions SET chunks = ? WHERE id = ?', [last, row.version_id]);
    expect(await refusedCreate()).toMatch(new RegExp(`\\(chunk ${last} of ${last} of the saved state does not open`));
    // ... and with the count left as it was, the stream is cut short.
    await sql().run('UPDATE profile_versions SET chunks = ? WHERE id = ?', [chunks.length, row.version_id]);
    expect(await refusedCreate()).toContain(`(the saved state is cut short: ${last} of its ${chunks.length} chunks are there)`);
    await sql().run('INSERT INTO profile_chunks (version_id, seq, profile_id, data) VALUES (?, ?, ?, ?)', [row.version_id, last, profileId, chunks[last]!.data]);

    // Nothing changed meanwhile: the same version, free, with its chunks; and it starts again.
    const after = (await rows().get(profileId))!;
    expect([after.version_id, after.session_id, after.save_error]).toEqual([row.version_id, null, null]);
    capture = async () => packed(source);
    expect(await unpacked((await session())!)).toEqual(await unpacked(packed(source)));
  }, 120_000);

  it('opens a version saved before chunks, as one sealed blob', async () => {
    const archive = packed(await profileFolder(2));
    const versionId = 'd'.repeat(32);
    const sealed = await sealState(archive, profileKey, profileId, versionId);
    await sql().run('INSERT INTO profile_versions (id, profile_id, created_at, bytes, data) VALUES (?, ?, ?, ?, ?)', [versionId, profileId, Date.now(), archive.length, sealed]);
    await sql().run('UPDATE profiles SET version_id = ? WHERE id = ?', [versionId, profileId]);
    expect(await unpacked((await session())!)).toEqual(await unpacked(archive));
  }, 120_000);

  it('keeps the earlier version and none of its own chunks when a save is refused', async () => {
    const before = (await rows().get(profileId))!;
    const chunksBefore = await chunksOf(before.version_id!);
    // Three files of 5 MB: past the 12 MB cap at the third, after the first two's chunks were written.
    const three = await profileFolder(5);
    for (const name of ['more.bin', 'most.bin']) await writeFile(join(three, 'Default', 'IndexedDB', 'https_site_0.indexeddb.blob', name), randomBytes(5 * MB));
    const big = packed(three);
    capture = async () => big;
    await session();
    const after = (await rows().get(profileId))!;
    expect(after.save_error).toBe('the profile is larger than 12 MB, the cap of one profile; the previous version stays');
    expect(after.version_id).toBe(before.version_id);
    expect(await sql().all('SELECT DISTINCT version_id FROM profile_chunks WHERE profile_id = ?', [profileId])).toEqual([{ version_id: before.version_id }]);
    expect((await chunksOf(before.version_id!)).length).toBe(chunksBefore.length);
  }, 120_000);
});
