// The viewer's tab strip (issue 36) against the real engine's share API, with the session's tabs
// from a stand-in browser (the fake runtime starts none; what real browsers do is
// test/engine/share-tabs.test.ts): a tablist the keyboard moves through, switches in, closes and
// opens from; each tab's icon shown from its data: address; the host page told of every change
// (onTabsChange); a view-only link sees the tabs and no controls; a refused action is said, and
// nothing changes. axe-clean in each state.
import { render, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ShareTab } from '../../src/protocol/index.js';
import { SessionTabs, type TabProbe } from '../../src/engine/runtime/browser/tabs.js';
import { ShareViewer } from '../../src/react/ShareViewer.js';
import { resources } from '../../src/react/i18n.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { waitFor as waitUntil } from '../helpers/session.js';
import { axeViolations } from './axe.js';

const text = resources.en.viewer;
/** A 1x1 PNG, the first page's icon. */
const ICON = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** A browser's tabs without a browser: what the share API lists and acts on. */
class StandInTabs extends SessionTabs {
  shown: string;
  /** When set, the browser fails every action with this. */
  failing: string | null = null;
  private next = 3;

  constructor() {
    super();
    this.opened('tab-1', 'https://first.example/', 'First');
    this.opened('tab-2', 'https://second.example/', 'Second');
    this.shown = 'tab-2';
    this.watch();
  }

  ids(): string[] {
    return this.list().map((tab) => tab.id);
  }

  protected async activateTab(id: string): Promise<void> {
    if (this.failing) throw new Error(this.failing);
    this.shown = id;
  }

  protected async closeTab(id: string): Promise<void> {
    if (this.failing) throw new Error(this.failing);
    if (this.shown === id) this.shown = this.ids().find((other) => other !== id)!;
  }

  protected async openTab(): Promise<string> {
    if (this.failing) throw new Error(this.failing);
    this.shown = `tab-${this.next++}`;
    return this.shown;
  }

  /** Where each `go` took a tab. */
  readonly went: string[] = [];
  protected async navigateTab(id: string, url: string): Promise<void> {
    if (this.failing) throw new Error(this.failing);
    this.went.push(`${id} ${url}`);
  }

  protected async probe(id: string): Promise<TabProbe> {
    return { visible: id === this.shown, icon: id === 'tab-1' ? 'https://first.example/icon.png' : '' };
  }

  protected async readIcon(): Promise<unknown> {
    return ['image/png', ICON];
  }

  protected release(): void {}
}

let fixture: EngineFixture<FakeRuntime>;

beforeAll(async () => {
  fixture = await startEngine({ name: 'tab-strip', runtime: 'fake' });
});

afterAll(async () => {
  await fixture?.close();
});

