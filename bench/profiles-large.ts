// `npm run bench -- profiles`, its large part (issue 47, decisions.md 138): what a 300 MB saved
// profile costs the engine's memory and time, through a real engine (SQLite) and confined
// Chromium. Each session's profile directory gets 300 MB of random bytes (they do not compress:
// the worst case), written inside the session as its own uid (dd from /dev/urandom under the exec
// guard, as the session's programs run; the engine opens no path of a session). Then: the
// engine's peak RSS and the time for one save (remove -> deleted: the browser's orderly close,
// tar in the session, the checks, brotli, AES-GCM and the database in chunks), for the restore
// (create -> running: the check before the create, the streamed restore, Chromium on the
// restored profile), and for four saves at once (two run at a time: profile-transfers.ts). The
// engine runs in this process: its peak RSS is the kernel's high-water mark (VmHWM), reset
// before each figure (/proc/self/clear_refs). `RBK_BENCH_PROFILES=large` runs this part alone;
// `RBK_BENCH_LARGE_MB` changes the 300.
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PLANS } from '../src/engine/config.js';
import { createEngine, type Engine } from '../src/engine/engine.js';
import { ProfileStore } from '../src/engine/profiles/profile-store.js';
import { report } from './stats.js';

const MB = 1024 * 1024;
const LARGE_MB = Number(process.env.RBK_BENCH_LARGE_MB ?? 300);
const AT_ONCE = 4;

/** This process's resident memory now and at its high-water mark, in MB. */
function memory(): { rss: number; peak: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1]) / 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/** Sets the high-water mark to the resident memory now (Linux: "5" > clear_refs), after a collection if one is offered. */
function resetPeak(): number {
  (globalThis as { gc?: () => void }).gc?.();
  writeFileSync('/proc/self/clear_refs', '5');
  return memory().rss;
}

export async function largeProfileBench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'rbk-profiles-large-bench-'));
  const team = DEFAULT_PLANS.find((plan) => plan.id === 'team')!;
  let engine: Engine | undefined;
  try {
    engine = await createEngine({
      dataDir: dir,
      port: 0,
      config: {
        rateLimit: { requests: 100_000, perSeconds: 1 },
        log: { level: 'warn', pretty: false },
        warm: { memoryMb: 0, displays: 0 },
        // One profile may hold the 300 MB and what Chromium keeps beside them; the plan has no total.
        profiles: { maxProfileMb: LARGE_MB + 100 },
        plans: [...DEFAULT_PLANS, { ...team, id: 'bench-large', name: 'Bench', profile_limit: 10, profile_mb_limit: null }],
      } as never,
    });
    const running = engine;
    const key = (await running.accounts.create({ contact: 'large@example.com', plans: ['bench-large'] })).apiKey.key;
    const api = async (path: string, body?: unknown): Promise<Record<string, any>> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return (await (await fetch(`${running.url}/v8${path}`, { method: body === undefined ? 'GET' : 'POST', headers: { authorization: `Bearer ${key}` }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })).json()) as Record<string, any>;
        } catch (error) {
          // A read again, when an engine that held its event loop (the engine before decisions.md 138 did) dropped the connection.
          if (body !== undefined || attempt === 3) throw error;
        }
      }
    };
    const until = async (vmId: string, status: string) => {
      for (const deadline = Date.now() + 900_000; Date.now() < deadline; ) {
        const now = (await api(`/vm/data?id=${vmId}&wait=5000`)).data?.[0]?.status;
        if (now === status) return;
        if (status === 'running' && now !== 'starting') throw new Error(`the session is ${now}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`the session never became ${status}`);
    };
    const start = async (profileId: string) => {
      const created = await api('/vm/create', { browser: 'chromium', profile: { id: profileId } });
      if (created.status !== 'ok') throw new Error(JSON.stringify(created));
      await until(created.vmId, 'running');
      return created.vmId as string;
    };
    /** Writes LARGE_MB random bytes into the session's profile as the session's uid. */
    const fill = async (vmId: string) => {
      const session = running.runtime.get((await running.store.session(vmId))!.runtime_id!)!;
      const folder = `${session.sandbox.dir}/profile/Default/File System/bench`;
      await session.sandbox.run('/usr/bin/mkdir', ['-p', folder], session.sandbox.env, 10_000);
      await session.sandbox.run('/usr/bin/dd', ['if=/dev/urandom', `of=${folder}/random.bin`, 'bs=1M', `count=${LARGE_MB}`, 'status=none'], session.sandbox.env, 300_000);
    };
    const rows = new ProfileStore(running.store);
    const saved = async (profileId: string) => {
      const row = (await rows.get(profileId))!;
      if (row.save_error || row.bytes < LARGE_MB * MB) throw new Error(`the save was not kept: ${row.save_error ?? `${row.bytes} bytes`}`);
      return row;
    };
    const profiles: string[] = [];
    for (let i = 0; i < AT_ONCE; i++) profiles.push((await api('/profile/create', { name: `large ${i}`, browser: 'chromium' })).profile.id);

    // One save.
    const first = await start(profiles[0]!);
    await fill(first);
    await new Promise((r) => setTimeout(r, 2000));
    let before = resetPeak();
    let began = performance.now();
    await api('/vm/remove', { id: first });
    await until(first, 'deleted');
    const saveMs = performance.now() - began;
    let peak = memory().peak;
    const row = await saved(profiles[0]!);
    report('profiles', 'large_save_engine_peak_rss_MB', peak, 'MB', { before_MB: Math.round(before), added_MB: Math.round(peak - before), profile_MB: Math.round(row.bytes / MB), stored_MB: Math.round(row.stored_bytes / MB) });
    report('profiles', 'large_save_ms', saveMs, 'ms', { measured: "remove -> deleted: Chromium's orderly close, tar in the session, the checks, brotli, AES-GCM, the database in chunks" });

    // Its restore.
    await new Promise((r) => setTimeout(r, 2000));
    before = resetPeak();
    began = performance.now();
    const restored = await start(profiles[0]!);
    const restoreMs = performance.now() - began;
    peak = memory().peak;
    report('profiles', 'large_restore_ms', restoreMs, 'ms', { measured: 'create -> running: the check before the create, the streamed restore into the session, Chromium on the restored profile', profile_MB: Math.round(row.bytes / MB) });
    report('profiles', 'large_restore_engine_peak_rss_MB', peak, 'MB', { before_MB: Math.round(before), added_MB: Math.round(peak - before) });

    // Four saves at once: the restored session and three more, each with its own 300 MB.
    const sessions = [restored];
    for (const profileId of profiles.slice(1)) {
      const vmId = await start(profileId);
      await fill(vmId);
      sessions.push(vmId);
    }
    await new Promise((r) => setTimeout(r, 2000));
    before = resetPeak();
    began = performance.now();
    await Promise.all(sessions.map((vmId) => api('/vm/remove', { id: vmId })));
    await Promise.all(sessions.map((vmId) => until(vmId, 'deleted')));
    const allMs = performance.now() - began;
    peak = memory().peak;
    for (const profileId of profiles) await saved(profileId);
    report('profiles', 'large_four_saves_engine_peak_rss_MB', peak, 'MB', { before_MB: Math.round(before), added_MB: Math.round(peak - before), saves: AT_ONCE, profile_MB_each: LARGE_MB });
    report('profiles', 'large_four_saves_ms', allMs, 'ms', { measured: `${AT_ONCE} sessions removed at once -> all deleted, their saves two at a time` });
  } finally {
    await engine?.close();
    await rm(dir, { recursive: true, force: true });
  }
}
