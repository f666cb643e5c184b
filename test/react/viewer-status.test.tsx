// What a screen reader hears from the viewer, whatever its toolbar shows (issue 44, decisions.md
// 172): the connection, the recording and who drives are said by live regions the live screen
// always renders, outside the toolbar, so the phone's floating "More" button with its sheet closed
// (whose container query hides everything in the toolbar but the button) and `toolbar="none"`
// leave them heard. Against the real engine's share API and `people` channel (fake runtime); a
// change of the session (recording starts) is heard in the region with the sheet still closed.
import { act, render, screen, waitFor, within } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resources } from '../../src/react/i18n.js';
import { ShareViewer } from '../../src/react/ShareViewer.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { waitFor as waitUntil } from '../helpers/session.js';
import { axeViolations } from './axe.js';
import { StandInResizeObserver } from './stand-in-resize-observer.js';

const text = resources.en.viewer;

let fixture: EngineFixture<FakeRuntime>;
const sessions: string[] = [];

beforeAll(async () => {
  fixture = await startEngine({ name: 'viewer-status', runtime: 'fake' });
  StandInResizeObserver.install();
});

afterEach(async () => {
  for (const id of sessions.splice(0)) await fixture.call('/vm/remove', { id });
});

afterAll(async () => {
  StandInResizeObserver.remove();
  await fixture?.close();
});

/** A running session: its id and share link. */
async function runningSession(): Promise<{ id: string; link: string }> {
  const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/` });
  expect(created.status).toBe('ok');
  sessions.push(created.vmId);
  await waitUntil(() => fixture.engine.store.session(created.vmId), (found) => found?.status === 'running' && !!found.runtime_id, 10_000);
  return { id: created.vmId, link: created.shareUrl };
}

/** The viewer's live regions, by subject (`data-status`), with what each says now. */
function said(): Record<string, string> {
  return Object.fromEntries(screen.getAllByRole('status').filter((region) => region.hasAttribute('data-status')).map((region) => [region.getAttribute('data-status')!, region.textContent ?? '']));
}

const connectionWords = [text.running.connecting, text.running.connected, text.running.waking];
const recordingWords = `${text.running.recorded}: ${text.running.recordedNote}`;

describe('the status a screen reader hears', () => {
  it('on a phone with the sheet closed: the connection, who drives and a recording that starts, outside the toolbar', async () => {
    const { id, link } = await runningSession();
    const { container } = render(<ShareViewer shareUrl={link} />);
    await screen.findByRole('button', { name: text.people.button.replace('{{count}}', '1') }, { timeout: 10_000 });
    act(() => StandInResizeObserver.resize(390));
    const toolbar = screen.getByRole('toolbar', { name: text.toolbar.label });
    expect(toolbar).toHaveAttribute('data-toolbar', 'compact');
    expect(within(toolbar).getByRole('button', { name: text.toolbar.more })).toHaveAttribute('aria-expanded', 'false');
    // Nothing in the toolbar is a live region: its closed sheet would hide it.
    expect(within(toolbar).queryAllByRole('status')).toEqual([]);
    const regions = screen.getAllByRole('status').filter((region) => region.hasAttribute('data-status'));
    for (const region of regions) {
      expect(toolbar).not.toContainElement(region);
      expect(region).toHaveAttribute('aria-live', 'polite');
      expect(region.closest('[aria-hidden="true"]')).toBeNull();
    }
    await waitFor(() => expect(connectionWords).toContain(said().connection));
    await waitFor(() => expect(said().people).toBe(text.people.everyone), { timeout: 10_000 });
    expect(said().recording).toBe('');
    expect(await axeViolations(container)).toEqual([]);

    // The session starts being recorded: heard, the sheet still closed.
    await fixture.engine.store.updateSession(id, { recorded: true });
    await waitFor(() => expect(said().recording).toBe(recordingWords), { timeout: 10_000 });
    expect(within(toolbar).getByRole('button', { name: text.toolbar.more })).toHaveAttribute('aria-expanded', 'false');
    expect(await axeViolations(container)).toEqual([]);
  });

  it('with toolbar="none": the same regions, said though nothing of the toolbar shows', async () => {
    const { id, link } = await runningSession();
    const { container } = render(<ShareViewer shareUrl={link} toolbar="none" />);
    await screen.findByRole('application', { name: text.running.region.replace('{{browser}}', 'Chromium') }, { timeout: 10_000 });
    expect(screen.queryByRole('toolbar')).toBeNull();
    await waitFor(() => expect(connectionWords).toContain(said().connection));
    await waitFor(() => expect(said().people).toBe(text.people.everyone), { timeout: 10_000 });
    await fixture.engine.store.updateSession(id, { recorded: true });
    await waitFor(() => expect(said().recording).toBe(recordingWords), { timeout: 10_000 });
    expect(await axeViolations(container)).toEqual([]);
  });

  it('the full toolbar on a wide viewer writes the connection out for the eye, and the one region says it', async () => {
    const { link } = await runningSession();
    render(<ShareViewer shareUrl={link} toolbar="full" />);
    const toolbar = await screen.findByRole('toolbar', { name: text.toolbar.label }, { timeout: 10_000 });
    act(() => StandInResizeObserver.resize(1280));
    expect(within(toolbar).queryAllByRole('status')).toEqual([]);
    await waitFor(() => expect(connectionWords).toContain(said().connection));
    expect(toolbar.querySelector('.rbk-viewer__connection')).toHaveTextContent(said().connection!);
  });
});
