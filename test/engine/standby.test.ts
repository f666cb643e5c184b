// Standby (issue 46, decisions.md 141) with a real engine and real, confined Chromium sessions: a
// session left alone goes into standby (its cgroup freezer says FROZEN, vm/data says `standby`,
// and its processes use no CPU meanwhile); a viewer connecting through the share link wakes it and
// sees the page; the page's timer then runs on, and its clock is the wall clock; a recorded session
// does not go into standby; removing a session in standby ends it with no process left.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordedPlan, startEngine, type EngineFixture } from '../helpers/engine.js';
import { shareLinkOf } from '../helpers/automation.js';
import { connectRfb } from '../helpers/rfb-client.js';
import { waitFor } from '../helpers/session.js';

const FREEZER = '/sys/fs/cgroup/freezer/remote-browser-kit';
const BLUE: [number, number, number] = [30, 60, 200];
/** A page that counts every 100 ms, filling the window with one colour. */
const PAGE = '<!doctype html><title>counting</title><body style="margin:0;background:rgb(30,60,200)"><script>window.began = Date.now(); window.ticks = 0; setInterval(() => window.ticks++, 100);</script></body>';

let fixture: EngineFixture;

beforeAll(async () => {
  const recorded = recordedPlan();
  fixture = await startEngine({ name: 'standby', site: PAGE, ...recorded, config: { ...recorded.config, standby: { afterSeconds: 2 } } });
}, 120_000);

afterAll(async () => {
  await fixture?.close();
});

/** The session's group in the freezer hierarchy (named after its runtime id). */
async function freezerGroup(vmId: string): Promise<string> {
  const runtimeId = (await waitFor(() => fixture.engine.store.session(vmId), (row) => Boolean(row?.runtime_id), 30_000))!.runtime_id!;
  const name = readdirSync(FREEZER).find((entry) => entry.endsWith(`-${runtimeId}`));
  if (!name) throw new Error(`no freezer group for runtime ${runtimeId}`);
  return join(FREEZER, name);
}

const state = (group: string) => readFileSync(join(group, 'freezer.state'), 'utf8').trim();
const pidsOf = (group: string) => readFileSync(join(group, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);

/** CPU time (clock ticks, user + system, every thread) the processes have used so far. */
function cpuTicks(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    total += Number(fields[11]) + Number(fields[12]);
  }
  return total;
}

async function entry(vmId: string): Promise<Record<string, any>> {
  const answer = await fixture.call(`/vm/data?id=${vmId}`);
  return answer.data[0];
}

async function create(body: Record<string, unknown> = {}): Promise<{ id: string; shareUrl: string }> {
  const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/`, ...body });
  expect(created.status).toBe('ok');
  const running = await fixture.call(`/vm/data?id=${created.vmId}&wait=30000`);
  expect(running.data[0].status).toBe('running');
  return { id: created.vmId, shareUrl: created.shareUrl };
}

describe('standby', () => {
  it('freezes a session left alone; a viewer wakes it, and its timer and clock are right', async () => {
    const { id, shareUrl } = await create();
    const group = await freezerGroup(id);
    const asleep = await waitFor(() => entry(id), (e) => e.standby === true, 30_000);
    expect(asleep).toMatchObject({ status: 'running', standby: true });
    expect(state(group)).toBe('FROZEN');

    // No CPU at all while frozen: every process of the session, over a few seconds.
    const pids = pidsOf(group);
    expect(pids.length).toBeGreaterThan(3);
    const before = cpuTicks(pids);
    await new Promise((resolve) => setTimeout(resolve, 3000)); // the window measured, not a wait for a condition
    expect(cpuTicks(pids)).toBe(before);
    expect(state(group)).toBe('FROZEN');

    // A viewer through the share link: woken before it is served, it sees the page.
    const viewer = await connectRfb(`${fixture.engine.url.replace(/^http/, 'ws')}/share/${shareLinkOf(shareUrl)}/rfb`);
    await viewer.waitForPixel(640, 600, BLUE, 10_000);
    expect(state(group)).toBe('THAWED');
    expect((await entry(id)).standby).toBeUndefined();
    expect((await fixture.engine.store.session(id))?.wakes).toBe(1);

    // The page's timer runs on, and its clock is the wall clock (not where it stopped).
    const endpoint = await fixture.call(`/vm/automation?id=${id}`);
    const browser = await chromium.connectOverCDP(endpoint.browserWSEndpoint, { timeout: 20_000 });
    try {
      const page = browser.contexts()[0]!.pages().find((p) => p.url().startsWith(fixture.site.origin))!;
      const read = () => page.evaluate(() => ({ ticks: (window as any).ticks as number, began: (window as any).began as number, now: Date.now() }));
      const first = await read();
      expect(Math.abs(first.now - Date.now())).toBeLessThan(2000);
      const later = await waitFor(read, (seen) => seen.ticks >= first.ticks + 5, 10_000);
      expect(later.ticks).toBeGreaterThanOrEqual(first.ticks + 5);
      // It was frozen for more than three seconds: fewer ticks than the time the page has existed.
      expect(later.ticks * 100).toBeLessThan(later.now - later.began - 2500);
    } finally {
      await browser.close();
      viewer.close();
    }
  }, 120_000);

  it('leaves a recorded session awake, and ends a session in standby with no process left', async () => {
    const [recorded, plain] = await Promise.all([create({ record: true }), create()]);
    const recordedGroup = await freezerGroup(recorded.id);
    const plainGroup = await freezerGroup(plain.id);
    await waitFor(() => entry(plain.id), (e) => e.standby === true, 30_000);
    expect(state(plainGroup)).toBe('FROZEN');
    // Older than the plain one's wait, and still awake: it records.
    expect((await entry(recorded.id)).standby).toBeUndefined();
    expect(state(recordedGroup)).toBe('THAWED');

    const pids = pidsOf(plainGroup);
    expect(pids.length).toBeGreaterThan(3);
    expect((await fixture.call('/vm/remove', { id: plain.id })).status).toBe('ok');
    const left = await waitFor(() => pids.filter((pid) => existsSync(`/proc/${pid}`)), (alive) => alive.length === 0, 20_000);
    expect(left).toEqual([]);
    await waitFor(() => existsSync(plainGroup), (exists) => !exists, 10_000);
    expect(existsSync(plainGroup)).toBe(false);
    expect((await entry(plain.id)).status).toBe('deleted');
    expect((await fixture.call('/vm/remove', { id: recorded.id })).status).toBe('ok');
  }, 120_000);
});
