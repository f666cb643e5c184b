// <UsageMeters> against the real proxy route (createProxyRoute over the node:http adapter, on
// loopback) in front of a real engine in this process: every state, every language, axe checks.
// Meter values come from session rows in the engine's store; one session is created through the
// engine's v8 API (on the fake runtime: no browser starts; starting and running both count) for
// the refresh test.
// The cycle dates are read from the engine's `cycle_end` when it sends one (here added as the
// engine computes it) and computed from `cycle_start` when it does not.
import { act, render, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/engine/accounts/accounts.js';
import { currentCycle, formatDay } from '../../src/protocol/cycle.js';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import { FakeRuntime } from '../helpers/fake-runtime.js';
import { SHARE_LANGUAGES, type Pool, type ShareLanguage, type UserQuotaResponse } from '../../src/protocol/index.js';
import { createProxyRoute, type ProxyRoute } from '../../src/server/proxy-route.js';
import { createServiceClient, engineService } from '../../src/server/service-client.js';
import { toNodeHandler } from '../../src/server/adapters/node.js';
import { RemoteBrowserProvider } from '../../src/react/RemoteBrowserProvider.js';
import { UsageMeters, type UsageMetersProps } from '../../src/react/UsageMeters.js';
import { resources } from '../../src/react/i18n.js';
import { axeViolations } from './axe.js';

const SECRET = 'usage-meters-test-secret-0123456789abcdef';
const BASE_PATH = '/api/remote-browser';
const MB = 1024 * 1024;

const plan = { location_access: false, programmatic_access: true, max_session_minutes: 60, idle_timeout_minutes: 30 };
const PLANS = [
  { id: 'basic', name: 'Basic', running_session_limit: 5, cycle_session_limit: 100, residential_cycle_mb_limit: null, ...plan },
  { id: 'resi', name: 'Residential', running_session_limit: 3, cycle_session_limit: 50, residential_cycle_mb_limit: 2048, ...plan },
  { id: 'infinite', name: 'Infinite', running_session_limit: 10, cycle_session_limit: null, residential_cycle_mb_limit: 512, ...plan },
];

// The engine's clock is set to 21 November 2025; accounts are anchored on 31 January 2025, so
// the current cycle started 31 October and resets on 30 November (the 31st, clamped).
const ANCHOR = '2025-01-31';
const CYCLE_START = '2025-10-31';
const NEXT_RESET = '2025-11-30';
let clockOffset = Date.parse('2025-11-21T12:00:00Z') - Date.now();
const now = () => Date.now() + clockOffset;

/** Runs `body` with the engine's clock set back to `at` (earlier, so no session times out meanwhile). */
async function atClock(at: string, body: () => Promise<void>): Promise<void> {
  const saved = clockOffset;
  clockOffset = Date.parse(at) - Date.now();
  try {
    await body();
  } finally {
    clockOffset = saved;
  }
}

let engine: Engine<FakeRuntime>;
let dir: string;
let hangPage: Server;
let hangUrl: string;
const servers: Server[] = [];
const sockets = new Set<Socket>();
let counter = 0;

interface Account {
  id: string;
  key: string;
  subscriptions: string[];
}

async function account(plans: string[]): Promise<Account> {
  const created = await engine.accounts.create({ contact: `meters-${++counter}@example.com`, plans, cycleStart: ANCHOR });
  return { id: created.account.id, key: created.apiKey.key, subscriptions: created.account.subscriptions.map((s) => s.id) };
}

/** An account without any subscription (the operator CLI cannot make one; the store can). */
async function accountWithoutPlan(): Promise<Account> {
  const id = `acc_noplan${++counter}`;
  const key = `rbk_${'n'.repeat(40)}${counter}`;
  await engine.store.insertAccount(
    { id, contact: `no-plan-${counter}@example.com`, language: null, layout: null, created_at: now() },
    [],
    { id: `key_noplan${counter}`, account_id: id, key_hash: hashSecret(key), prefix: key.slice(0, 10), created_at: now(), revoked_at: null },
  );
  return { id, key, subscriptions: [] };
}

/** A session row in the store (no browser): `starting` and `running` count as running. */
async function addSession(owner: Account, status: string, options: { pool?: number; residentialMb?: number } = {}): Promise<void> {
  const id = `s${String(++counter).padStart(6, '0')}`.padEnd(32, '0');
  await engine.store.insertSession({
    id, account_id: owner.id, subscription_id: owner.subscriptions[options.pool ?? 0]!, status, browser: 'chromium', browser_name: 'Chromium', url: null,
    language: 'en', layout: 'us', country: null, exit_city: null, egress: options.residentialMb ? 'residential' : null, share_language: 'en', callback_url: null,
    link_hash: `hash${id}`, view_link_hash: null, viewers: 0, counted: true, ever_ran: status !== 'starting', created_at: now(),
    running_at: null, ended_at: null, last_viewer_at: null, egress_bytes: 0, residential_bytes: Math.round((options.residentialMb ?? 0) * MB), runtime_id: null, end_reason: null,
    location_applied: null, location_reason: null, node_id: null, recorded: false,
  });
}

/** Serves `handler` on loopback; its absolute URL. */
async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

interface Mounted {
  endpoint: string;
  /** Requests wait here until released (to hold a state on screen). */
  hold(): void;
  release(): void;
  /** Serve another route from now on. */
  swap(route: ProxyRoute): void;
}

type CycleEnd = { cycle_end?: string };
type UsageAnswer = UserQuotaResponse & CycleEnd & { pools: Array<Pool & CycleEnd> };

/** The engine's answer as an engine from before `cycle_end` gives it. */
function withoutCycleEnd(answer: UsageAnswer): UsageAnswer {
  const { cycle_end: _total, ...totals } = answer;
  return { ...totals, pools: answer.pools.map(({ cycle_end: _pool, ...pool }: Pool & CycleEnd) => pool) };
}

/** The engine's answer with `cycle_end` as the engine's cycles end, for subscriptions anchored so. */
function withCycleEnd(anchors: Record<string, string>) {
  const end = (pool: Pool) => formatDay(new Date(currentCycle(anchors[pool.subscription_id]!, now()).endMs));
  return (answer: UsageAnswer): UsageAnswer => ({ ...answer, cycle_end: end(answer.pools[0]!), pools: answer.pools.map((pool) => ({ ...pool, cycle_end: end(pool) })) });
}

function routeFor(key: string, options: { shareUsage?: boolean; engineDown?: string; usage?: (answer: UsageAnswer) => UsageAnswer } = {}): ProxyRoute {
  const service = options.engineDown ? createServiceClient({ baseUrl: options.engineDown, apiKey: key, retries: 0, timeoutMs: 2000 }) : engineService(engine, key);
  const usage = options.usage;
  if (usage) {
    const read = service.userQuota;
    service.userQuota = async (callOptions) => usage(await read(callOptions));
  }
  return createProxyRoute({
    service,
    authorize: () => ({ id: 'user-1' }),
    secret: SECRET,
    basePath: BASE_PATH,
    policy: { usage: () => options.shareUsage ?? true },
    onError: () => undefined,
  });
}

/** The route on a real node:http server, through the node adapter. */
async function mount(route: ProxyRoute): Promise<Mounted> {
  let current = toNodeHandler(route);
  let gate: { promise: Promise<void>; open: () => void } | null = null;
  const origin = await listen(async (req, res) => {
    if (gate) await gate.promise;
    await current(req, res);
  });
  return {
    endpoint: `${origin}${BASE_PATH}`,
    hold() {
      let open!: () => void;
      gate = { promise: new Promise<void>((resolve) => (open = resolve)), open };
    },
    release() {
      gate?.open();
      gate = null;
    },
    swap(next) {
      current = toNodeHandler(next);
    },
  };
}

/** An address where nothing listens. */
async function closedAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

function renderMeters(endpoint: string, language: ShareLanguage = 'en', props: UsageMetersProps = {}) {
  return render(
    <RemoteBrowserProvider endpoint={endpoint} language={language}>
      <UsageMeters {...props} />
    </RemoteBrowserProvider>,
  );
}

const root = (container: HTMLElement) => container.querySelector('.rbk-meters')!;
const ready = (container: HTMLElement) => waitFor(() => expect(root(container)).toHaveAttribute('data-state', 'ready'), { timeout: 5000 });
const en = resources.en.meters;
const fill = (text: string, values: Record<string, string>) => text.replace(/\{\{(\w+)\}\}/g, (_, name: string) => values[name] ?? '');
const longDate = (day: string, language: string) => new Intl.DateTimeFormat(language, { dateStyle: 'long', timeZone: 'UTC' }).format(new Date(`${day}T00:00:00Z`));
const number = (value: number, language: string) => new Intl.NumberFormat(language).format(value);

// Accounts, filled in beforeAll.
let basic: Account; // 2 running (1 starting, 1 running), 3 in the cycle (1 ended), no residential
let residential: Account; // 300 MB of 2048 MB residential used
let unlimited: Account; // no cycle cap
let twoPools: Account; // Basic + Residential
let noPlan: Account;
let basicRoute: Mounted;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rbk-meters-'));
  hangPage = createServer(() => undefined); // never answers: a session opening it stays `starting`
  hangPage.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => hangPage.listen(0, '127.0.0.1', resolve));
  hangUrl = `http://127.0.0.1:${(hangPage.address() as AddressInfo).port}/hang`;
  engine = await createEngine({
    dataDir: dir,
    port: 0,
    now,
    runtime: new FakeRuntime(),
    config: { plans: PLANS, rateLimit: { requests: 100_000, perSeconds: 60 }, standby: { afterSeconds: false }, egress: { allow: ['127.0.0.0/8'] } },
  });

  basic = await account(['basic']);
  await addSession(basic, 'starting');
  await addSession(basic, 'running');
  await addSession(basic, 'suspended');

  residential = await account(['resi']);
  await addSession(residential, 'running', { residentialMb: 300 });

  unlimited = await account(['infinite']);
  for (let i = 0; i < 3; i++) await addSession(unlimited, 'deleted');

  twoPools = await account(['basic', 'resi']);
  await addSession(twoPools, 'running', { pool: 0 });
  await addSession(twoPools, 'running', { pool: 1, residentialMb: 1536 });
  await addSession(twoPools, 'suspended', { pool: 1 });

  noPlan = await accountWithoutPlan();
  basicRoute = await mount(routeFor(basic.key));
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  await new Promise<void>((resolve) => hangPage?.close(() => resolve()) ?? resolve());
  await engine?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('UsageMeters states', () => {
  it('shows a loading state until the route answers', async () => {
    const mounted = await mount(routeFor(basic.key));
    mounted.hold();
    const { container } = renderMeters(mounted.endpoint);
    expect(root(container)).toHaveAttribute('data-state', 'loading');
    expect(root(container)).toHaveAttribute('aria-busy', 'true');
    expect(screen.getByRole('heading', { name: en.title })).toBeInTheDocument();
    expect(screen.getByText(en.loading)).toHaveAttribute('role', 'status');
    expect(screen.queryByRole('meter')).toBeNull();
    expect(screen.queryByRole('button', { name: en.refresh })).toBeNull();
    expect(await axeViolations(container)).toEqual([]);
    mounted.release();
    await ready(container);
    expect(root(container)).not.toHaveAttribute('aria-busy');
  });

  it('shows running sessions, cycle sessions and residential data as meters, with the cycle dates', async () => {
    const { container } = renderMeters(basicRoute.endpoint);
    await ready(container);
    const region = screen.getByRole('region', { name: en.title });
    expect(region).toHaveAttribute('lang', 'en');

    const running = screen.getByRole('meter', { name: en.running });
    expect(running).toHaveAttribute('aria-valuenow', '2');
    expect(running).toHaveAttribute('aria-valuemin', '0');
    expect(running).toHaveAttribute('aria-valuemax', '5');
    expect(running).toHaveAttribute('aria-valuetext', '2 of 5');
    expect(screen.getByText('2 of 5')).toBeVisible();
    expect(screen.getByText('3 left')).toBeInTheDocument();

    const cycle = screen.getByRole('meter', { name: en.cycle });
    expect(cycle).toHaveAttribute('aria-valuenow', '3');
    expect(cycle).toHaveAttribute('aria-valuemax', '100');
    expect(screen.getByText('3 of 100')).toBeInTheDocument();
    expect(screen.getByText('97 left')).toBeInTheDocument();

    // No residential allowance in the plan: said in words, no meter.
    expect(screen.queryByRole('meter', { name: en.residential })).toBeNull();
    expect(screen.getByText(en.residential)).toBeInTheDocument();
    expect(screen.getByText(en.notIncluded)).toBeInTheDocument();

    expect(screen.getByText('Cycle started October 31, 2025')).toBeInTheDocument();
    expect(screen.getByText('Resets November 30, 2025')).toBeInTheDocument();
    // One subscription: its plan's name next to the title, no breakdown.
    expect(within(region).getByText('Basic')).toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: en.pools })).toBeNull();
    expect(await axeViolations(container)).toEqual([]);
  });

  it('shows a cycle without a cap as unlimited', async () => {
    const { container } = renderMeters((await mount(routeFor(unlimited.key))).endpoint);
    await ready(container);
    expect(screen.queryByRole('meter', { name: en.cycle })).toBeNull();
    expect(screen.getByText(fill(en.unlimited, { used: '3' }))).toBeInTheDocument();
    expect(screen.getByRole('meter', { name: en.running })).toHaveAttribute('aria-valuetext', '0 of 10');
    expect(screen.getByRole('meter', { name: en.residential })).toHaveAttribute('aria-valuetext', '0 MB of 512 MB');
    expect(await axeViolations(container)).toEqual([]);
  });

  it('shows residential data in MB and GB against the allowance', async () => {
    const { container } = renderMeters((await mount(routeFor(residential.key))).endpoint);
    await ready(container);
    const meter = screen.getByRole('meter', { name: en.residential });
    expect(meter).toHaveAttribute('aria-valuenow', '300');
    expect(meter).toHaveAttribute('aria-valuemax', '2048');
    expect(meter).toHaveAttribute('aria-valuetext', '300 MB of 2 GB');
    expect(screen.getByText('300 MB of 2 GB')).toBeInTheDocument();
    expect(screen.getByText('1.71 GB left')).toBeInTheDocument();
    expect(screen.queryByText(en.notIncluded)).toBeNull();
    expect(await axeViolations(container)).toEqual([]);
  });

  it('breaks the totals down per subscription', async () => {
    const { container } = renderMeters((await mount(routeFor(twoPools.key))).endpoint);
    await ready(container);
    // Totals: the sums over both pools; the residential allowance is the one pool that has it.
    expect(screen.getByRole('meter', { name: en.running })).toHaveAttribute('aria-valuetext', '2 of 8');
    expect(screen.getByRole('meter', { name: en.cycle })).toHaveAttribute('aria-valuetext', '3 of 150');
    expect(screen.getByRole('meter', { name: en.residential })).toHaveAttribute('aria-valuetext', '1.5 GB of 2 GB');

    const pools = screen.getByRole('region', { name: en.pools });
    const items = within(pools).getAllByRole('listitem');
    expect(items).toHaveLength(2);
    const [first, second] = items as [HTMLElement, HTMLElement];
    expect(within(first).getByRole('heading', { name: 'Basic' })).toBeInTheDocument();
    expect(within(first).getByRole('meter', { name: `Basic ${en.running}` })).toHaveAttribute('aria-valuetext', '1 of 5');
    expect(within(first).getByRole('meter', { name: `Basic ${en.cycle}` })).toHaveAttribute('aria-valuetext', '1 of 100');
    expect(within(first).getByText(en.notIncluded)).toBeInTheDocument();
    expect(within(second).getByRole('heading', { name: 'Residential' })).toBeInTheDocument();
    expect(within(second).getByRole('meter', { name: `Residential ${en.running}` })).toHaveAttribute('aria-valuetext', '1 of 3');
    expect(within(second).getByRole('meter', { name: `Residential ${en.cycle}` })).toHaveAttribute('aria-valuetext', '2 of 50');
    expect(within(second).getByRole('meter', { name: `Residential ${en.residential}` })).toHaveAttribute('aria-valuetext', '1.5 GB of 2 GB');
    expect(within(second).getByText('512 MB left')).toBeInTheDocument();
    expect(await axeViolations(container)).toEqual([]);
  });

  it('leaves the breakdown out with showPools={false}', async () => {
    const { container } = renderMeters((await mount(routeFor(twoPools.key))).endpoint, 'en', { showPools: false, className: 'host-meters', style: { maxWidth: 600 } });
    await ready(container);
    expect(screen.queryByRole('region', { name: en.pools })).toBeNull();
    expect(screen.getAllByRole('meter')).toHaveLength(3);
    expect(root(container)).toHaveClass('rbk-root', 'rbk-meters', 'host-meters');
    expect(root(container)).toHaveStyle({ maxWidth: '600px' });
  });

  it('says so when the account has no plan', async () => {
    const { container } = renderMeters((await mount(routeFor(noPlan.key))).endpoint);
    await ready(container);
    expect(screen.getByText(en.noPlan)).toBeInTheDocument();
    expect(screen.queryByRole('meter')).toBeNull();
    expect(screen.getByRole('button', { name: en.refresh })).toBeInTheDocument();
    expect(await axeViolations(container)).toEqual([]);
  });

  it('says the meters are not shared when the route\'s policy refuses', async () => {
    const { container } = renderMeters((await mount(routeFor(basic.key, { shareUsage: false }))).endpoint);
    expect(await screen.findByText(en.notShared, {}, { timeout: 5000 })).toBeInTheDocument();
    expect(root(container)).toHaveAttribute('data-state', 'error');
    expect(screen.queryByRole('meter')).toBeNull();
    expect(screen.queryByRole('alert')).toBeNull();
    expect(screen.queryByRole('button')).toBeNull();
    expect(await axeViolations(container)).toEqual([]);
  });

  it('shows the error with its message when the route cannot be reached, and Try again', async () => {
    const { container } = renderMeters(`${await closedAddress()}${BASE_PATH}`);
    const alert = await screen.findByRole('alert', {}, { timeout: 5000 });
    expect(root(container)).toHaveAttribute('data-state', 'error');
    expect(alert).toHaveTextContent(fill(en.error, { message: 'the remote browser service could not be reached; check your connection and try again' }));
    expect(within(alert).getByRole('button', { name: en.retry })).toBeInTheDocument();
    expect(await axeViolations(container)).toEqual([]);
  });

  it('shows the route\'s error when the engine is down, and Try again reads the meters once it is back', async () => {
    const mounted = await mount(routeFor(basic.key, { engineDown: await closedAddress() }));
    const { container } = renderMeters(mounted.endpoint, 'de');
    const alert = await screen.findByRole('alert', {}, { timeout: 5000 });
    expect(alert).toHaveTextContent(fill(resources.de.meters.error, { message: 'remote browser sessions are unavailable right now; try again later' }));
    expect(await axeViolations(container)).toEqual([]);

    mounted.swap(routeFor(basic.key));
    await userEvent.click(within(alert).getByRole('button', { name: resources.de.meters.retry }));
    await ready(container);
    expect(screen.queryByRole('alert')).toBeNull();
    expect(screen.getByRole('meter', { name: resources.de.meters.running })).toHaveAttribute('aria-valuetext', '2 von 5');
  });
});

