// An app window's address in the viewer's tab strip (issue 44, decisions.md 174), against the real
// engine's share API with the session's tabs from a stand-in browser (the fake runtime starts none;
// what Chromium and Firefox do with `go` is test/engine/share-tabs-go.test.ts): when the share
// state says the session is an app window, the strip shows the shown tab's address; a link that
// may drive types another and Enter takes the tab there (an address without a scheme is https, as
// a browser's address bar takes it); a refused address is said and the field keeps what was typed;
// Escape puts the tab's address back; a view-only link reads it and cannot change it; a browser
// window (with its own address bar) shows no field. In the compact row and the phone's sheet too.
// axe-clean in each state.
import { act, render, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SessionTabs, type TabProbe } from '../../src/engine/runtime/browser/tabs.js';
import { SHARE_LANGUAGES, type ViewerState } from '../../src/protocol/index.js';
import { ShareViewer } from '../../src/react/ShareViewer.js';
import { resources } from '../../src/react/i18n.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { waitFor as waitUntil } from '../helpers/session.js';
import { axeViolations } from './axe.js';
import { StandInResizeObserver } from './stand-in-resize-observer.js';

const text = resources.en.viewer;

/** An app window's tabs without a browser: one tab, and where each `go` took it. */
class StandInTabs extends SessionTabs {
  readonly went: string[] = [];
  constructor() {
    super();
    this.opened('tab-1', 'https://first.example/start', 'First');
    this.watch();
  }
  protected async activateTab(): Promise<void> {}
  protected async closeTab(): Promise<void> {}
  protected async openTab(): Promise<string> {
    return 'tab-2';
  }
  protected async navigateTab(id: string, url: string): Promise<void> {
    this.went.push(`${id} ${url}`);
  }
  protected async probe(): Promise<TabProbe> {
    return { visible: true, icon: '' };
  }
  protected async readIcon(): Promise<unknown> {
    return null;
  }
  protected release(): void {}
}

let fixture: EngineFixture<FakeRuntime>;
const sessions: string[] = [];

beforeAll(async () => {
  fixture = await startEngine({ name: 'tab-address', runtime: 'fake' });
  StandInResizeObserver.install();
});

afterEach(async () => {
  for (const id of sessions.splice(0)) await fixture.call('/vm/remove', { id });
});

afterAll(async () => {
  StandInResizeObserver.remove();
  await fixture?.close();
});

