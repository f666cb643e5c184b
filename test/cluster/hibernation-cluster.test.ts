// Hibernation on a cluster (issue 46, decisions.md 165-166): three engine nodes on one Postgres
// with one profile key. A session logged in on one node is hibernated there (its processes end,
// no node holds it); a viewer connecting to ANOTHER node resumes it on that node, logged in; a
// viewer on the node it first ran on is then forwarded to the node that resumed it. Hibernated
// again, it is resumed by a program through nginx in front of the three nodes (round robin):
// Playwright's connectOverCDP finds its page, logged in. A session on a saved profile, hibernated
// on one node and removed asleep through another, has its profile written there from its
// hibernated state (decisions.md 179): the next session on the profile, on a third node, starts
// logged in.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import { shareLinkOf } from '../helpers/automation.js';
import { hibernationSite, PAGE_COLOURS, type PageReport } from '../helpers/hibernation-site.js';
import { startNginx, type TestNginx } from '../helpers/nginx.js';
import { testDatabase } from '../helpers/postgres.js';
import { connectRfb } from '../helpers/rfb-client.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';

const SECRET = 'hibernation-cluster-secret-0123456789abcdef';
const PROFILE_KEY = randomBytes(32).toString('base64');
const NODES = ['node-a', 'node-b', 'node-c'];
const engines = new Map<string, Engine>();
const dirs: string[] = [];
const reports: PageReport[] = [];
let site: Server;
let origin: string;
let key: string;
let nginx: TestNginx;

beforeAll(async () => {
  site = createServer(hibernationSite(reports));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const database = await testDatabase();
  for (const id of NODES) {
    const dir = await mkdtemp(join(tmpdir(), `rbk-hibernation-${id}-`));
    dirs.push(dir);
    engines.set(id, await createEngine({
      dataDir: dir,
      port: 0,
      config: {
        database,
        node: { id },
        cluster: { secret: SECRET, heartbeatMs: 500, lostAfterMs: 3000 },
        egress: { allow: ['127.0.0.0/8'] },
        rateLimit: { requests: 100_000, perSeconds: 1 },
        log: { level: 'silent', pretty: false },
        warm: { memoryMb: 0, displays: 0 },
        profiles: { key: PROFILE_KEY },
        standby: { afterSeconds: 1, hibernateAfterMinutes: 0.05 },
      },
    }));
  }
  key = (await engines.get('node-a')!.accounts.create({ contact: 'cluster-hibernation@example.com', plans: ['pro'] })).apiKey.key;
  nginx = await startNginx({ upstreams: [...engines.values()].map((engine) => engine.url) });
}, 120_000);

