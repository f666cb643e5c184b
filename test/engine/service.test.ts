// The service in-process on the fake runtime, with a clock the test moves: limits enforced over
// time, crashes, start failures, exit locations and residential connections (the upstream and
// time zone each session is started with, the bytes it is charged). That a real browser keeps the
// zone and leaves through the upstream it is given is runtime.test.ts's and warm-pool.test.ts's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionSpec } from '../../src/engine/runtime/index.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';

let fixture: EngineFixture<FakeRuntime>;
let pageUrl: string;
/** The operator's default zone in this test: not the host's own (UTC), so a test can tell them apart. */
const DEFAULT_ZONE = 'America/Sao_Paulo';
/** Berlin's exit and the residential route: the service hands the address to the runtime, which is what is checked. */
const UPSTREAM = 'http://127.0.0.1:9';
let offset = 0;

const plan = { running_session_limit: 3, cycle_session_limit: null, location_access: true, programmatic_access: true, max_session_minutes: 60, idle_timeout_minutes: 10 };

const call = (path: string, body?: unknown, version = 'v8') => version === 'v8' ? fixture.call(path, body) : v7(path, body);

async function v7(path: string, body?: unknown): Promise<Record<string, any>> {
  const response = await fetch(`${fixture.engine.url}/v7${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${fixture.account.key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await response.json()) as Record<string, any>;
}

async function statusOf(vmId: string, until: (status: string) => boolean, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let status = '';
  while (Date.now() < deadline) {
    status = (await call(`/vm/data?id=${vmId}`)).data[0]?.status ?? 'missing';
    if (until(status)) return status;
    await new Promise((r) => setTimeout(r, 50));
  }
  return status;
}

/** What the service asked the runtime to start the session `vmId` with (it runs). */
async function specOf(vmId: string): Promise<SessionSpec> {
  const runtimeId = (await fixture.engine.store.session(vmId))!.runtime_id!;
  return fixture.engine.runtime.get(runtimeId)!.spec;
}

beforeAll(async () => {
  fixture = await startEngine({
    name: 'service',
    runtime: 'fake',
    now: () => Date.now() + offset,
    plans: ['travel'],
    config: {
      plans: [{ id: 'travel', name: 'Travel', residential_cycle_mb_limit: 1, ...plan }],
      egress: { allow: ['127.0.0.0/8', '::1/128'] },
      locations: [
        { code: 'de', name: 'Germany', default: 'de-ber', cities: [{ code: 'de-ber', location: 'Berlin', upstream: UPSTREAM, capacity: 1 }] },
        { code: 'us', name: 'United States', default: 'us-dal', cities: [{ code: 'us-dal', location: 'Dallas', upstream: null, capacity: 1, timeZone: 'America/Chicago' }] },
      ],
      residential: { upstream: UPSTREAM, countries: ['de'] },
      timeZone: DEFAULT_ZONE,
    },
  });
  pageUrl = `${fixture.site.origin}/`;
});

afterAll(async () => {
  await fixture?.close();
});

describe('exit locations', () => {
  it('lists the configured locations and residential countries', async () => {
    const images = await call('/image');
    expect(images.vpnLocations).toEqual([
      { code: 'de', name: 'Germany', default: 'de-ber', cities: [{ code: 'de-ber', location: 'Berlin' }] },
      { code: 'us', name: 'United States', default: 'us-dal', cities: [{ code: 'us-dal', location: 'Dallas' }] },
    ]);
    expect(images.residential).toEqual({ configured: true, countries: ['de'] });
  });

  it('sends a session with a country through that exit, in its city\'s time zone; v8 refuses a full one, v7 starts without it in the default zone', async () => {
    const created = await call('/vm/create', { browser: 'chromium', url: `${pageUrl}zone`, country: 'de' });
    expect(created.status).toBe('ok');
    expect(created).not.toHaveProperty('location_applied');
    expect(await statusOf(created.vmId, (s) => s !== 'starting')).toBe('running');
    // Berlin's zone comes from the country code alone: one zone dominates Germany.
    expect(await specOf(created.vmId)).toMatchObject({ url: `${pageUrl}zone`, timeZone: 'Europe/Berlin', upstreamProxyUrl: UPSTREAM });

    // Berlin's only exit is taken now; Dallas has none at all.
    expect(await call('/vm/create', { browser: 'chromium', url: pageUrl, country: 'de' })).toEqual({ status: 'denied', message: expect.stringContaining('exit location unavailable') });
    expect(await call('/vm/create', { browser: 'chromium', url: pageUrl, country: 'us-dal' })).toEqual({ status: 'denied', message: expect.stringContaining('exit location unavailable') });
    expect(await call('/vm/create', { browser: 'chromium', url: pageUrl, country: 'fr' })).toEqual({ status: 'denied', message: expect.stringContaining('unsupported exit location') });
    const v7 = await call('/vm/create', { browser: 'chromium', url: `${pageUrl}zone`, country: 'de' }, 'v7');
    expect(v7).toMatchObject({ status: 'ok', location_applied: false, location_reason: 'unavailable' });
    expect(await statusOf(v7.vmId, (s) => s !== 'starting')).toBe('running');
    const started = await specOf(v7.vmId);
    expect(started.timeZone).toBe(DEFAULT_ZONE);
    expect(started.upstreamProxyUrl).toBeUndefined();
    expect((await call(`/vm/data?id=${v7.vmId}`, undefined, 'v7')).data[0]).toMatchObject({ location_applied: false, location_reason: 'unavailable' });

    await call('/vm/remove', { id: created.vmId });
    await call('/vm/remove', { id: v7.vmId });
    expect(await statusOf(created.vmId, (s) => s === 'deleted')).toBe('deleted');
    expect(await statusOf(v7.vmId, (s) => s === 'deleted')).toBe('deleted');
  });

  it('counts residential bytes per pool, keeps the residential country\'s time zone, and refuses residential countries not offered', async () => {
    expect(await call('/vm/create', { browser: 'chromium', url: pageUrl, egress: 'residential', country: 'us' })).toMatchObject({ status: 'denied' });
    const created = await call('/vm/create', { browser: 'chromium', url: `${pageUrl}zone`, egress: 'residential', country: 'de-ber' });
    expect(created.status).toBe('ok');
    expect(await statusOf(created.vmId, (s) => s !== 'starting')).toBe('running');
    expect(await specOf(created.vmId)).toMatchObject({ timeZone: 'Europe/Berlin', upstreamProxyUrl: UPSTREAM });
    // The page's bytes through the session's route, as its meter counts them.
    fixture.engine.runtime.get((await fixture.engine.store.session(created.vmId))!.runtime_id!)!.carry(1200, 34_000);
    await call('/vm/remove', { id: created.vmId });
    await statusOf(created.vmId, (s) => s === 'deleted');
    const quota = await call('/user/quota');
    expect(quota.residential_bytes_used_cycle).toBe(35_200);
    expect(quota.pools[0].residential_bytes_used_cycle).toBe(quota.residential_bytes_used_cycle);
  });
});

describe('limits over time', () => {
  it('suspends a session nobody watched for the idle timeout, and one past its maximum duration', async () => {
    const idle = await call('/vm/create', { browser: 'chromium', url: `${pageUrl}zone` });
    expect(await statusOf(idle.vmId, (s) => s !== 'starting')).toBe('running');
    // Without an exit location: the operator's default time zone.
    expect((await specOf(idle.vmId)).timeZone).toBe(DEFAULT_ZONE);
    offset += 11 * 60_000;
    expect(await statusOf(idle.vmId, (s) => s !== 'running', 5000)).toBe('suspended');
    expect((await call('/user/quota')).running_sessions_used).toBe(0);

    // Watched all along (a viewer keeps it alive), it still ends at the maximum duration.
    const long = await call('/vm/create', { browser: 'chromium', url: pageUrl });
    expect(await statusOf(long.vmId, (s) => s !== 'starting')).toBe('running');
    await fixture.engine.store.updateSession(long.vmId, { last_viewer_at: Date.now() + offset + 60 * 60_000 });
    offset += 61 * 60_000;
    expect(await statusOf(long.vmId, (s) => s !== 'running', 5000)).toBe('suspended');
    expect(await call('/vm/remove', { id: long.vmId })).toEqual({ status: 'ok' });
    expect(await statusOf(long.vmId, (s) => s === 'deleted')).toBe('deleted');
  });

  it('suspends a session whose browser crashed after it was running', async () => {
    const created = await call('/vm/create', { browser: 'chromium', url: pageUrl });
    expect(await statusOf(created.vmId, (s) => s !== 'starting')).toBe('running');
    const runtimeId = (await fixture.engine.store.session(created.vmId))!.runtime_id!;
    fixture.engine.runtime.raise(runtimeId, 'browser-exited', 'Chromium exited (SIGKILL)');
    expect(await statusOf(created.vmId, (s) => s !== 'running')).toBe('suspended');
    expect((await fixture.engine.store.session(created.vmId))!.end_reason).toMatch(/Chromium exited/);
    // Its display and egress route end with it, shortly after the status moves: the service stops it.
    const deadline = Date.now() + 3000;
    while (fixture.engine.runtime.get(runtimeId) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(fixture.engine.runtime.get(runtimeId)).toBeUndefined();
  });

  it('a session that cannot start ends in error and does not count in the cycle', async () => {
    const before = (await call('/user/quota')).cycle_sessions_used;
    // A browser whose executable went missing after start-up: the runtime's start fails.
    fixture.engine.runtime.refuse('chromium', "ENOENT: no such file or directory, realpath '/nonexistent/chromium'");
    try {
      const created = await call('/vm/create', { browser: 'chromium', url: pageUrl });
      expect(created.quota.cycle_sessions_used).toBe(before + 1);
      expect(await statusOf(created.vmId, (s) => s !== 'starting')).toBe('error');
      expect((await fixture.engine.store.session(created.vmId))!.end_reason).toMatch(/ENOENT/);
      expect((await call('/user/quota')).cycle_sessions_used).toBe(before);
    } finally {
      fixture.engine.runtime.refuse('chromium', null);
    }
    expect(fixture.account.id).toMatch(/^acc_/);
  });
});