/** A running session with the stand-in's tab, an app window or not: its links and its tabs. */
async function session(appWindow: boolean): Promise<{ shareUrl: string; viewUrl: string; tabs: StandInTabs }> {
  // The fake runtime launches no window: the row keeps what the create asked (an app window is Chromium's default, decisions.md 178).
  const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/`, window: appWindow ? 'app' : 'browser' });
  expect(created.status).toBe('ok');
  sessions.push(created.vmId);
  const row = await waitUntil(() => fixture.engine.store.session(created.vmId), (found) => found?.status === 'running' && !!found.runtime_id, 10_000);
  const tabs = new StandInTabs();
  fixture.engine.runtime.get(row!.runtime_id!)!.ends.tabs = tabs;
  const linkId = new URL(created.shareUrl).search.slice(1);
  const state = (await (await fetch(`${fixture.engine.url}/share/${linkId}`)).json()) as ViewerState;
  expect(state.appWindow).toBe(appWindow ? true : undefined);
  const view = (await (await fetch(`${fixture.engine.url}/share/${linkId}/view-only`, { method: 'POST' })).json()) as { shareUrl: string };
  return { shareUrl: created.shareUrl, viewUrl: view.shareUrl, tabs };
}

const field = () => screen.findByRole('textbox', { name: text.tabs.address }, { timeout: 10_000 });

describe("an app window's address in the tab strip", () => {
  it('shows the tab address; Enter takes the tab to what was typed; a refusal is said; Escape puts it back', async () => {
    const { shareUrl, tabs } = await session(true);
    const { container } = render(<ShareViewer shareUrl={shareUrl} />);
    act(() => StandInResizeObserver.resize(1280, 844));
    const address = await field();
    expect(address).toHaveValue('https://first.example/start');
    expect(address).not.toHaveAttribute('readonly');
    expect(screen.getByRole('tablist', { name: text.tabs.label }).closest('.rbk-viewer__tabs')).toContainElement(address);
    expect(await axeViolations(container)).toEqual([]);

    await userEvent.click(address);
    await userEvent.clear(address);
    await userEvent.type(address, 'second.example/page?q=1{Enter}');
    await waitFor(() => expect(tabs.went).toEqual(['tab-1 https://second.example/page?q=1']));
    await waitFor(() => expect(address).toHaveValue('https://second.example/page?q=1'));

    // An address the engine refuses: said, nothing goes, what was typed stays to be fixed.
    await userEvent.clear(address);
    await userEvent.type(address, 'javascript:alert(1){Enter}');
    expect(await screen.findByText(/The tab was not changed: .*http or https/)).toHaveAttribute('role', 'status');
    expect(tabs.went).toHaveLength(1);
    expect(address).toHaveValue('javascript:alert(1)');
    await userEvent.keyboard('{Escape}');
    expect(address).toHaveValue('https://second.example/page?q=1');
    expect(await axeViolations(container)).toEqual([]);
  }, 30_000);

  it('a view-only link reads the address and cannot change it', async () => {
    const { viewUrl, tabs } = await session(true);
    const { container } = render(<ShareViewer shareUrl={viewUrl} />);
    const address = await field();
    expect(address).toHaveValue('https://first.example/start');
    expect(address).toHaveAttribute('readonly');
    await userEvent.type(address, 'x{Enter}');
    expect(address).toHaveValue('https://first.example/start');
    expect(tabs.went).toEqual([]);
    expect(await axeViolations(container)).toEqual([]);
  }, 30_000);

  it.each(SHARE_LANGUAGES)('is named in %s', async (language) => {
    const { shareUrl } = await session(true);
    render(<ShareViewer shareUrl={shareUrl} language={language} />);
    const name = resources[language].viewer.tabs.address;
    expect(name.trim()).not.toBe('');
    if (language !== 'en') expect(name).not.toBe(text.tabs.address);
    expect(await screen.findByRole('textbox', { name }, { timeout: 10_000 })).toHaveValue('https://first.example/start');
  }, 30_000);

  it('a browser window, which has its own address bar, shows none', async () => {
    const { shareUrl } = await session(false);
    render(<ShareViewer shareUrl={shareUrl} />);
    await screen.findByRole('tablist', { name: text.tabs.label }, { timeout: 10_000 });
    expect(screen.queryByRole('textbox', { name: text.tabs.address })).toBeNull();
  }, 30_000);

  it('in the compact row, and in the phone sheet', async () => {
    const { shareUrl, tabs } = await session(true);
    const { unmount } = render(<ShareViewer shareUrl={shareUrl} toolbar="compact" />);
    act(() => StandInResizeObserver.resize(1280, 844));
    const address = await field();
    expect(screen.getByRole('toolbar', { name: text.toolbar.label })).toContainElement(address);
    unmount();

    const { container } = render(<ShareViewer shareUrl={shareUrl} />);
    await field();
    act(() => StandInResizeObserver.resize(390, 844));
    const toolbar = screen.getByRole('toolbar', { name: text.toolbar.label });
    expect(toolbar).toHaveAttribute('data-toolbar', 'compact');
    await userEvent.click(within(toolbar).getByRole('button', { name: text.toolbar.more }));
    const inSheet = within(toolbar).getByRole('textbox', { name: text.tabs.address });
    await userEvent.clear(inSheet);
    await userEvent.type(inSheet, 'https://third.example/{Enter}');
    await waitFor(() => expect(tabs.went).toEqual(['tab-1 https://third.example/']));
    expect(await axeViolations(container)).toEqual([]);
  }, 30_000);
});
