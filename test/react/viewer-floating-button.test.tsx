// The phone's floating "More" button keeps off the remote browser's own controls and goes where a
// person puts it (issue 44, decisions.md 173): bottom right by default (a Chromium or Firefox
// window has every control of its own on its top edge, its ⋮ or ☰ menu at the top right, where
// the button sat before); dragged with a finger to another corner it lands in the corner nearest
// where it was let go, and the drag does not open the sheet; the sheet's "Place this button"
// moves it from the keyboard; the corner is kept in localStorage and found again by a viewer
// mounted later. Against the real engine's share API (fake runtime). jsdom lays nothing out: a
// stand-in ResizeObserver gives the viewer's width and the live screen's box is given for the drop.
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SHARE_LANGUAGES } from '../../src/protocol/index.js';
import { resources } from '../../src/react/i18n.js';
import { ShareViewer } from '../../src/react/ShareViewer.js';
import { FLOATING_CORNER_KEY } from '../../src/react/viewer/floating-corner.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { insertLinkedSession } from '../helpers/linked-session.js';
import { axeViolations } from './axe.js';
import { StandInResizeObserver } from './stand-in-resize-observer.js';

const text = resources.en.viewer;

let fixture: EngineFixture<FakeRuntime>;

beforeAll(async () => {
  fixture = await startEngine({ name: 'viewer-floating-button', runtime: 'fake' });
  StandInResizeObserver.install();
});

afterEach(() => localStorage.clear());

afterAll(async () => {
  StandInResizeObserver.remove();
  await fixture?.close();
});

function runningLink(): Promise<string> {
  return insertLinkedSession(fixture.engine, { accountId: fixture.account.id, subscriptionId: fixture.account.subscriptionId }, { status: 'running' });
}

/** The viewer on a 390x844 phone: its toolbar, shown as the one floating button. */
async function phoneViewer(link: string): Promise<{ toolbar: HTMLElement; more: HTMLElement; container: HTMLElement }> {
  const { container } = render(<ShareViewer shareUrl={link} />);
  await screen.findByRole('toolbar', { name: text.toolbar.label }, { timeout: 10_000 });
  act(() => StandInResizeObserver.resize(390, 844));
  const live = container.querySelector<HTMLElement>('.rbk-viewer__live')!;
  live.getBoundingClientRect = () => ({ left: 0, top: 0, right: 390, bottom: 844, width: 390, height: 844, x: 0, y: 0, toJSON: () => ({}) });
  const compact = screen.getByRole('toolbar', { name: text.toolbar.label });
  expect(compact).toHaveAttribute('data-toolbar', 'compact');
  return { toolbar: compact, more: within(compact).getByRole('button', { name: text.toolbar.more }), container };
}

