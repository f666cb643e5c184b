// `npm run bench -- profiles` (issue 34): what a saved profile costs a session, through a real
// engine (SQLite) and confined Chromium. create -> running with a 20 MB profile (20 MB of
// IndexedDB that does not compress, the worst case) against without one, warm (the default pool:
// a warm display for the profile, a warm browser without) and cold (no pool); the save at the
// session's end (remove -> deleted with the save against without); and, for a typical profile
// (a site signed in with a cookie, localStorage and IndexedDB, three tabs), the bytes stored
// against the size of the browser's profile directory. Then the 300 MB profile's memory and times
// (profiles-large.ts; `RBK_BENCH_PROFILES=large` runs that part alone).
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type Engine } from '../src/engine/engine.js';
import { ProfileStore } from '../src/engine/profiles/profile-store.js';
import { largeProfileBench } from './profiles-large.js';
import { percentile, report } from './stats.js';

const RUNS = 5;
/** The extra state of the big profile, in MB: `RBK_BENCH_PROFILE_MB` (default 20; 0 measures a typical small profile). */
const BIG_MB = Number(process.env.RBK_BENCH_PROFILE_MB ?? 20);

/** /set stores a cookie, localStorage and an IndexedDB record; /big 20 MB more in IndexedDB; each says "stored" in its title. */
const PAGE = (big: boolean) => `<!doctype html><title>storing</title><script>
document.cookie = 'signed_in=yes; Max-Age=864000; Path=/';
localStorage.setItem('user', 'someone');
const open = indexedDB.open('site', 1);
open.onupgradeneeded = () => open.result.createObjectStore('things');
open.onsuccess = () => {
  const tx = open.result.transaction('things', 'readwrite');
  tx.objectStore('things').put('profile', 'kept');
  if (${big}) for (let i = 0; i < ${BIG_MB}; i++) { const part = new Uint8Array(1024 * 1024); for (let j = 0; j < part.length; j += 65536) crypto.getRandomValues(part.subarray(j, j + 65536)); tx.objectStore('things').put(part, 'big' + i); }
  tx.oncomplete = () => { document.title = 'stored'; fetch('/stored'); };
};
</script>`;

export async function profilesBench(): Promise<void> {
  if (process.env.RBK_BENCH_PROFILES !== 'large') await smallerProfilesBench();
  await largeProfileBench();
}

