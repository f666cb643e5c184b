// Saved profiles on a cluster (issue 34): three engine nodes on one Postgres with one profile key.
// A profile saved by a session on one node is restored by a session on another (cookie,
// localStorage, IndexedDB); two creates at once on one profile, sent to two nodes, start exactly
// one session (the database decides); a node on Postgres without a key refuses profile calls.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import { testDatabase } from '../helpers/postgres.js';
import { serveProfileSite } from '../helpers/profile-site.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';

const SECRET = 'profiles-cluster-secret-0123456789abcdef';
const PROFILE_KEY = randomBytes(32).toString('base64');
const engines = new Map<string, Engine>();
const dirs: string[] = [];
let database: string;
let site: Awaited<ReturnType<typeof serveProfileSite>>;
let key: string;

async function node(id: string, profileKey: string | null): Promise<Engine> {
  const dir = await mkdtemp(join(tmpdir(), `rbk-profiles-${id}-`));
  dirs.push(dir);
  const engine = await createEngine({
    dataDir: dir,
    port: 0,
    config: {
      database,
      node: { id },
      cluster: { secret: SECRET, heartbeatMs: 500, lostAfterMs: 3000 },
      egress: { allow: ['127.0.0.0/8'] },
      log: { level: 'silent', pretty: false },
      warm: { memoryMb: 0, displays: 0 },
      profiles: { key: profileKey },
    },
  });
  engines.set(id, engine);
  return engine;
}

const api = (id: string) => v8Caller(() => engines.get(id)!.url, () => key);

beforeAll(async () => {
  site = await serveProfileSite('clustered');
  database = await testDatabase();
  for (const id of ['node-a', 'node-b', 'node-c']) await node(id, PROFILE_KEY);
  key = (await engines.get('node-a')!.accounts.create({ contact: 'cluster-profiles@example.com', plans: ['pro'] })).apiKey.key;
}, 120_000);

afterAll(async () => {
  for (const engine of engines.values()) await engine.close();
  site?.server.close();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** Starts a session through `via` on `page`, waits for the page's report, ends it (its save included); answers the node it ran on. */
async function visit(via: string, page: 'set' | 'read', profileId: string): Promise<{ node: string; report: (typeof site.reports)[number] }> {
  const before = site.reports.length;
  const created = await api(via)('/vm/create', { browser: 'chromium', url: `${site.origin}/${page}`, profile: { id: profileId } });
  expect(created.status, JSON.stringify(created)).toBe('ok');
  const report = await waitFor(() => site.reports.slice(before).find((r) => r.page === page), Boolean, 60_000);
  expect(report).toBeDefined();
  expect(await waitFor(async () => (await api(via)(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
  const row = await engines.get(via)!.store.session(created.vmId);
  expect((await api(via)('/vm/remove', { id: created.vmId })).status).toBe('ok');
  expect(await waitFor(async () => (await api(via)(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'deleted', 60_000)).toBe('deleted');
  return { node: row!.node_id!, report: report! };
}

describe('saved profiles on a three-node cluster', () => {
  let profileId: string;

  it('are saved on one node and restored on another', async () => {
    profileId = (await api('node-a')('/profile/create', { name: 'Everywhere', browser: 'chromium' })).profile.id;
    const saved = await visit('node-a', 'set', profileId);
    // The node that saved it takes no new sessions: the restore runs elsewhere.
    await engines.get('node-a')!.store.setNodeState(saved.node, 'draining');
    try {
      const restored = await visit('node-b', 'read', profileId);
      expect(restored.node).not.toBe(saved.node);
      expect(restored.report).toMatchObject({ cookie: expect.stringContaining('kept=clustered'), local: 'clustered', indexed: 'clustered' });
    } finally {
      await engines.get('node-a')!.store.setNodeState(saved.node, 'active');
    }
  }, 180_000);

  it('run one session at a time: two creates at once through two nodes start exactly one', async () => {
    const both = await Promise.all(['node-b', 'node-c'].map((via) => api(via)('/vm/create', { browser: 'chromium', url: `${site.origin}/read`, profile: { id: profileId } })));
    expect(both.map((c) => c.status).sort()).toEqual(['denied', 'ok']);
    const running = both.find((c) => c.status === 'ok')!;
    expect(await waitFor(async () => (await api('node-a')(`/vm/data?id=${running.vmId}`)).data?.[0]?.status, (s) => s === 'running', 60_000)).toBe('running');
    expect((await api('node-a')('/vm/remove', { id: running.vmId })).status).toBe('ok');
  }, 120_000);

  it('are renamed, counted and removed on Postgres through any node', async () => {
    expect(await api('node-c')('/profile/rename', { id: profileId, name: 'Everywhere 2' })).toMatchObject({ status: 'ok', profile: { id: profileId, name: 'Everywhere 2' } });
    const spare = (await api('node-b')('/profile/create', { name: 'Spare', browser: 'firefox-esr' })).profile.id;
    const quota = await api('node-a')('/user/quota');
    expect(quota).toMatchObject({ profile_limit: 10, profiles_used: 2, profile_mb_limit: 1024 });
    expect(quota.profile_mb_used).toBeGreaterThan(0);
    expect(await api('node-c')('/profile/remove', { id: spare })).toEqual({ status: 'ok' });
    expect((await api('node-b')('/profile/data')).profiles.map((p: { name: string }) => p.name)).toEqual(['Everywhere 2']);
  });

  it('are refused with a clear message by a node on Postgres without a profile key', async () => {
    const keyless = await node('node-keyless', null);
    const answer = await v8Caller(() => keyless.url, () => key)('/profile/create', { name: 'x', browser: 'chromium' });
    expect(answer).toEqual({ status: 'error', message: 'saved profiles are off on this service: a cluster needs one profile key on every node (configuration profiles.key or RBK_PROFILE_KEY); its operator must set it' });
  }, 60_000);
});
