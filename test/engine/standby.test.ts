// Standby (issue 46, decisions.md 141, 158-160) with a real engine and real, confined Chromium
// sessions: a session left alone goes into standby (its cgroup freezer says FROZEN, vm/data says
// `standby`, and its processes use no CPU meanwhile); a viewer connecting through the share link
// wakes it and sees the page; the page's timer then runs on, and its clock is the wall clock; the
// account's webhook hears each standby and resume; a recorded session does not go into standby;
// removing a session in standby ends it with no process left; the warm pool's slots wait frozen
// and a session takes one thawed; a node at capacity with its sessions in standby admits new ones.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listNodes } from '../../src/engine/cluster/nodes.js';
import { DEFAULT_WARM, parseEngineConfig } from '../../src/engine/config.js';
import { rootKey } from '../../src/engine/runtime/runtime.js';
import type { WebhookEvent } from '../../src/protocol/index.js';
import { verifyWebhook } from '../../src/server/index.js';
import { recordedPlan, startEngine, type EngineFixture } from '../helpers/engine.js';
import { shareLinkOf } from '../helpers/automation.js';
import { connectRfb } from '../helpers/rfb-client.js';
import { waitFor } from '../helpers/session.js';

const FREEZER = '/sys/fs/cgroup/freezer/remote-browser-kit';
const BLUE: [number, number, number] = [30, 60, 200];
/** A page that counts every 100 ms, filling the window with one colour. */
const PAGE = '<!doctype html><title>counting</title><body style="margin:0;background:rgb(30,60,200)"><script>window.began = Date.now(); window.ticks = 0; setInterval(() => window.ticks++, 100);</script></body>';

let fixture: EngineFixture;
/** The account's webhook receiver on loopback: every event, checked against its signature. */
let receiver: Server;
const events: WebhookEvent[] = [];