afterAll(async () => {
  await nginx?.stop();
  for (const engine of engines.values()) await engine.close();
  site?.close();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const api = (id: string) => v8Caller(() => engines.get(id)!.url, () => key);
const rfbUrl = (id: string, link: string) => `${engines.get(id)!.url.replace(/^http/, 'ws')}/share/${link}/rfb`;

describe('a hibernated session on a three-node cluster', () => {
  let sessionId = '';

  it('is resumed by a viewer on another node, logged in, and reached through the node it first ran on', async () => {
    const created = await api('node-a')('/vm/create', { browser: 'chromium', url: `${origin}/login` });
    expect(created.status, JSON.stringify(created)).toBe('ok');
    const id = created.vmId as string;
    const link = shareLinkOf(created.shareUrl);
    expect((await api('node-a')(`/vm/data?id=${id}&wait=30000`)).data[0].status).toBe('running');
    const ranOn = (await engines.get('node-a')!.store.session(id))!.node_id!;
    const asleep = await waitFor(async () => (await api('node-b')(`/vm/data?id=${id}`)).data[0], (e) => e.hibernated === true, 60_000);
    expect(asleep).toMatchObject({ status: 'running', hibernated: true });
    expect((await engines.get('node-a')!.store.session(id))!.node_id).toBeNull();
    expect(engines.get(ranOn)!.runtime.list()).toHaveLength(0);

    const other = NODES.find((node) => node !== ranOn)!;
    const since = reports.length;
    const viewer = await connectRfb(rfbUrl(other, link), 60_000);
    try {
      await viewer.waitForPixel(640, 600, PAGE_COLOURS.home, 60_000);
      expect((await engines.get(other)!.store.session(id))!.node_id).toBe(other);
      expect(engines.get(other)!.runtime.list()).toHaveLength(1);
      const report = await waitFor(() => reports.slice(since).find((r) => r.page === 'home'), Boolean, 20_000);
      expect(report?.cookie).toContain('login=alice');
    } finally {
      viewer.close();
    }
    // The node it first ran on forwards to the node that resumed it (it is awake there a moment more).
    const forwarded = await connectRfb(rfbUrl(ranOn, link), 60_000);
    try {
      await forwarded.waitForPixel(640, 600, PAGE_COLOURS.home, 60_000);
      expect(engines.get(ranOn)!.runtime.list()).toHaveLength(0);
    } finally {
      forwarded.close();
    }
    sessionId = id;
  }, 240_000);

  it('is resumed by a program through nginx, on whichever node nginx picks, and finds its page logged in', async () => {
    const id = sessionId;
    const balanced = v8Caller(() => nginx.url, () => key);
    await waitFor(async () => (await balanced(`/vm/data?id=${id}`)).data[0], (e) => e?.hibernated === true, 60_000);
    const answer = await balanced(`/vm/automation?id=${id}`);
    expect(answer.status, JSON.stringify(answer)).toBe('ok');
    // The address names the node that answered; a program behind the balancer uses the balancer's.
    const endpoint = new URL(answer.browserWSEndpoint);
    const through = `${nginx.url.replace(/^http/, 'ws')}${endpoint.pathname}${endpoint.search}`;
    const browser = await chromium.connectOverCDP(through, { timeout: 60_000 });
    try {
      const page = await waitFor(() => browser.contexts().flatMap((context) => context.pages()).find((p) => p.url().endsWith('/home')), Boolean, 20_000);
      expect(await page!.evaluate(() => document.cookie)).toContain('login=alice');
    } finally {
      await browser.close();
    }
    const row = (await engines.get('node-a')!.store.session(id))!;
    expect(NODES).toContain(row.node_id);
    expect(row.hibernated).toBe(false);
    expect((await balanced('/vm/remove', { id })).status).toBe('ok');
  }, 240_000);

  it('on a saved profile, removed asleep through another node, writes its profile there; the next session on it, on a third node, is logged in', async () => {
    const profileId = (await api('node-a')('/profile/create', { name: 'Asleep', browser: 'chromium' })).profile.id as string;
    const since = reports.length;
    const created = await api('node-a')('/vm/create', { browser: 'chromium', url: `${origin}/login`, profile: { id: profileId } });
    expect(created.status, JSON.stringify(created)).toBe('ok');
    const id = created.vmId as string;
    expect((await api('node-a')(`/vm/data?id=${id}&wait=30000`)).data[0].status).toBe('running');
    const loggedIn = await waitFor(() => reports.slice(since).find((r) => r.page === 'home'), Boolean, 30_000);
    expect(loggedIn?.cookie).toContain('login=alice');
    const ranOn = (await engines.get('node-a')!.store.session(id))!.node_id!;
    await waitFor(async () => (await api(ranOn)(`/vm/data?id=${id}`)).data[0], (e) => e.hibernated === true, 60_000);
    expect(engines.get(ranOn)!.runtime.list()).toHaveLength(0);
    // Nothing written while it sleeps: the profile is written once, at the end.
    expect((await api(ranOn)(`/profile/data?id=${profileId}`)).profiles[0].bytes).toBe(0);

    const [other, third] = NODES.filter((node) => node !== ranOn) as [string, string];
    expect((await api(other)('/vm/remove', { id })).status).toBe('ok');
    expect(await waitFor(async () => (await api(other)(`/vm/data?id=${id}`)).data[0].status, (status) => status === 'deleted', 60_000)).toBe('deleted');
    const saved = await waitFor(async () => (await api(third)(`/profile/data?id=${profileId}`)).profiles[0], (profile) => profile.bytes > 0 || profile.save_error !== undefined, 60_000);
    expect(saved.save_error).toBeUndefined();
    expect(saved.bytes).toBeGreaterThan(0);
    // No node resumed it to save it: it was written from its hibernated state.
    for (const engine of engines.values()) expect(engine.runtime.list()).toHaveLength(0);

    const before = reports.length;
    const next = await api(third)('/vm/create', { browser: 'chromium', url: `${origin}/home`, profile: { id: profileId } });
    expect(next.status, JSON.stringify(next)).toBe('ok');
    expect((await api(third)(`/vm/data?id=${next.vmId}&wait=30000`)).data[0].status).toBe('running');
    const report = await waitFor(() => reports.slice(before).find((r) => r.page === 'home'), Boolean, 30_000);
    expect(report?.cookie).toContain('login=alice');
    expect((await api(third)('/vm/remove', { id: next.vmId })).status).toBe('ok');
  }, 240_000);
});
