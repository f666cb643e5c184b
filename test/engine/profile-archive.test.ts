// The engine's checks of a saved profile's archive and sealed state (issue 34, decisions.md
// 88-89), on archives GNU tar really writes and on crafted ones: only plain files and folders
// under relative paths pass; links, devices, FIFOs, `..`, absolute paths, damaged headers, too
// many entries or bytes are refused (restore) or left out (a session's own); what the engine
// writes again unpacks with tar as it was; a sealed state opens only with its key, profile and
// version, and never grows past the cap (a compression bomb).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArchiveRefusal, readArchive, writeArchive, type ArchiveEntry } from '../../src/engine/profiles/profile-archive.js';
import { openState, sealState, SealedStateError } from '../../src/engine/profiles/sealed-state.js';
import { keepsHibernationPath, keepsProfilePath } from '../../src/engine/runtime/index.js';

const LIMITS = { maxBytes: 10 * 1024 * 1024, maxEntries: 1000 };
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rbk-archive-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A tar archive of `folder` as GNU tar writes it. */
const tarOf = (folder: string, ...names: string[]) => execFileSync('tar', ['-c', '-f', '-', '-C', folder, '--format=gnu', ...names]);

/** One crafted header (ustar) with `type` and `name`, then `data`, then the end. */
function crafted(entries: Array<{ name: string; type: string; data?: Buffer; linkname?: string }>): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const header = Buffer.alloc(512);
    header.write(entry.name, 0, 100, 'utf8');
    header.write('0000644\0', 100, 8, 'latin1');
    header.write('0000000\0', 108, 8, 'latin1');
    header.write('0000000\0', 116, 8, 'latin1');
    header.write(`${(entry.data?.length ?? 0).toString(8).padStart(11, '0')}\0`, 124, 12, 'latin1');
    header.write('00000000000\0', 136, 12, 'latin1');
    header.write(entry.type, 156, 1, 'latin1');
    if (entry.linkname) header.write(entry.linkname, 157, 100, 'utf8');
    header.write('ustar\u000000', 257, 8, 'latin1');
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : header[i]!;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'latin1');
    parts.push(header);
    if (entry.data) parts.push(entry.data, Buffer.alloc((512 - (entry.data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

describe("a profile's archive", () => {
  it('passes a real profile-like tree, long names included, and unpacks as it was after the engine writes it again', async () => {
    const source = join(dir, 'source');
    const long = `Default/Service Worker/CacheStorage/${'a'.repeat(40)}/${'b'.repeat(36)}/index-dir`;
    await mkdir(join(source, long), { recursive: true });
    await writeFile(join(source, 'Default', 'Cookies'), 'cookies');
    await writeFile(join(source, long, 'the-real-index'), randomBytes(3000));
    const { entries, dropped } = readArchive(tarOf(source, 'Default'), LIMITS, true, keepsProfilePath('chromium', false));
    expect(dropped).toBe(0);
    expect(entries.map((e) => e.path)).toContain(`${long}/the-real-index`);
    const out = join(dir, 'out');
    await mkdir(out);
    execFileSync('tar', ['-x', '-f', '-', '-C', out], { input: writeArchive(entries) });
    expect(await readFile(join(out, long, 'the-real-index'))).toEqual(await readFile(join(source, long, 'the-real-index')));
    expect(await readFile(join(out, 'Default', 'Cookies'), 'utf8')).toBe('cookies');
  });

  it('refuses a link on restore and leaves it out of what a session hands back', async () => {
    const source = join(dir, 'linked');
    await mkdir(join(source, 'Default'), { recursive: true });
    await writeFile(join(source, 'Default', 'Cookies'), 'cookies');
    await symlink('/etc/shadow', join(source, 'Default', 'Preferences'));
    const archive = tarOf(source, 'Default');
    expect(() => readArchive(archive, LIMITS, true)).toThrow(/symbolic link \("Default\/Preferences"\)/);
    const kept = readArchive(archive, LIMITS, false);
    expect(kept.dropped).toBe(1);
    expect(kept.entries.map((e) => e.path).sort()).toEqual(['Default', 'Default/Cookies']);
  });

  it('leaves out a file at a path over 1,024 characters from what a session hands back, keeps the rest, and refuses it on restore (issue 47, finding 7a)', async () => {
    const source = join(dir, 'deep');
    // Each folder name within Linux's 255 bytes, the path 1,232 characters in all.
    const deep = `Default/IndexedDB/${Array.from({ length: 6 }, (_, i) => String(i).padEnd(200, 'd')).join('/')}`;
    await mkdir(join(source, deep), { recursive: true });
    await writeFile(join(source, deep, 'deep.bin'), 'deep');
    await writeFile(join(source, 'Default', 'Cookies'), 'cookies');
    const archive = tarOf(source, 'Default');
    const kept = readArchive(archive, LIMITS, false);
    expect(kept.entries.map((e) => e.path)).toContain('Default/Cookies');
    expect(kept.entries.some((e) => e.path.endsWith('deep.bin'))).toBe(false);
    expect(kept.dropped).toBeGreaterThanOrEqual(1);
    // What the engine writes again passes a restore's checks.
    expect(readArchive(writeArchive(kept.entries), LIMITS, true).entries.map((e) => e.path)).toEqual(kept.entries.map((e) => e.path));
    expect(() => readArchive(archive, LIMITS, true)).toThrow(/longer than 1024 characters/);
  });

  it.each([
    ['a path out of its folder', [{ name: 'Default/../../etc/passwd', type: '0', data: Buffer.from('x') }], /leaves its folder/],
    ['an absolute path', [{ name: '/etc/cron.d/evil', type: '0', data: Buffer.from('x') }], /absolute path/],
    ['a hard link', [{ name: 'Default/Cookies', type: '1', linkname: '/etc/shadow' }], /hard link/],
    ['a character device', [{ name: 'Default/Cookies', type: '3' }], /character device/],
    ['a block device', [{ name: 'Default/Cookies', type: '4' }], /block device/],
    ['a FIFO', [{ name: 'Default/Cookies', type: '6' }], /FIFO/],
  ])('refuses %s', (_what, entries, message) => {
    expect(() => readArchive(crafted(entries), LIMITS, true)).toThrow(message);
  });

  it("keeps a hibernated session's finished downloads and uploads beside its profile, and nothing else of its folders (decision 177)", async () => {
    const session = join(dir, 'session');
    for (const folder of ['profile/Default', 'downloads/inner', 'uploads', 'elsewhere']) await mkdir(join(session, folder), { recursive: true });
    await writeFile(join(session, 'profile', 'Default', 'Cookies'), 'cookies');
    await writeFile(join(session, 'downloads', 'report.pdf'), 'pdf');
    await writeFile(join(session, 'downloads', 'half.pdf.crdownload'), 'half');
    await writeFile(join(session, 'downloads', 'inner', 'deep.txt'), 'deep');
    await writeFile(join(session, 'uploads', 'notes 1.txt'), 'notes');
    await writeFile(join(session, 'uploads', '.rbk-upload-123'), 'temporary');
    await writeFile(join(session, 'elsewhere', 'x'), 'x');
    // As the session's tar packs a state: the profile's paths, then its two folders.
    const archive = execFileSync('tar', ['-c', '-f', '-', '--format=gnu', '-C', join(session, 'profile'), 'Default/Cookies', '-C', session, 'downloads', 'uploads', 'elsewhere']);
    const kept = readArchive(archive, LIMITS, true, keepsHibernationPath('chromium')).entries.filter((e) => e.kind === 'file').map((e) => e.path);
    expect(kept.sort()).toEqual(['Default/Cookies', 'downloads/report.pdf', 'uploads/notes 1.txt']);
    // A saved profile keeps none of them.
    expect(readArchive(archive, LIMITS, true, keepsProfilePath('chromium', true)).entries.filter((e) => e.kind === 'file').map((e) => e.path)).toEqual(['Default/Cookies']);
  });

  it('refuses too many entries, too many bytes, a damaged header and a cut archive', () => {
    const many = crafted(Array.from({ length: 11 }, (_, i) => ({ name: `Default/f${i}`, type: '0', data: Buffer.from('x') })));
    expect(() => readArchive(many, { maxBytes: 1e6, maxEntries: 10 }, true)).toThrow(/more than 10 entries/);
    const big = crafted([{ name: 'Default/Cookies', type: '0', data: Buffer.alloc(4096) }]);
    expect(() => readArchive(big, { maxBytes: 1000, maxEntries: 10 }, true)).toThrow(/more than 1000 bytes/);
    const damaged = Buffer.from(big);
    damaged[10] = 0x41;
    expect(() => readArchive(damaged, LIMITS, true)).toThrow(/checksum/);
    expect(() => readArchive(big.subarray(0, 1024), LIMITS, true)).toThrow(ArchiveRefusal);
  });
});

describe('a sealed profile state', () => {
  const key = randomBytes(32);
  const entries: ArchiveEntry[] = [{ path: 'Default', kind: 'folder', mtime: 0, data: Buffer.alloc(0) }, { path: 'Default/Cookies', kind: 'file', mtime: 0, data: Buffer.from('cookies') }];

  it('opens with its key, profile and version only', async () => {
    const archive = writeArchive(entries);
    const sealed = await sealState(archive, key, 'p1', 'v1');
    expect(await openState(sealed, key, 'p1', 'v1', 1e6)).toEqual(archive);
    await expect(openState(sealed, randomBytes(32), 'p1', 'v1', 1e6)).rejects.toThrow(/does not open with this service's profile key/);
    await expect(openState(sealed, key, 'p2', 'v1', 1e6)).rejects.toThrow(SealedStateError);
    const altered = Buffer.from(sealed);
    altered[altered.length - 1]! ^= 1;
    await expect(openState(altered, key, 'p1', 'v1', 1e6)).rejects.toThrow(SealedStateError);
  });

  it("opens the engine's own state of zeros, which compresses far more than 1,000-fold, within the cap (issue 47, finding 1)", async () => {
    const zeros = writeArchive([{ path: 'Default', kind: 'folder', mtime: 0, data: Buffer.alloc(0) }, { path: 'Default/zeros', kind: 'file', mtime: 0, data: Buffer.alloc(64 * 1024 * 1024) }]);
    const sealed = await sealState(zeros, key, 'p1', 'v1');
    expect(zeros.length / sealed.length).toBeGreaterThan(1000);
    expect((await openState(sealed, key, 'p1', 'v1', 80 * 1024 * 1024)).equals(zeros)).toBe(true);
  });

  it('never grows past the cap: a compression bomb is refused', async () => {
    const bomb = await sealState(Buffer.alloc(64 * 1024 * 1024), key, 'p1', 'v1');
    expect(bomb.length).toBeLessThan(64 * 1024);
    await expect(openState(bomb, key, 'p1', 'v1', 8 * 1024 * 1024)).rejects.toThrow(/would grow past/);
  });
});