beforeAll(async () => {
  const recorded = recordedPlan();
  let secret = '';
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      verifyWebhook({ secret, body, signature: String(request.headers['rbk-signature'] ?? '') }).then(
        (event) => (events.push(event), response.writeHead(200).end()),
        () => response.writeHead(400).end(),
      );
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  fixture = await startEngine({
    name: 'standby',
    site: PAGE,
    ...recorded,
    config: {
      ...recorded.config,
      standby: { afterSeconds: 2 },
      // The warm pool's slots wait frozen too: this file tests that, so it has the default pool.
      warm: DEFAULT_WARM,
      node: { capacity: 2 },
      webhooks: { allow: ['127.0.0.0/8'], allowHttp: true, firstRetryMs: 300, retryForMs: 60_000, timeoutMs: 5000 },
    },
  });
  const set = await fixture.call('/user/webhook', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks` });
  expect(set.status).toBe('ok');
  secret = set.webhook.secret;
}, 120_000);

afterAll(async () => {
  await fixture?.close();
  receiver?.close();
});

const eventsOf = (vmId: string, type: string) => events.filter((e) => e.vmId === vmId && e.type === type);

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

    // The account heard it: one session.standby, then one session.resumed, each once.
    await waitFor(() => eventsOf(id, 'session.resumed'), (got) => got.length === 1, 30_000);
    expect(eventsOf(id, 'session.standby')).toHaveLength(1);
    const [standby] = eventsOf(id, 'session.standby');
    const [resumed] = eventsOf(id, 'session.resumed');
    expect(standby).toMatchObject({ vmId: id, status: 'running' });
    expect(resumed).toMatchObject({ vmId: id, status: 'running' });
    expect(Date.parse(resumed!.time)).toBeGreaterThanOrEqual(Date.parse(standby!.time));
    // Left alone again, it goes back into standby: a second event, with an id of its own.
    await waitFor(() => eventsOf(id, 'session.standby'), (got) => got.length === 2, 30_000);
    expect((await entry(id)).standby).toBe(true);
    const ids = new Set(events.filter((e) => e.vmId === id).map((e) => e.id));
    expect(ids.size).toBe(events.filter((e) => e.vmId === id).length);

    // A program wakes it too: its first command (sent as it connects, while the session thaws) is answered.
    const again = await fixture.call(`/vm/automation?id=${id}`);
    const program = await chromium.connectOverCDP(again.browserWSEndpoint, { timeout: 20_000 });
    try {
      const page = program.contexts()[0]!.pages().find((p) => p.url().startsWith(fixture.site.origin))!;
      expect(await page.evaluate(() => document.title)).toBe('counting');
    } finally {
      await program.close();
    }
    expect((await fixture.engine.store.session(id))?.wakes).toBe(2);
    expect((await fixture.call('/vm/remove', { id })).status).toBe('ok');
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

  it('keeps the warm pool\'s slots frozen while they wait; a session takes one thawed', async () => {
    const runtime = fixture.engine.runtime;
    await runtime.warmed(90_000);
    expect(runtime.warmCount().browsers).toBeGreaterThan(0);
    const running = await fixture.engine.store.sessionsWithStatus(['starting', 'running']);
    const ofSessions = new Set(running.map((row) => row.runtime_id));
    // This engine's groups (others may run on the host), but its sessions'.
    const prefix = `${rootKey(runtime.root)}-`;
    const warmGroups = () => readdirSync(FREEZER).filter((name) => name.startsWith(prefix) && ![...ofSessions].some((id) => id && name.endsWith(`-${id}`))).map((name) => join(FREEZER, name));
    // Every ready slot (the warm browser and the warm display) waits frozen.
    await waitFor(() => warmGroups().map(state), (states) => states.length >= 2 && states.every((s) => s === 'FROZEN'), 30_000);
    const frozenBefore = warmGroups();

    const { id, shareUrl } = await create();
    const row = (await fixture.engine.store.session(id))!;
    expect(runtime.get(row.runtime_id!)?.start).toBe('warm-browser');
    const group = await freezerGroup(id);
    // It is one of the slots that waited frozen, running now: its page shows to a viewer.
    expect(frozenBefore).toContain(group);
    expect(state(group)).toBe('THAWED');
    const viewer = await connectRfb(`${fixture.engine.url.replace(/^http/, 'ws')}/share/${shareLinkOf(shareUrl)}/rfb`);
    await viewer.waitForPixel(640, 600, BLUE, 10_000);
    viewer.close();
    expect((await fixture.call('/vm/remove', { id })).status).toBe('ok');
  }, 180_000);

  it('admits new sessions on a node at capacity whose sessions are in standby, and wakes them over it', async () => {
    // The node's capacity is 2: both of its sessions go into standby.
    const [b, c] = [await create(), await create()];
    await waitFor(() => Promise.all([entry(b.id), entry(c.id)]), (both) => both.every((e) => e.standby === true), 30_000);
    // What `remote-browser-kit nodes list` shows.
    const node = async () => (await listNodes(fixture.engine.store, parseEngineConfig({})))[0]!;
    expect(await node()).toMatchObject({ load: 0, standby: 2, capacity: 2 });

    // Two more are admitted (what is awake is what the capacity counts); a third is not.
    const [d, e] = await Promise.all([fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/` }), fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/` })]);
    expect([d.status, e.status]).toEqual(['ok', 'ok']);
    const refused = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/` });
    expect(refused).toEqual({ status: 'error', message: expect.stringMatching(/at capacity/) });
    expect(await node()).toMatchObject({ load: 2, standby: 2 });

    // A viewer still wakes a session in standby (the capacity limits admission, never a wake).
    const viewer = await connectRfb(`${fixture.engine.url.replace(/^http/, 'ws')}/share/${shareLinkOf(b.shareUrl)}/rfb`);
    await viewer.waitForPixel(640, 600, BLUE, 10_000);
    expect((await entry(b.id)).standby).toBeUndefined();
    viewer.close();
    for (const vmId of [b.id, c.id, d.vmId, e.vmId]) expect((await fixture.call('/vm/remove', { id: vmId })).status).toBe('ok');
  }, 180_000);
});