describe('the floating "More" button', () => {
  it('sits at the bottom right by default, away from the remote browser menu at the top right', async () => {
    const { toolbar, more, container } = await phoneViewer(await runningLink());
    expect(toolbar).toHaveAttribute('data-corner', 'bottom-right');
    // A tap still opens the sheet, which offers the four corners, this one chosen.
    await userEvent.click(more);
    expect(more).toHaveAttribute('aria-expanded', 'true');
    const place = within(toolbar).getByRole('group', { name: text.toolbar.place });
    expect(within(place).getAllByRole('button').map((button) => [button.textContent, button.getAttribute('aria-pressed')])).toEqual([
      [text.toolbar.corner['top-left'], 'false'],
      [text.toolbar.corner['top-right'], 'false'],
      [text.toolbar.corner['bottom-left'], 'false'],
      [text.toolbar.corner['bottom-right'], 'true'],
    ]);
    expect(await axeViolations(container)).toEqual([]);
  });

  it('is dragged with a finger to the corner nearest where it is let go, without opening the sheet, and stays there in a viewer mounted later', async () => {
    const link = await runningLink();
    const { toolbar, more } = await phoneViewer(link);
    fireEvent.pointerDown(more, { pointerId: 7, pointerType: 'touch', clientX: 360, clientY: 810, button: 0 });
    fireEvent.pointerMove(more, { pointerId: 7, pointerType: 'touch', clientX: 200, clientY: 500 });
    // It follows the finger while dragged.
    expect(toolbar).toHaveAttribute('data-dragging');
    expect(toolbar.style.transform).toBe('translate(-160px, -310px)');
    fireEvent.pointerMove(more, { pointerId: 7, pointerType: 'touch', clientX: 40, clientY: 90 });
    fireEvent.pointerUp(more, { pointerId: 7, pointerType: 'touch', clientX: 40, clientY: 90 });
    fireEvent.click(more);
    expect(toolbar).toHaveAttribute('data-corner', 'top-left');
    expect(toolbar).not.toHaveAttribute('data-dragging');
    expect(toolbar.style.transform).toBe('');
    expect(more).toHaveAttribute('aria-expanded', 'false');
    expect(localStorage.getItem(FLOATING_CORNER_KEY)).toBe('top-left');

    // A few pixels of wobble is a tap, not a drag.
    fireEvent.pointerDown(more, { pointerId: 8, pointerType: 'touch', clientX: 40, clientY: 90, button: 0 });
    fireEvent.pointerMove(more, { pointerId: 8, pointerType: 'touch', clientX: 44, clientY: 93 });
    fireEvent.pointerUp(more, { pointerId: 8, pointerType: 'touch', clientX: 44, clientY: 93 });
    fireEvent.click(more);
    expect(more).toHaveAttribute('aria-expanded', 'true');
    expect(toolbar).toHaveAttribute('data-corner', 'top-left');

    cleanup();
    const again = await phoneViewer(link);
    expect(again.toolbar).toHaveAttribute('data-corner', 'top-left');
  });

  it('is placed from the keyboard through its sheet, and remembered', async () => {
    const link = await runningLink();
    const { toolbar, more } = await phoneViewer(link);
    more.focus();
    await userEvent.keyboard('{Enter}');
    expect(more).toHaveAttribute('aria-expanded', 'true');
    const bottomLeft = within(within(toolbar).getByRole('group', { name: text.toolbar.place })).getByRole('button', { name: text.toolbar.corner['bottom-left'] });
    bottomLeft.focus();
    await userEvent.keyboard('{Enter}');
    expect(toolbar).toHaveAttribute('data-corner', 'bottom-left');
    expect(bottomLeft).toHaveAttribute('aria-pressed', 'true');
    cleanup();
    expect((await phoneViewer(link)).toolbar).toHaveAttribute('data-corner', 'bottom-left');
  });

  it.each(SHARE_LANGUAGES)('offers the corners in %s', async (language) => {
    const words = resources[language].viewer.toolbar;
    render(<ShareViewer shareUrl={await runningLink()} language={language} />);
    await screen.findByRole('toolbar', { name: words.label }, { timeout: 10_000 });
    act(() => StandInResizeObserver.resize(390, 844));
    const toolbar = screen.getByRole('toolbar', { name: words.label });
    await userEvent.click(within(toolbar).getByRole('button', { name: words.more }));
    const place = within(toolbar).getByRole('group', { name: words.place });
    const names = within(place).getAllByRole('button').map((button) => button.textContent);
    expect(new Set(names).size).toBe(4);
    if (language !== 'en') expect(names).not.toEqual(Object.values(text.toolbar.corner));
  });

  it('a stored value that is not a corner is the default; a wide compact row has no corner to choose', async () => {
    localStorage.setItem(FLOATING_CORNER_KEY, 'middle');
    const { toolbar } = await phoneViewer(await runningLink());
    expect(toolbar).toHaveAttribute('data-corner', 'bottom-right');
    cleanup();
    render(<ShareViewer shareUrl={await runningLink()} toolbar="compact" />);
    const row = await screen.findByRole('toolbar', { name: text.toolbar.label }, { timeout: 10_000 });
    act(() => StandInResizeObserver.resize(1280, 844));
    await userEvent.click(within(row).getByRole('button', { name: text.toolbar.more }));
    expect(within(row).queryByRole('group', { name: text.toolbar.place })).toBeNull();
  });
});
