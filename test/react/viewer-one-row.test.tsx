// The viewer's chrome in one row on a desktop and one floating button on a phone (issue 44,
// decisions.md 162 and 163), against the real engine's share API and `people` channel, with a
// running session whose browser has two tabs (a stand-in: the fake runtime starts no browser):
// - the compact toolbar holds the remote tabs and who watches and drives in its one row (before,
//   each was a row of its own above the picture);
// - a viewer whose embedder chose no toolbar shows the one row (decisions.md 180);
// - the full toolbar, asked for by name, keeps its rows on a wide viewer;
// - a viewer 560 px wide or less (a phone, a small frame) shows the full toolbar as the compact
//   one (the floating "More" button whose sheet holds every control, the tabs and the people
//   among them), and turns back when it is wide again.
// The width comes from a stand-in ResizeObserver (jsdom lays nothing out); the container query that
// floats the button is the browser's (the bench's screenshots show it). axe-clean in each state.
import { act, render, screen, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SessionTabs, type TabProbe } from '../../src/engine/runtime/browser/tabs.js';
import { resources } from '../../src/react/i18n.js';
import { ShareViewer } from '../../src/react/ShareViewer.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { waitFor as waitUntil } from '../helpers/session.js';
import { axeViolations } from './axe.js';
import { StandInResizeObserver } from './stand-in-resize-observer.js';

const text = resources.en.viewer;

/** Two tabs without a browser, the second shown. */
class StandInTabs extends SessionTabs {
  constructor() {
    super();
    this.opened('tab-1', 'https://first.example/', 'First');
    this.opened('tab-2', 'https://second.example/', 'Second');
    this.watch();
  }
  protected async activateTab(): Promise<void> {}
  protected async closeTab(): Promise<void> {}
  protected async openTab(): Promise<string> {
    return 'tab-3';
  }
  protected async navigateTab(): Promise<void> {}
  protected async probe(id: string): Promise<TabProbe> {
    return { visible: id === 'tab-2', icon: '' };
  }
  protected async readIcon(): Promise<unknown> {
    return null;
  }
  protected release(): void {}
}

let fixture: EngineFixture<FakeRuntime>;
const sessions: string[] = [];

beforeAll(async () => {
  fixture = await startEngine({ name: 'viewer-one-row', runtime: 'fake' });
  StandInResizeObserver.install();
});

afterEach(async () => {
  for (const id of sessions.splice(0)) await fixture.call('/vm/remove', { id });
});

afterAll(async () => {
  StandInResizeObserver.remove();
  await fixture?.close();
});

