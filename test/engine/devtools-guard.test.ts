// The engine's DevTools guard of a real confined Chromium session, attacked from inside the
// session (issue 20): its relay killed, once and then again and again, and devtools:// typed into
// the only tab. The guard comes back at once, or the session ends saying why; it never runs
// unguarded, and a refused page in the only tab never ends the browser; chrome://settings typed
// into it is blocked before any script runs there (issue 32). Pages and targets are read
// through a DevTools connection of the test's own, keys are typed on the session's display.
import type { EventEmitter } from 'node:events';
import type { TargetInfo } from '../../src/engine/runtime/browser/control.js';
import { DevToolsConnection, type DevToolsEvent } from '../../src/engine/runtime/browser/devtools-connection.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { REARM_LIMIT } from '../../src/engine/runtime/browser/control.js';
import { findMarkedProcesses } from '../../src/engine/runtime/sandbox/processes.js';
import type { RuntimeSession } from '../../src/engine/runtime/runtime.js';
import { typeAddress, waitFor, x } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';

const PAGE = '<!doctype html><title>Plain page</title><body style="background:#336699"><p>plain</p>';

let fixture: EngineFixture;
let engine: Engine;
let origin: string;
let key: string;
let vmId: string;
let session: RuntimeSession;
/** The test's own DevTools connection: it sees the browser whatever the guard does. */
let observer: DevToolsConnection;
/** The relay that carries the observer's connection (never killed here). */
let observerRelays: Set<number>;
/** Developer tools targets seen to open, and those seen to go. */
const devtoolsOpened = new Set<string>();
const devtoolsClosed = new Set<string>();

const api = v8Caller(() => engine.url, () => key);
const sessionStatus = async () => (await api(`/vm/data?id=${vmId}`)).data?.[0]?.status as string | undefined;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A session's relays to DevTools: `socat STDIO TCP:127.0.0.1:<port>`, one per connection. */
async function devtoolsRelays(of = session): Promise<number[]> {
  return (await findMarkedProcesses({ dir: of.dir }))
    .filter((p) => !p.zombie && /^\S*socat STDIO TCP:127\.0\.0\.1:\d+$/.test(p.command))
    .map((p) => p.pid);
}

/** The guard's relay, once there is exactly one besides the observer's (and other than `killed`). */
async function guardRelay(of = session, killed?: number): Promise<number | undefined> {
  const relays = await waitFor(async () => (await devtoolsRelays(of)).filter((pid) => !observerRelays.has(pid) && pid !== killed), (pids) => pids.length === 1);
  return relays.length === 1 ? relays[0] : undefined;
}

/** Kills the guard's relay as a process of the session could; answers its pid. */
async function killGuardRelay(of = session): Promise<number> {
  const pid = await guardRelay(of);
  expect(pid, 'the guard has one relay into the session').toBeDefined();
  process.kill(pid!, 'SIGKILL');
  return pid!;
}

/** Waits for the guard's new relay after `killed`: the connection was made again. */
async function expectGuardBack(killed: number, of = session): Promise<void> {
  expect(await guardRelay(of, killed), 'a new relay carries the guard').toBeDefined();
  // Armed on it: the engine's control reads the browser again.
  expect(await waitFor(() => of.control!.pages().then(() => true, () => false), (armed) => armed)).toBe(true);
}

/**
 * Starts a Chromium session on `url` through the API; answers its id and its runtime session. A
 * browser window (decisions.md 178): the attacks type into the browser's own address bar.
 */
async function startSession(url: string): Promise<{ vmId: string; session: RuntimeSession }> {
  const created = await api('/vm/create', { browser: 'chromium', url, window: 'browser' });
  expect(created.status).toBe('ok');
  const status = async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status as string | undefined;
  expect(await waitFor(status, (value) => value === 'running', 30_000)).toBe('running');
  return { vmId: created.vmId, session: engine.runtime.get((await engine.store.session(created.vmId))!.runtime_id!)! };
}

async function pages(): Promise<string[]> {
  return (await observer.send<{ targetInfos: TargetInfo[] }>('Target.getTargets')).targetInfos.filter((t) => t.type === 'page').map((t) => t.url);
}

/** The refusal page (a data: address) that names `url`. */
const refusalOf = (url: string) => (page: string) => page.startsWith('data:') && decodeURIComponent(page).includes(url);

beforeAll(async () => {
  fixture = await startEngine({ name: 'guard', site: PAGE });
  ({ engine, account: { key }, site: { origin } } = fixture);
  ({ vmId, session } = await startSession(`${origin}/`));
  expect(await waitFor(() => session.control!.evaluate('document.title').catch(() => ''), (title) => title === 'Plain page', 15_000)).toBe('Plain page');

  const before = new Set(await devtoolsRelays());
  observer = await DevToolsConnection.open(session.browser.devtoolsUrl!);
  observerRelays = new Set(await waitFor(async () => (await devtoolsRelays()).filter((pid) => !before.has(pid)), (pids) => pids.length === 1));
  expect(observerRelays.size).toBe(1);
  observer.on('event', (message) => {
    const info = (message.params as { targetInfo?: { targetId: string; url: string } }).targetInfo;
    if (info?.url.startsWith('devtools://')) devtoolsOpened.add(info.targetId);
    if (message.method === 'Target.targetDestroyed') devtoolsClosed.add((message.params as { targetId: string }).targetId);
  });
  await observer.send('Target.setDiscoverTargets', { discover: true });
  await x(session, 'xdotool', ['search', '--onlyvisible', '--class', 'chromium', 'windowactivate', '--sync']).catch(() => '');
}, 90_000);

