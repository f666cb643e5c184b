// <ShareViewer> for a session in standby (issue 46, decisions.md 160), against the real engine's
// share API: the state says `standby`, and while the live screen connects (the connection wakes
// the session) the viewer says it is waking up, in every language, where it otherwise says it is
// connecting. A session ended because it could not be woken or resumed says why (decisions.md
// 166); one ended otherwise says only that it ended. The session row is set in the engine's store
// (the fake runtime: no browser).
import { render, screen, waitFor } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARE_LANGUAGES } from '../../src/protocol/index.js';
import { ShareViewer } from '../../src/react/ShareViewer.js';
import { resources } from '../../src/react/i18n.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { insertLinkedSession } from '../helpers/linked-session.js';
import { axeViolations } from './axe.js';

let fixture: EngineFixture<FakeRuntime>;

beforeAll(async () => {
  fixture = await startEngine({ name: 'viewer-standby', runtime: 'fake' });
});

afterAll(async () => {
  await fixture?.close();
});

const owner = () => ({ accountId: fixture.account.id, subscriptionId: fixture.account.subscriptionId });

describe.each(SHARE_LANGUAGES)('in %s', (language) => {
  const text = resources[language].viewer;

  it('says the session is waking up while it connects to one in standby', async () => {
    const link = await insertLinkedSession(fixture.engine, owner(), { status: 'running', share_language: language, standby: true });
    // The share state says so (its other fields as for any running session).
    const state = (await (await fetch(`${fixture.engine.url}/share/${new URL(link).search.slice(1)}`)).json()) as Record<string, unknown>;
    expect(state).toMatchObject({ state: 'running', standby: true });
    const { container } = render(<ShareViewer shareUrl={link} />);
    // Said by the viewer's status (decisions.md 172), and written in the toolbar.
    await waitFor(() => expect(screen.getAllByRole('status').map((region) => region.textContent)).toContain(text.running.waking));
    expect(screen.queryByText(text.running.connecting)).toBeNull();
    expect(await axeViolations(container)).toEqual([]);
  });

  it('says it is connecting to a session that is awake', async () => {
    const link = await insertLinkedSession(fixture.engine, owner(), { status: 'running', share_language: language });
    const state = (await (await fetch(`${fixture.engine.url}/share/${new URL(link).search.slice(1)}`)).json()) as Record<string, unknown>;
    expect(state.standby).toBeUndefined();
    render(<ShareViewer shareUrl={link} />);
    expect((await screen.findAllByText(text.running.connecting)).length).toBeGreaterThan(0);
    expect(screen.queryByText(text.running.waking)).toBeNull();
  });

  it('says why a session ended when it could not be resumed from hibernation, and nothing more for other ends', async () => {
    const reason = 'the session could not be resumed from hibernation: its saved state was refused (it was altered)';
    const link = await insertLinkedSession(fixture.engine, owner(), { status: 'suspended', share_language: language, end_reason: reason });
    const state = (await (await fetch(`${fixture.engine.url}/share/${new URL(link).search.slice(1)}`)).json()) as Record<string, unknown>;
    expect(state).toMatchObject({ state: 'ended', reason });
    const { container, unmount } = render(<ShareViewer shareUrl={link} />);
    expect(await screen.findByText(text.ended.title)).toBeInTheDocument();
    expect(screen.getByText(reason)).toHaveAttribute('lang', 'en');
    expect(await axeViolations(container)).toEqual([]);
    unmount();
    const idle = await insertLinkedSession(fixture.engine, owner(), { status: 'suspended', share_language: language, end_reason: 'no viewer for the idle timeout' });
    const idleState = (await (await fetch(`${fixture.engine.url}/share/${new URL(idle).search.slice(1)}`)).json()) as Record<string, unknown>;
    expect(idleState.reason).toBeUndefined();
    render(<ShareViewer shareUrl={idle} />);
    expect(await screen.findByText(text.ended.title)).toBeInTheDocument();
    expect(screen.queryByText('no viewer for the idle timeout')).toBeNull();
  });
});