/** A running session whose browser has the stand-in's tabs: its share link, view-only link and tabs. */
async function sessionWithTabs(): Promise<{ shareUrl: string; viewUrl: string; tabs: StandInTabs }> {
  const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/` });
  expect(created.status).toBe('ok');
  const row = await waitUntil(() => fixture.engine.store.session(created.vmId), (found) => found?.status === 'running' && !!found.runtime_id, 10_000);
  const tabs = new StandInTabs();
  fixture.engine.runtime.get(row!.runtime_id!)!.ends.tabs = tabs;
  // The icon is fetched after the first look at the tabs.
  await waitUntil(() => tabs.list()[0]?.favicon, Boolean, 5_000);
  const linkId = new URL(created.shareUrl).search.slice(1);
  const view = (await (await fetch(`${fixture.engine.url}/share/${linkId}/view-only`, { method: 'POST' })).json()) as { shareUrl: string };
  return { shareUrl: created.shareUrl, viewUrl: view.shareUrl, tabs };
}

const names = () => screen.getAllByRole('tab').map((tab) => `${tab.textContent}${tab.getAttribute('aria-selected') === 'true' ? '*' : ''}`).join(',');

describe('the tab strip', () => {
  it('lists the tabs with their icons, and the keyboard moves, switches, closes and opens', async () => {
    const onTabsChange = vi.fn<(tabs: ShareTab[]) => void>();
    const { shareUrl, tabs } = await sessionWithTabs();
    const { container } = render(<ShareViewer shareUrl={shareUrl} onTabsChange={onTabsChange} />);
    const strip = await screen.findByRole('tablist', { name: text.tabs.label }, { timeout: 10_000 });
    expect(names()).toBe('First,Second*');
    // The first page's icon, from its data: address; the viewer loads no image from the web.
    const [first, second] = within(strip).getAllByRole('tab');
    expect(first!.querySelector('img')).toHaveAttribute('src', `data:image/png;base64,${ICON}`);
    expect(second!.querySelector('img')).toBeNull();
    for (const image of container.querySelectorAll('img')) expect(image.getAttribute('src')).toMatch(/^data:image\//);
    // The host page was told.
    await waitFor(() => expect(onTabsChange).toHaveBeenCalled());
    expect(onTabsChange.mock.lastCall![0].map((tab) => [tab.title, tab.active, tab.favicon !== undefined])).toEqual([['First', false, true], ['Second', true, false]]);
    expect(await axeViolations(container)).toEqual([]);

    // One tab stop: the one shown; Delete closes a tab (the × is for pointers). Arrows move between tabs; Enter switches.
    expect(second).toHaveAttribute('aria-keyshortcuts', 'Delete');
    expect(container.querySelectorAll('.rbk-viewer__tab-close')).toHaveLength(2);
    expect(second).toHaveAttribute('tabindex', '0');
    expect(first).toHaveAttribute('tabindex', '-1');
    second!.focus();
    await userEvent.keyboard('{ArrowLeft}');
    expect(first).toHaveFocus();
    await userEvent.keyboard('{End}');
    expect(second).toHaveFocus();
    await userEvent.keyboard('{Home}{Enter}');
    await waitFor(() => expect(names()).toBe('First*,Second'));
    expect(tabs.shown).toBe('tab-1');

    // Delete closes the focused tab.
    await userEvent.keyboard('{ArrowRight}{Delete}');
    await waitFor(() => expect(names()).toBe('First*'));
    expect(tabs.ids()).toEqual(['tab-1']);
    // The last tab cannot be closed (the session would end): no close button, no shortcut.
    expect(container.querySelector('.rbk-viewer__tab-close')).toBeNull();
    expect(screen.getByRole('tab')).not.toHaveAttribute('aria-keyshortcuts');

    // + opens a new tab, shown.
    await userEvent.click(screen.getByRole('button', { name: text.tabs.open }));
    await waitFor(() => expect(names()).toBe(`First,${text.tabs.untitled}*`));
    expect(tabs.ids()).toHaveLength(2);
    await waitFor(() => expect(onTabsChange.mock.lastCall![0].map((tab) => tab.active)).toEqual([false, true]), { timeout: 10_000 });
    expect(await axeViolations(container)).toEqual([]);
  }, 30_000);

  it('shows a view-only link the tabs and no way to change them', async () => {
    const { viewUrl, tabs } = await sessionWithTabs();
    const { container } = render(<ShareViewer shareUrl={viewUrl} />);
    await screen.findByRole('tablist', { name: text.tabs.label }, { timeout: 10_000 });
    expect(names()).toBe('First,Second*');
    expect(screen.getByText(text.tabs.viewOnly)).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: text.tabs.open })).toBeNull();
    expect(container.querySelector('.rbk-viewer__tab-close')).toBeNull();
    const [first] = screen.getAllByRole('tab');
    expect(first).toHaveAttribute('aria-disabled', 'true');
    // Pressing a tab changes nothing.
    await userEvent.click(first!);
    first!.focus();
    await userEvent.keyboard('{Enter}');
    expect(names()).toBe('First,Second*');
    expect(tabs.shown).toBe('tab-2');
    expect(await axeViolations(container)).toEqual([]);
  }, 30_000);

  it('says why an action was refused, and the tabs stay as they were', async () => {
    const { shareUrl, tabs } = await sessionWithTabs();
    const { container } = render(<ShareViewer shareUrl={shareUrl} />);
    await screen.findByRole('tablist', { name: text.tabs.label }, { timeout: 10_000 });
    tabs.failing = 'the page did not answer';
    await userEvent.click(screen.getAllByRole('tab')[0]!);
    const status = await screen.findByText(/the page did not answer/);
    expect(status).toHaveAttribute('role', 'status');
    expect(status.textContent).toContain(text.tabs.refused.replace('{{message}}', '').trim());
    expect(names()).toBe('First,Second*');
    expect(tabs.shown).toBe('tab-2');
    expect(await axeViolations(container)).toEqual([]);
  }, 30_000);
});
