// <ShareViewer>'s toolbar choice (issue 44, decisions.md 153) against the real engine's share API:
// `compact` keeps one row (connection as a dot, sound, full screen, leave) with the input
// controls behind "More", in every language and with no axe violation; `none` shows no toolbar
// at all, the live screen still there; a view-only link's compact row has no "More".
import { render, screen, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { SHARE_LANGUAGES, shareLinkOptions, type ShareLanguage } from '../../src/protocol/index.js';
import { resources } from '../../src/react/i18n.js';
import { ShareViewer } from '../../src/react/ShareViewer.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { insertLinkedSession } from '../helpers/linked-session.js';
import { axeViolations } from './axe.js';

let fixture: EngineFixture<FakeRuntime>;
let engine: Engine<FakeRuntime>;

beforeAll(async () => {
  fixture = await startEngine({ name: 'viewer-toolbar', runtime: 'fake' });
  engine = fixture.engine;
});

afterAll(async () => {
  await fixture?.close();
});

function runningLink(language: ShareLanguage = 'en'): Promise<string> {
  return insertLinkedSession(engine, { accountId: fixture.account.id, subscriptionId: fixture.account.subscriptionId }, { status: 'running', share_language: language });
}

describe.each(SHARE_LANGUAGES)('the compact toolbar in %s', (language) => {
  const text = resources[language].viewer;
  it('shows sound, full screen and leave in one row, and the input controls only behind "More"', async () => {
    const { container } = render(<ShareViewer shareUrl={await runningLink(language)} toolbar="compact" />);
    const toolbar = await screen.findByRole('toolbar', { name: text.toolbar.label });
    expect(toolbar).toHaveAttribute('data-toolbar', 'compact');
    for (const name of [text.toolbar.fullscreen, text.leave]) expect(within(toolbar).getByRole('button', { name })).toBeInTheDocument();
    for (const name of [text.toolbar.keyboard, text.toolbar.paste, text.toolbar.esc, text.toolbar.shareViewOnly]) expect(within(toolbar).queryByRole('button', { name })).toBeNull();
    // The connection is not written out; the viewer's status says it, outside the toolbar (decisions.md 172).
    expect(within(toolbar).queryByRole('status')).toBeNull();
    expect(screen.getAllByRole('status').some((region) => region.closest('.rbk-viewer__sr-only') !== null && /\S/.test(region.textContent ?? ''))).toBe(true);
    const more = within(toolbar).getByRole('button', { name: text.toolbar.more });
    expect(more).toHaveAttribute('aria-expanded', 'false');
    await userEvent.click(more);
    expect(more).toHaveAttribute('aria-expanded', 'true');
    for (const name of [text.toolbar.keyboard, text.toolbar.paste, text.toolbar.esc, text.toolbar.shareViewOnly]) expect(within(toolbar).getByRole('button', { name })).toBeInTheDocument();
    expect(await axeViolations(container)).toEqual([]);
    await userEvent.click(more);
    expect(within(toolbar).queryByRole('button', { name: text.toolbar.keyboard })).toBeNull();
  });
});

describe('the toolbar choice', () => {
  const text = resources.en.viewer;

  it('none: the live screen without any toolbar (the page around it gives the commands)', async () => {
    const { container } = render(<ShareViewer shareUrl={await runningLink()} toolbar="none" />);
    expect(await screen.findByRole('application', { name: text.running.region.replace('{{browser}}', 'Chromium') })).toBeInTheDocument();
    expect(screen.queryByRole('toolbar')).toBeNull();
    expect(screen.queryByRole('button', { name: text.leave })).toBeNull();
    expect(container.firstElementChild).toHaveAttribute('data-toolbar', 'none');
    // Still takes keys: the viewer's own input is there.
    expect(screen.getByRole('textbox', { name: text.running.typeHere })).toBeInTheDocument();
  });

  it('a view-only viewer in compact has nothing behind "More" to offer', async () => {
    render(<ShareViewer shareUrl={await runningLink()} toolbar="compact" viewOnly />);
    const toolbar = await screen.findByRole('toolbar', { name: text.toolbar.label });
    expect(within(toolbar).getByRole('button', { name: text.toolbar.more })).not.toHaveAttribute('data-input');
    expect(within(toolbar).getByRole('button', { name: text.leave })).toBeInTheDocument();
  });

  it("is read from the link's embedder options, anything unknown being the one row", () => {
    const link = 'https://share.example.com/en/s?AbCdEfGhIjKlMnOpQrSt_-';
    expect(shareLinkOptions(`${link}&toolbar=none`).toolbar).toBe('none');
    expect(shareLinkOptions(`${link}&chrome=compact&toolbar=compact`)).toEqual({ chrome: 'compact', toolbar: 'compact', viewOnly: false });
    expect(shareLinkOptions(`${link}&toolbar=full`).toolbar).toBe('full');
    expect(shareLinkOptions(`${link}&toolbar=huge`).toolbar).toBe('compact');
    expect(shareLinkOptions(link).toolbar).toBe('compact');
  });
});