/** A running session whose browser has the stand-in's two tabs: its share link. */
async function sessionWithTabs(): Promise<string> {
  const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/` });
  expect(created.status).toBe('ok');
  sessions.push(created.vmId);
  const row = await waitUntil(() => fixture.engine.store.session(created.vmId), (found) => found?.status === 'running' && !!found.runtime_id, 10_000);
  fixture.engine.runtime.get(row!.runtime_id!)!.ends.tabs = new StandInTabs();
  return created.shareUrl;
}

/** Waits for the live viewer: its toolbar, the remote tabs and the people button all there. */
async function liveViewer(): Promise<HTMLElement> {
  await screen.findByRole('tablist', { name: text.tabs.label }, { timeout: 10_000 });
  await screen.findByRole('button', { name: text.people.button.replace('{{count}}', '1') }, { timeout: 10_000 });
  return screen.getByRole('toolbar', { name: text.toolbar.label });
}

const peopleButton = (within_: HTMLElement) => within(within_).getByRole('button', { name: text.people.button.replace('{{count}}', '1') });

describe('the chrome in one row, and one button on a phone', () => {
  it('compact: the remote tabs and who watches and drives are in the one row, no row of their own', async () => {
    const { container } = render(<ShareViewer shareUrl={await sessionWithTabs()} toolbar="compact" />);
    act(() => StandInResizeObserver.resize(1280));
    const toolbar = await liveViewer();
    expect(toolbar).toHaveAttribute('data-toolbar', 'compact');
    expect(within(toolbar).getByRole('tablist', { name: text.tabs.label })).toBeInTheDocument();
    expect(within(toolbar).getAllByRole('tab').map((tab) => tab.textContent)).toEqual(['First', 'Second']);
    expect(peopleButton(toolbar)).toBeInTheDocument();
    // Nothing of the tabs or the people outside the row.
    const live = container.querySelector('.rbk-viewer__live')!;
    expect([...live.children].filter((child) => child.matches('.rbk-viewer__tabs, .rbk-viewer__people'))).toEqual([]);
    expect(await axeViolations(container)).toEqual([]);
    // The people list still opens from the row.
    await userEvent.click(peopleButton(toolbar));
    expect(within(toolbar).getByRole('region', { name: text.people.label })).toBeInTheDocument();
    expect(await axeViolations(container)).toEqual([]);
  });

  it('no toolbar chosen on a wide viewer: the one row, with the tabs and the people in it', async () => {
    const { container } = render(<ShareViewer shareUrl={await sessionWithTabs()} />);
    act(() => StandInResizeObserver.resize(1280));
    const toolbar = await liveViewer();
    expect(container.firstElementChild).toHaveAttribute('data-toolbar', 'compact');
    expect(toolbar).toHaveAttribute('data-toolbar', 'compact');
    expect(within(toolbar).getByRole('tablist', { name: text.tabs.label })).toBeInTheDocument();
    expect(peopleButton(toolbar)).toBeInTheDocument();
    expect(within(toolbar).getByRole('button', { name: text.toolbar.more })).toBeInTheDocument();
    const live = container.querySelector('.rbk-viewer__live')!;
    expect([...live.children].map((child) => child.className).filter((name) => /__(tabs|toolbar|people)$/.test(name))).toEqual(['rbk-viewer__toolbar']);
  });

  it('full on a wide viewer: every control written out, the tabs and the people each in their row', async () => {
    const { container } = render(<ShareViewer shareUrl={await sessionWithTabs()} toolbar="full" />);
    act(() => StandInResizeObserver.resize(1280));
    const toolbar = await liveViewer();
    expect(toolbar).not.toHaveAttribute('data-toolbar');
    expect(within(toolbar).getByRole('button', { name: text.toolbar.keyboard })).toBeInTheDocument();
    expect(within(toolbar).queryByRole('tablist')).toBeNull();
    expect(within(toolbar).queryByRole('button', { name: text.toolbar.more })).toBeNull();
    const live = container.querySelector('.rbk-viewer__live')!;
    expect(live).toHaveAttribute('data-toolbar', 'full');
    expect([...live.children].map((child) => child.className).filter((name) => /__(tabs|toolbar|people)$/.test(name))).toEqual(['rbk-viewer__tabs', 'rbk-viewer__toolbar', 'rbk-viewer__people']);
  });

  it('full on a phone-wide viewer: one "More" button whose sheet holds every control, the tabs and the people; wide again, the full toolbar', async () => {
    const { container } = render(<ShareViewer shareUrl={await sessionWithTabs()} toolbar="full" />);
    await liveViewer();
    act(() => StandInResizeObserver.resize(390));
    const live = container.querySelector('.rbk-viewer__live')!;
    expect(live).toHaveAttribute('data-toolbar', 'compact');
    // The chosen toolbar is still the embedder's; only this width shows it compact.
    expect(container.firstElementChild).toHaveAttribute('data-toolbar', 'full');
    const toolbar = screen.getByRole('toolbar', { name: text.toolbar.label });
    expect(toolbar).toHaveAttribute('data-toolbar', 'compact');
    expect(within(toolbar).getByRole('tablist', { name: text.tabs.label })).toBeInTheDocument();
    expect(peopleButton(toolbar)).toBeInTheDocument();
    expect(within(toolbar).queryByRole('button', { name: text.toolbar.keyboard })).toBeNull();
    const more = within(toolbar).getByRole('button', { name: text.toolbar.more });
    await userEvent.click(more);
    expect(more).toHaveAttribute('aria-expanded', 'true');
    for (const name of [text.toolbar.keyboard, text.toolbar.paste, text.toolbar.esc, text.toolbar.shareViewOnly, text.toolbar.fullscreen, text.leave]) {
      expect(within(toolbar).getByRole('button', { name })).toBeInTheDocument();
    }
    expect(await axeViolations(container)).toEqual([]);

    // A width of 560 px is still a phone's; 561 px is not.
    act(() => StandInResizeObserver.resize(560));
    expect(live).toHaveAttribute('data-toolbar', 'compact');
    act(() => StandInResizeObserver.resize(561));
    expect(live).toHaveAttribute('data-toolbar', 'full');
    expect(screen.getByRole('toolbar', { name: text.toolbar.label })).not.toHaveAttribute('data-toolbar');
    expect(screen.getByRole('button', { name: text.toolbar.keyboard })).toBeInTheDocument();
  });

  it('none stays none on a phone: the page around it gives the commands', async () => {
    const { container } = render(<ShareViewer shareUrl={await sessionWithTabs()} toolbar="none" />);
    await screen.findByRole('tablist', { name: text.tabs.label }, { timeout: 10_000 });
    act(() => StandInResizeObserver.resize(390));
    expect(screen.queryByRole('toolbar')).toBeNull();
    expect(container.querySelector('.rbk-viewer__live')).toHaveAttribute('data-toolbar', 'none');
  });
});