afterAll(async () => {
  await observer?.close().catch(() => undefined);
  await fixture?.close();
});

describe('the DevTools guard', () => {
  it('is back within seconds when its relay is killed: chrome://version opened meanwhile is sent away, F12 closed, the session running', async () => {
    const killed = await killGuardRelay();
    // Right away, before the guard could be back: what a person in the session would try.
    await typeAddress(session, 'chrome://version');
    expect(await waitFor(pages, (urls) => urls.some(refusalOf('chrome://version')), 10_000)).toEqual([expect.stringMatching(/^data:/)]);

    // F12 opens no developer tools: the browser's policy blocks devtools:// (decisions.md 80), and
    // the guard closes any that opened all the same. Either way none stays open.
    await x(session, 'xdotool', ['search', '--onlyvisible', '--class', 'chromium', 'windowactivate', '--sync']).catch(() => '');
    await x(session, 'xdotool', ['key', 'F12']);
    await pause(3000);
    expect([...devtoolsOpened].filter((id) => !devtoolsClosed.has(id)), 'developer tools left open').toEqual([]);

    // A new relay carries the guard; the engine's control reads the browser again.
    await expectGuardBack(killed);
    expect(await session.control!.pages()).toEqual([expect.stringMatching(/^data:/)]);
    expect(await sessionStatus()).toBe('running');
  }, 50_000);

  it('replaces devtools:// typed into the only tab with the refusal page: the browser stays, the session runs', async () => {
    expect(await pages()).toHaveLength(1);
    await typeAddress(session, 'devtools://devtools/bundled/inspector.html');
    expect(await waitFor(pages, (urls) => urls.some(refusalOf('devtools://devtools/bundled/inspector.html')), 10_000)).toEqual([
      expect.stringMatching(/^data:/),
    ]);
    await pause(1500);
    expect(session.browser.process.child.exitCode).toBeNull();
    expect(await pages()).toHaveLength(1);
    expect(await sessionStatus()).toBe('running');
  }, 30_000);

  it('runs no script in chrome://settings typed into the address bar: blocked before it commits, then sent away', async () => {
    // A script for every new document in the tab, as a program could have set before the person types.
    const [tab] = (await observer.send<{ targetInfos: TargetInfo[] }>('Target.getTargets')).targetInfos.filter((t) => t.type === 'page');
    const { sessionId } = await observer.send('Target.attachToTarget', { targetId: tab!.targetId, flatten: true });
    const ran: Array<{ href: string; privileged: boolean }> = [];
    const onEvent = (message: DevToolsEvent) => {
      if (message.sessionId === sessionId && message.method === 'Runtime.bindingCalled') ran.push(JSON.parse((message.params as { payload: string }).payload));
    };
    observer.on('event', onEvent);
    try {
      await observer.send('Page.enable', undefined, sessionId);
      await observer.send('Runtime.enable', undefined, sessionId);
      await observer.send('Runtime.addBinding', { name: 'rbkScriptRan' }, sessionId);
      await observer.send('Page.addScriptToEvaluateOnNewDocument', {
        source: 'rbkScriptRan(JSON.stringify({ href: location.href, privileged: Boolean(window.chrome && (chrome.settingsPrivate || chrome.passwordsPrivate || chrome.autofillPrivate)) }))',
      }, sessionId);
      await x(session, 'xdotool', ['search', '--onlyvisible', '--class', 'chromium', 'windowactivate', '--sync']).catch(() => '');
      await typeAddress(session, 'chrome://settings/passwords');
      expect(await waitFor(pages, (urls) => urls.some(refusalOf('chrome://settings/passwords')), 10_000)).toEqual([expect.stringMatching(/^data:/)]);
      // It ran in the pages the tab did show (the refusal page among them), never in the settings.
      expect(await waitFor(() => ran, (list) => list.some((where) => where.href.startsWith('data:')), 5_000)).not.toEqual([]);
      expect(ran.filter((where) => where.privileged || where.href.startsWith('chrome://settings'))).toEqual([]);
      expect(await sessionStatus()).toBe('running');
    } finally {
      (observer as unknown as EventEmitter).removeListener('event', onEvent);
      await observer.send('Target.detachFromTarget', { sessionId }).catch(() => undefined);
    }
  }, 30_000);

  it('ends the session, saying why, when its connection is cut again and again', async () => {
    // A session of its own: no cut of the tests above counts.
    const cut = await startSession(`${origin}/`);
    const status = async () => (await api(`/vm/data?id=${cut.vmId}`)).data?.[0]?.status as string | undefined;
    // Each cut within the minute is re-armed; the one after the limit ends the session.
    for (let count = 1; count <= REARM_LIMIT; count++) {
      await expectGuardBack(await killGuardRelay(cut.session), cut.session);
      expect(await status()).toBe('running');
    }
    await killGuardRelay(cut.session);
    expect(await waitFor(status, (value) => value === 'suspended', 10_000)).toBe('suspended');
    expect((await engine.store.session(cut.vmId))!.end_reason).toMatch(/DevTools connection to the browser was cut \d+ times/);
    // Ended, not left running unguarded: the browser is gone.
    const { child } = cut.session.browser.process;
    expect(await waitFor(() => child.exitCode !== null || child.signalCode !== null, (gone) => gone)).toBe(true);
  }, 90_000);
});