describe('UsageMeters cycle dates', () => {
  /** An account whose subscriptions are anchored on these days (the operator CLI anchors all alike). */
  async function anchoredAccount(anchors: Array<[plan: string, anchor: string]>): Promise<Account & { anchors: Record<string, string> }> {
    const id = `acc_anchor${++counter}`;
    const key = `rbk_${'a'.repeat(40)}${counter}`;
    const subscriptions = anchors.map(([plan_id, cycle_anchor], position) => ({ id: `sub_anchor${counter}_${position}`, account_id: id, plan_id, cycle_anchor, position, created_at: now(), ended_at: null }));
    await engine.store.insertAccount(
      { id, contact: `anchored-${counter}@example.com`, language: null, layout: null, created_at: now() },
      subscriptions,
      { id: `key_anchor${counter}`, account_id: id, key_hash: hashSecret(key), prefix: key.slice(0, 10), created_at: now(), revoked_at: null },
    );
    return { id, key, subscriptions: subscriptions.map((sub) => sub.id), anchors: Object.fromEntries(subscriptions.map((sub) => [sub.id, sub.cycle_anchor])) };
  }

  it.each([
    // Anchored on 31 January: the cycle starting on the last day of a shorter month still ends on the 31st.
    { anchor: '2025-01-31', at: '2025-03-10T12:00:00Z', started: 'February 28, 2025', resets: 'March 31, 2025' },
    { anchor: '2024-01-31', at: '2024-12-10T12:00:00Z', started: 'November 30, 2024', resets: 'December 31, 2024' },
    { anchor: '2024-01-31', at: '2024-03-10T12:00:00Z', started: 'February 29, 2024', resets: 'March 31, 2024' },
  ])('without cycle_end from the engine, a cycle anchored on $anchor that started $started resets $resets', async ({ anchor, at, started, resets }) => {
    await atClock(at, async () => {
      const anchored = await anchoredAccount([['basic', anchor]]);
      const { container } = renderMeters((await mount(routeFor(anchored.key, { usage: withoutCycleEnd }))).endpoint);
      await ready(container);
      expect(screen.getByText(`Cycle started ${started}`)).toBeInTheDocument();
      expect(screen.getByText(`Resets ${resets}`)).toBeInTheDocument();
    });
  });

  it("shows the engine's cycle_end as it is, for the totals and for a subscription that ends on another day", async () => {
    await atClock('2025-03-10T12:00:00Z', async () => {
      // Both cycles started on 28 February; the engine ends the one anchored on the 30th on 30 March.
      const anchored = await anchoredAccount([['basic', '2025-01-30'], ['resi', '2025-01-31']]);
      const { container } = renderMeters((await mount(routeFor(anchored.key, { usage: withCycleEnd(anchored.anchors) }))).endpoint);
      await ready(container);
      const region = screen.getByRole('region', { name: en.title });
      const pools = screen.getByRole('region', { name: en.pools });
      const totals = [...region.querySelectorAll('.rbk-meters__cycle')].find((dates) => !pools.contains(dates))!;
      expect(totals).toHaveTextContent('Cycle started February 28, 2025 · Resets March 30, 2025');

      // The first subscription's cycle is the account's; the second ends a day later and says so.
      const [first, second] = within(pools).getAllByRole('listitem') as [HTMLElement, HTMLElement];
      expect(within(first).queryByText(/^Resets/)).toBeNull();
      expect(within(second).getByText('Cycle started February 28, 2025')).toBeInTheDocument();
      expect(within(second).getByText('Resets March 31, 2025')).toBeInTheDocument();
      expect(await axeViolations(container)).toEqual([]);
    });
  });
});

