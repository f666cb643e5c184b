// Standby's faults (issue 46, decisions.md 141, 158, 160) with real, confined Chromium sessions:
// an engine that dies while a session sleeps leaves it frozen, and the next start thaws and ends
// every process of it (none left frozen); many viewers arriving at once on a sleeping session wake
// it once; a session whose thaw the kernel refuses ends with the reason, its viewer told it no
// longer runs and the account's vm/data saying why (the refusal is the one stand-in: a kernel that
// does not thaw cannot be made on purpose).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findMarkedProcesses } from '../../src/engine/runtime/sandbox/processes.js';
import { SessionRuntime } from '../../src/engine/runtime/runtime.js';
import { shareLinkOf } from '../helpers/automation.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { connectRfb } from '../helpers/rfb-client.js';
import { waitFor } from '../helpers/session.js';

const FREEZER = '/sys/fs/cgroup/freezer/remote-browser-kit';
const ORANGE: [number, number, number] = [230, 120, 20];
const PAGE = '<!doctype html><title>orange</title><body style="margin:0;background:rgb(230,120,20)"></body>';

const groupOf = (runtimeId: string) => readdirSync(FREEZER).filter((name) => name.endsWith(`-${runtimeId}`)).map((name) => join(FREEZER, name))[0];
const stateOf = (group: string) => readFileSync(join(group, 'freezer.state'), 'utf8').trim();

describe('an engine that died while a session slept', () => {
  it('leaves it frozen; the next start thaws it and ends every process, leaving no group behind', async () => {
    const root = await mkdtemp(join(tmpdir(), 'rbk-standby-left-'));
    const { runtime: first } = await SessionRuntime.open({ root, egress: { allow: [] } });
    const left = await first.startSession({ browser: 'chromium', language: 'en', layout: 'us' });
    expect(await first.freeze(left.id, true)).toBe(true);
    const group = groupOf(left.id)!;
    expect(stateOf(group)).toBe('FROZEN');
    const pids = readFileSync(join(group, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
    expect(pids.length).toBeGreaterThan(3);
    // The engine "dies" (kill -9): nothing is stopped or thawed. A new runtime on the same directory cleans up.
    await left.control!.close();
    await left.egress.close();
    const { runtime: second, reaped } = await SessionRuntime.open({ root, egress: { allow: [] } });
    try {
      expect(reaped.directories).toBe(1);
      expect(reaped.processes).toBeGreaterThan(0);
      const alive = await waitFor(() => pids.filter((pid) => existsSync(`/proc/${pid}`)), (still) => still.length === 0, 20_000);
      expect(alive).toEqual([]);
      expect((await findMarkedProcesses({ dir: left.dir })).filter((p) => !p.zombie)).toEqual([]);
      expect(existsSync(group)).toBe(false);
    } finally {
      await second.close();
      await rm(root, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('waking', () => {
  let fixture: EngineFixture;

  beforeAll(async () => {
    fixture = await startEngine({ name: 'standby-faults', site: PAGE, config: { standby: { afterSeconds: 2 } } });
  }, 180_000);

  afterAll(async () => {
    await fixture?.close();
  });

  const entry = async (id: string) => (await fixture.call(`/vm/data?id=${id}`)).data[0] as Record<string, any>;

  async function sleepingSession(): Promise<{ id: string; link: string; runtimeId: string }> {
    const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/` });
    expect(created.status).toBe('ok');
    expect((await fixture.call(`/vm/data?id=${created.vmId}&wait=30000`)).data[0].status).toBe('running');
    await waitFor(() => entry(created.vmId), (e) => e.standby === true, 30_000);
    return { id: created.vmId, link: shareLinkOf(created.shareUrl), runtimeId: (await fixture.engine.store.session(created.vmId))!.runtime_id! };
  }

  const rfbUrl = (link: string) => `${fixture.engine.url.replace(/^http/, 'ws')}/share/${link}/rfb`;

  it('wakes a session once when many viewers arrive at once, and each sees it', async () => {
    const { id, link, runtimeId } = await sleepingSession();
    expect(stateOf(groupOf(runtimeId)!)).toBe('FROZEN');
    const viewers = await Promise.all(Array.from({ length: 5 }, () => connectRfb(rfbUrl(link), 30_000)));
    try {
      await Promise.all(viewers.map((viewer) => viewer.waitForPixel(640, 600, ORANGE, 20_000)));
      expect((await fixture.engine.store.session(id))?.wakes).toBe(1);
      expect(stateOf(groupOf(runtimeId)!)).toBe('THAWED');
    } finally {
      for (const viewer of viewers) viewer.close();
    }
    expect((await fixture.call('/vm/remove', { id })).status).toBe('ok');
  }, 180_000);

  it('ends a session the kernel does not thaw, with the reason, and tells its viewer it no longer runs', async () => {
    const { id, link, runtimeId } = await sleepingSession();
    const runtime = fixture.engine.runtime;
    const freeze = runtime.freeze.bind(runtime);
    // The kernel's refusal, for this session's thaw only (the stop that follows thaws for real).
    let refused = false;
    runtime.freeze = async (rid: string, frozen: boolean) => {
      if (rid === runtimeId && !frozen && !refused) {
        refused = true;
        throw new Error("the session's processes were not thawed within 5000 ms");
      }
      return freeze(rid, frozen);
    };
    try {
      const viewer = await connectRfb(rfbUrl(link), 30_000).catch((error: Error) => error);
      // The viewer is closed as for a session that no longer runs (at once, or before its first frame).
      if (!(viewer instanceof Error)) {
        await expect(viewer.waitForPixel(640, 600, ORANGE, 10_000)).rejects.toThrow();
        viewer.close();
      }
      const ended = await waitFor(() => entry(id), (e) => e.status !== 'running', 20_000);
      expect(ended.status).toBe('suspended');
      const row = (await fixture.engine.store.session(id))!;
      expect(row.end_reason).toMatch(/could not be woken from standby: the session's processes were not thawed/);
      // Never left a frozen corpse: its processes end and its group goes.
      await waitFor(() => groupOf(runtimeId), (group) => group === undefined, 20_000);
      expect(groupOf(runtimeId)).toBeUndefined();
    } finally {
      runtime.freeze = freeze;
    }
  }, 180_000);
});