async function smallerProfilesBench(): Promise<void> {
  let stored = 0;
  const site = createServer((request, response) => {
    if (request.url === '/stored') {
      stored++;
      return void response.writeHead(204).end();
    }
    response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE(request.url?.startsWith('/big') ?? false));
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const dir = await mkdtemp(join(tmpdir(), 'rbk-profiles-bench-'));
  const engines: Engine[] = [];
  try {
    for (const warm of [true, false]) {
      const engine = await createEngine({
        dataDir: join(dir, warm ? 'warm' : 'cold'),
        port: 0,
        config: { egress: { allow: ['127.0.0.1/32'] }, rateLimit: { requests: 100_000, perSeconds: 1 }, log: { level: 'silent', pretty: false }, ...(warm ? {} : { warm: { memoryMb: 0, displays: 0 } }) } as never,
      });
      engines.push(engine);
      const key = (await engine.accounts.create({ contact: 'bench@example.com', plans: ['team'] })).apiKey.key;
      const api = async (path: string, body?: unknown) =>
        (await (await fetch(`${engine.url}/v8${path}`, { method: body === undefined ? 'GET' : 'POST', headers: { authorization: `Bearer ${key}` }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })).json()) as Record<string, any>;
      const until = async (vmId: string, status: string) => {
        for (let i = 0; i < 600; i++) {
          const now = (await api(`/vm/data?id=${vmId}&wait=5000`)).data?.[0]?.status;
          if (now === status) return;
          if (status === 'running' && now !== 'starting') throw new Error(`the session is ${now}`);
          await new Promise((r) => setTimeout(r, 20));
        }
        throw new Error(`the session never became ${status}`);
      };
      const settle = async () => {
        if (warm) await engine.runtime.warmed(60_000).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 1500));
      };

      // The 20 MB profile, made once.
      const profileId = (await api('/profile/create', { name: 'big', browser: 'chromium' })).profile.id;
      const before = stored;
      const maker = await api('/vm/create', { browser: 'chromium', url: `${origin}/big`, profile: { id: profileId } });
      while (stored === before) await new Promise((r) => setTimeout(r, 100));
      await api('/vm/remove', { id: maker.vmId });
      await until(maker.vmId, 'deleted');
      const row = (await new ProfileStore(engine.store).get(profileId))!;
      report('profiles', 'big_profile_bytes', row.bytes / 1024 / 1024, 'MB', { stored_MB: Math.round((row.stored_bytes / 1024 / 1024) * 10) / 10 });

      const starts: Record<'without' | 'with', number[]> = { without: [], with: [] };
      const ends: Record<'without' | 'with', number[]> = { without: [], with: [] };
      for (let run = 0; run < RUNS; run++) {
        for (const kind of ['without', 'with'] as const) {
          await settle();
          const began = performance.now();
          const created = await api('/vm/create', { browser: 'chromium', url: `${origin}/plain`, ...(kind === 'with' ? { profile: { id: profileId } } : {}) });
          await until(created.vmId, 'running');
          starts[kind].push(performance.now() - began);
          await new Promise((r) => setTimeout(r, 1000));
          const ending = performance.now();
          await api('/vm/remove', { id: created.vmId });
          await until(created.vmId, 'deleted');
          ends[kind].push(performance.now() - ending);
        }
      }
      const mode = warm ? 'warm' : 'cold';
      for (const kind of ['without', 'with'] as const) {
        report('profiles', `create_to_running_${mode}_${kind}_profile_ms`, percentile(starts[kind], 50), 'ms', { p90: Math.round(percentile(starts[kind], 90)), runs: RUNS, profile_MB: kind === 'with' ? Math.round(row.bytes / 1024 / 1024) : 0 });
        report('profiles', `remove_to_deleted_${mode}_${kind}_profile_ms`, percentile(ends[kind], 50), 'ms', { p90: Math.round(percentile(ends[kind], 90)), runs: RUNS, measured: kind === 'with' ? 'the browser closed cleanly, packed, checked, compressed, encrypted and written' : 'no save' });
      }
    }

    // A typical profile: a site signed in (cookie, localStorage, IndexedDB) and three tabs.
    const engine = engines[0]!;
    const key = (await engine.accounts.create({ contact: 'typical@example.com', plans: ['team'] })).apiKey.key;
    const api = async (path: string, body?: unknown) =>
      (await (await fetch(`${engine.url}/v8${path}`, { method: body === undefined ? 'GET' : 'POST', headers: { authorization: `Bearer ${key}` }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })).json()) as Record<string, any>;
    const profileId = (await api('/profile/create', { name: 'typical', browser: 'chromium' })).profile.id;
    const before = stored;
    const created = await api('/vm/create', { browser: 'chromium', url: `${origin}/set`, profile: { id: profileId, tabs: true } });
    while (stored === before) await new Promise((r) => setTimeout(r, 100));
    const session = engine.runtime.get((await engine.store.session(created.vmId))!.runtime_id!)!;
    for (const tab of [2, 3]) await session.control!.client.send('Target.createTarget', { url: `${origin}/set?tab=${tab}` });
    while (stored < before + 3) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 1000));
    // Measuring only: the bench reads the session's directory size as root; the engine never does.
    const directory = Number(execFileSync('du', ['-sb', session.sandbox.hostPath(`${session.sandbox.dir}/profile`)], { encoding: 'utf8' }).split('\t')[0]);
    await api('/vm/remove', { id: created.vmId });
    for (let i = 0; i < 300 && (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status !== 'deleted'; i++) await new Promise((r) => setTimeout(r, 100));
    const row = (await new ProfileStore(engine.store).get(profileId))!;
    report('profiles', 'typical_profile_stored_bytes', row.stored_bytes / 1024, 'KB', { kept_unpacked_KB: Math.round(row.bytes / 1024), profile_directory_KB: Math.round(directory / 1024), measured: 'Chromium, one site signed in (cookie, localStorage, IndexedDB), three tabs, tabs: true' });
  } finally {
    for (const engine of engines) await engine.close();
    site.close();
    await rm(dir, { recursive: true, force: true });
  }
}
