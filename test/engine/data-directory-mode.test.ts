// The data directory is the engine's alone (issue 47, finding 6; decisions.md 130): a directory an
// earlier engine left 0755 with its database 0644, which another user of the host (nobody, uid
// 65534) could read the replay secret from, is 0700 with its database files 0600 once the engine
// has started on it, and that user reads nothing; `doctor` reports the open directory, then not.
import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { dataDirectoryCheck } from '../../src/engine/doctor.js';
import { createEngine } from '../../src/engine/engine.js';
import { FakeRuntime } from '../helpers/fake-runtime.js';

const NOBODY = 65534;
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const modeOf = async (path: string) => ((await stat(path)).mode & 0o777).toString(8);
/** What nobody reads of `file` (the bytes, or null when refused). */
const readAsNobody = (file: string) => {
  const read = spawnSync('cat', [file], { uid: NOBODY, gid: NOBODY });
  return read.status === 0 ? read.stdout : null;
};
const engineIn = (dir: string, warnings: string[] = []) =>
  createEngine({ dataDir: dir, port: 0, runtime: new FakeRuntime(), config: { warm: { memoryMb: 0, displays: 0 } }, logDestination: new Writable({ write: (line: Buffer, _encoding, done) => { warnings.push(line.toString()); done(); } }) });

describe('a data directory', () => {
  it('that already exists open to others (0755, its database 0644) is closed when the engine starts, and says so', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'rbk-datadir-'));
    dirs.push(parent);
    await chmod(parent, 0o755);
    const dir = join(parent, 'data');
    // An earlier engine's directory: a database with its secrets, then opened up as a umask of 022 or a copy leaves it.
    const first = await engineIn(dir);
    await first.close();
    await chmod(dir, 0o755);
    await chmod(join(dir, 'engine.sqlite'), 0o644);
    expect(readAsNobody(join(dir, 'engine.sqlite'))?.length ?? 0).toBeGreaterThan(0);
    expect(dataDirectoryCheck(dir)).toMatchObject({ ok: false, detail: expect.stringContaining(`${dir} is 0755, ${join(dir, 'engine.sqlite')} is 0644`) });
    expect(dataDirectoryCheck(dir).detail).toContain(`chmod 0700 ${dir} && chmod 0600 ${join(dir, 'engine.sqlite')}`);

    const warnings: string[] = [];
    const engine = await engineIn(dir, warnings);
    try {
      // The database's journal files exist while the engine runs (WAL): they are the engine's alone too.
      await engine.accounts.create({ contact: 'mode@example.com', plans: ['pro'] });
      expect(await modeOf(dir)).toBe('700');
      for (const name of ['engine.sqlite', 'engine.sqlite-wal', 'engine.sqlite-shm']) expect([name, await modeOf(join(dir, name))]).toEqual([name, '600']);
      expect(readAsNobody(join(dir, 'engine.sqlite'))).toBeNull();
      expect(warnings.join('\n')).toContain('the data directory was open to others on this host');
      expect(dataDirectoryCheck(dir)).toEqual({ name: expect.any(String), ok: true, detail: dir });
    } finally {
      await engine.close();
    }
  }, 60_000);

  it('that the engine makes is 0700 with its database files 0600 from the start', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'rbk-datadir-'));
    dirs.push(parent);
    const dir = join(parent, 'fresh');
    const engine = await engineIn(dir);
    try {
      await engine.accounts.create({ contact: 'fresh@example.com', plans: ['pro'] });
      expect(await modeOf(dir)).toBe('700');
      for (const name of ['engine.sqlite', 'engine.sqlite-wal', 'engine.sqlite-shm', 'node-id']) expect([name, await modeOf(join(dir, name))]).toEqual([name, '600']);
    } finally {
      await engine.close();
    }
  }, 60_000);
});
