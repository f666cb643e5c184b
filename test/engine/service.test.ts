// The service in-process with a clock the test moves: limits enforced over time, crashes,
// exit locations and residential connections through a real upstream proxy on loopback, and the
// time zone each session keeps.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server as ProxyServer } from 'proxy-chain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/engine/engine.js';

let engine: Engine;
let dir: string;
let page: Server;
let pageUrl: string;
let upstream: ProxyServer;
/** Time zones pages reported (`/zone`), in order. */
const zoneReports: string[] = [];
/** The operator's default zone in this test: not the host's own (UTC), so a test can tell them apart. */
const DEFAULT_ZONE = 'America/Sao_Paulo';
const upstreamSeen: string[] = [];
let offset = 0;
let key: string;
let accountId: string;

const plan = { running_session_limit: 3, cycle_session_limit: null, location_access: true, programmatic_access: true, max_session_minutes: 60, idle_timeout_minutes: 10 };

async function call(path: string, body?: unknown, version = 'v8'): Promise<Record<string, any>> {
  const response = await fetch(`${engine.url}/${version}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
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

/** The time zone the next page a session opens on `/zone` reports. */
async function reportedZone(before: number): Promise<string | undefined> {
  const deadline = Date.now() + 10_000;
  while (zoneReports.length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return zoneReports[before];
}

beforeAll(async () => {
  page = createServer((request, response) => {
    if (request.url?.startsWith('/zone-report?')) {
      zoneReports.push(decodeURIComponent(request.url.slice('/zone-report?'.length)));
      return void response.writeHead(204).end();
    }
    // `/zone` tells the server the time zone the browser keeps.
    const script = request.url === '/zone' ? '<script>fetch("/zone-report?" + encodeURIComponent(Intl.DateTimeFormat().resolvedOptions().timeZone))</script>' : '';
    response.writeHead(200, { 'content-type': 'text/html' }).end(`<title>page ${request.url}</title>${script}`);
  });
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
  upstream = new ProxyServer({ port: 0, host: '127.0.0.1', prepareRequestFunction: ({ hostname, port }) => { upstreamSeen.push(`${hostname}:${port}`); return {}; } });
  await upstream.listen();
  const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
  dir = await mkdtemp(join(tmpdir(), 'rbk-service-'));
  engine = await createEngine({
    dataDir: dir,
    port: 0,
    now: () => Date.now() + offset,
    config: {
      plans: [
        { id: 'travel', name: 'Travel', residential_cycle_mb_limit: 1, ...plan },
      ],
      egress: { allow: ['127.0.0.0/8', '::1/128'] },
      rateLimit: { requests: 100_000, perSeconds: 1 },
      locations: [
        { code: 'de', name: 'Germany', default: 'de-ber', cities: [{ code: 'de-ber', location: 'Berlin', upstream: upstreamUrl, capacity: 1 }] },
        { code: 'us', name: 'United States', default: 'us-dal', cities: [{ code: 'us-dal', location: 'Dallas', upstream: null, capacity: 1, timeZone: 'America/Chicago' }] },
      ],
      residential: { upstream: upstreamUrl, countries: ['de'] },
      timeZone: DEFAULT_ZONE,
    } as never,
  });
  const created = await engine.accounts.create({ contact: 'ops@example.com', plans: ['travel'] });
  key = created.apiKey.key;
  accountId = created.account.id;
});

afterAll(async () => {
  await engine?.close();
  await upstream?.close(true);
  page?.close();
  await rm(dir, { recursive: true, force: true });
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
    let reports = zoneReports.length;
    const created = await call('/vm/create', { browser: 'chromium', url: `${pageUrl}zone`, country: 'de' });
    expect(created.status).toBe('ok');
    expect(created).not.toHaveProperty('location_applied');
    expect(await statusOf(created.vmId, (s) => s !== 'starting')).toBe('running');
    // Berlin's zone comes from the country code alone: one zone dominates Germany.
    expect(await reportedZone(reports)).toBe('Europe/Berlin');
    // Running means the first page is on its way, not loaded: its report shows it went through the exit.
    expect(upstreamSeen.some((target) => target === `127.0.0.1:${new URL(pageUrl).port}`)).toBe(true);

    // Berlin's only exit is taken now; Dallas has none at all.
    expect(await call('/vm/create', { browser: 'chromium', url: pageUrl, country: 'de' })).toEqual({ status: 'denied', message: expect.stringContaining('exit location unavailable') });
    expect(await call('/vm/create', { browser: 'chromium', url: pageUrl, country: 'us-dal' })).toEqual({ status: 'denied', message: expect.stringContaining('exit location unavailable') });
    expect(await call('/vm/create', { browser: 'chromium', url: pageUrl, country: 'fr' })).toEqual({ status: 'denied', message: expect.stringContaining('unsupported exit location') });
    reports = zoneReports.length;
    const v7 = await call('/vm/create', { browser: 'chromium', url: `${pageUrl}zone`, country: 'de' }, 'v7');
    expect(v7).toMatchObject({ status: 'ok', location_applied: false, location_reason: 'unavailable' });
    expect(await reportedZone(reports)).toBe(DEFAULT_ZONE);
    expect((await call(`/vm/data?id=${v7.vmId}`, undefined, 'v7')).data[0]).toMatchObject({ location_applied: false, location_reason: 'unavailable' });

    await call('/vm/remove', { id: created.vmId });
    await call('/vm/remove', { id: v7.vmId });
    expect(await statusOf(created.vmId, (s) => s === 'deleted')).toBe('deleted');
    expect(await statusOf(v7.vmId, (s) => s === 'deleted')).toBe('deleted');
  });

  it('counts residential bytes per pool, keeps the residential country\'s time zone, and refuses residential countries not offered', async () => {
    expect(await call('/vm/create', { browser: 'chromium', url: pageUrl, egress: 'residential', country: 'us' })).toMatchObject({ status: 'denied' });
    const reports = zoneReports.length;
    const created = await call('/vm/create', { browser: 'chromium', url: `${pageUrl}zone`, egress: 'residential', country: 'de-ber' });
    expect(created.status).toBe('ok');
    expect(await statusOf(created.vmId, (s) => s !== 'starting')).toBe('running');
    expect(await reportedZone(reports)).toBe('Europe/Berlin');
    await call('/vm/remove', { id: created.vmId });
    await statusOf(created.vmId, (s) => s === 'deleted');
    const quota = await call('/user/quota');
    expect(quota.residential_bytes_used_cycle).toBeGreaterThan(0);
    expect(quota.pools[0].residential_bytes_used_cycle).toBe(quota.residential_bytes_used_cycle);
  });
});

describe('limits over time', () => {
  it('suspends a session nobody watched for the idle timeout, and one past its maximum duration', async () => {
    const reports = zoneReports.length;
    const idle = await call('/vm/create', { browser: 'chromium', url: `${pageUrl}zone` });
    expect(await statusOf(idle.vmId, (s) => s !== 'starting')).toBe('running');
    // Without an exit location: the operator's default time zone.
    expect(await reportedZone(reports)).toBe(DEFAULT_ZONE);
    offset += 11 * 60_000;
    expect(await statusOf(idle.vmId, (s) => s !== 'running', 5000)).toBe('suspended');
    expect((await call('/user/quota')).running_sessions_used).toBe(0);

    // Watched all along (a viewer keeps it alive), it still ends at the maximum duration.
    const long = await call('/vm/create', { browser: 'chromium', url: pageUrl });
    expect(await statusOf(long.vmId, (s) => s !== 'starting')).toBe('running');
    await engine.store.updateSession(long.vmId, { last_viewer_at: Date.now() + offset + 60 * 60_000 });
    offset += 61 * 60_000;
    expect(await statusOf(long.vmId, (s) => s !== 'running', 5000)).toBe('suspended');
    expect(await call('/vm/remove', { id: long.vmId })).toEqual({ status: 'ok' });
    expect(await statusOf(long.vmId, (s) => s === 'deleted')).toBe('deleted');
  });

  it('suspends a session whose browser crashed after it was running', async () => {
    const created = await call('/vm/create', { browser: 'chromium', url: pageUrl });
    expect(await statusOf(created.vmId, (s) => s !== 'starting')).toBe('running');
    const runtimeId = (await engine.store.session(created.vmId))!.runtime_id!;
    process.kill(engine.runtime.get(runtimeId)!.browser.process.pid, 'SIGKILL');
    expect(await statusOf(created.vmId, (s) => s !== 'running')).toBe('suspended');
    expect((await engine.store.session(created.vmId))!.end_reason).toMatch(/Chromium exited/);
    // Its display and egress route end with it, shortly after the status moves.
    const deadline = Date.now() + 3000;
    while (engine.runtime.get(runtimeId) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(engine.runtime.get(runtimeId)).toBeUndefined();
  });

  it('a session that cannot start ends in error and does not count in the cycle', async () => {
    const before = (await call('/user/quota')).cycle_sessions_used;
    // A browser whose executable went missing after start-up makes the runtime fail for real.
    engine.runtime.images.find((i) => i.id === 'chromium')!.executable = '/nonexistent/chromium';
    try {
      const created = await call('/vm/create', { browser: 'chromium', url: pageUrl });
      expect(created.quota.cycle_sessions_used).toBe(before + 1);
      expect(await statusOf(created.vmId, (s) => s !== 'starting')).toBe('error');
      expect((await call('/user/quota')).cycle_sessions_used).toBe(before);
    } finally {
      engine.runtime.images.find((i) => i.id === 'chromium')!.executable = '/usr/lib/chromium/chromium';
    }
    expect(accountId).toMatch(/^acc_/);
  });
});