describe('UsageMeters refresh', () => {
  it('re-reads the meters after a session was created through the engine API, busy meanwhile', async () => {
    const fresh = await account(['basic']);
    const mounted = await mount(routeFor(fresh.key));
    const { container } = renderMeters(mounted.endpoint);
    await ready(container);
    expect(screen.getByRole('meter', { name: en.running })).toHaveAttribute('aria-valuetext', '0 of 5');
    expect(screen.getByRole('meter', { name: en.cycle })).toHaveAttribute('aria-valuetext', '0 of 100');

    const call = async (path: string, body: unknown) =>
      (await engine.fetch(new Request(`${engine.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${fresh.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }))).json() as Promise<{ status: string; vmId?: string }>;
    const created = await call('/v8/vm/create', { browser: 'chromium', url: hangUrl });
    expect(created.status).toBe('ok');
    try {
      // The meters on screen stay as read until refreshed.
      expect(screen.getByRole('meter', { name: en.running })).toHaveAttribute('aria-valuetext', '0 of 5');

      mounted.hold();
      const refresh = screen.getByRole('button', { name: en.refresh });
      await userEvent.click(refresh);
      await waitFor(() => expect(refresh).toHaveAttribute('aria-disabled', 'true'));
      expect(root(container)).toHaveAttribute('aria-busy', 'true');
      expect(root(container)).toHaveAttribute('data-state', 'ready');
      expect(screen.getByText(en.loading)).toHaveAttribute('role', 'status');
      // The meters stay on screen while they are re-read.
      expect(screen.getByRole('meter', { name: en.running })).toHaveAttribute('aria-valuetext', '0 of 5');
      expect(await axeViolations(container)).toEqual([]);
      act(() => mounted.release());

      await waitFor(() => expect(screen.getByRole('meter', { name: en.running })).toHaveAttribute('aria-valuetext', '1 of 5'));
      expect(screen.getByRole('meter', { name: en.cycle })).toHaveAttribute('aria-valuetext', '1 of 100');
      expect(refresh).not.toHaveAttribute('aria-disabled');
      expect(root(container)).not.toHaveAttribute('aria-busy');
    } finally {
      expect((await call('/v8/vm/remove', { id: created.vmId })).status).toBe('ok');
    }

    // Removed: no longer running, still counted in the cycle.
    await userEvent.click(screen.getByRole('button', { name: en.refresh }));
    await waitFor(() => expect(screen.getByRole('meter', { name: en.running })).toHaveAttribute('aria-valuetext', '0 of 5'));
    expect(screen.getByRole('meter', { name: en.cycle })).toHaveAttribute('aria-valuetext', '1 of 100');
  });
});

describe.each(SHARE_LANGUAGES)('UsageMeters in %s', (language) => {
  const text = resources[language].meters;

  it('shows the title, the meters, the dates and the breakdown in the language', async () => {
    const { container } = renderMeters((await mount(routeFor(twoPools.key))).endpoint, language);
    expect(screen.getByRole('heading', { name: text.title })).toBeInTheDocument();
    expect(screen.getByText(text.loading)).toBeInTheDocument();
    await ready(container);
    expect(root(container)).toHaveAttribute('lang', language);
    const running = fill(text.of, { used: number(2, language), limit: number(8, language) });
    expect(screen.getByRole('meter', { name: text.running })).toHaveAttribute('aria-valuetext', running);
    expect(screen.getAllByText(running)[0]).toBeInTheDocument();
    expect(screen.getByRole('meter', { name: text.cycle })).toHaveAttribute('aria-valuetext', fill(text.of, { used: number(3, language), limit: number(150, language) }));
    const gb = (value: number) => new Intl.NumberFormat(language, { style: 'unit', unit: 'gigabyte', maximumFractionDigits: 2 }).format(value);
    expect(screen.getByRole('meter', { name: text.residential })).toHaveAttribute('aria-valuetext', fill(text.of, { used: gb(1.5), limit: gb(2) }));
    expect(screen.getByText(fill(text.cycleStart, { date: longDate(CYCLE_START, language) }))).toBeInTheDocument();
    expect(screen.getByText(fill(text.nextReset, { date: longDate(NEXT_RESET, language) }))).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: text.pools })).toBeInTheDocument();
    expect(screen.getAllByText(text.notIncluded)).toHaveLength(1);
    expect(screen.getByRole('button', { name: text.refresh })).toBeInTheDocument();
    expect(await axeViolations(container)).toEqual([]);
  });

  it('shows an unlimited cycle, no plan and not shared in the language', async () => {
    const unlimitedView = renderMeters((await mount(routeFor(unlimited.key))).endpoint, language);
    await ready(unlimitedView.container);
    expect(screen.getByText(fill(text.unlimited, { used: number(3, language) }))).toBeInTheDocument();
    unlimitedView.unmount();

    const noPlanView = renderMeters((await mount(routeFor(noPlan.key))).endpoint, language);
    expect(await screen.findByText(text.noPlan, {}, { timeout: 5000 })).toBeInTheDocument();
    noPlanView.unmount();

    const { container } = renderMeters((await mount(routeFor(basic.key, { shareUsage: false }))).endpoint, language);
    expect(await screen.findByText(text.notShared, {}, { timeout: 5000 })).toBeInTheDocument();
    expect(await axeViolations(container)).toEqual([]);
  });
});
