// <ShareViewer> against the real engine's share API: every screen in every language, with axe
// checks. Session states are set in the engine's store (no browser is started for them: the fake runtime).
import { render, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SHARE_LANGUAGES, type ShareLanguage } from '../../src/protocol/index.js';
import type { Engine } from '../../src/engine/engine.js';
import { ShareViewer } from '../../src/react/ShareViewer.js';
import { resources } from '../../src/react/i18n.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { insertLinkedSession } from '../helpers/linked-session.js';
import { axeViolations } from './axe.js';

let fixture: EngineFixture<FakeRuntime>;
let engine: Engine<FakeRuntime>;
let accountId: string;
let subscriptionId: string;

/** A session row in the given status, and its share link in `language`. */
function sessionLink(status: string, language: ShareLanguage, callbackUrl: string | null = null, recorded = false): Promise<string> {
  return insertLinkedSession(engine, { accountId, subscriptionId }, { status, share_language: language, callback_url: callbackUrl, recorded });
}

beforeAll(async () => {
  fixture = await startEngine({ name: 'viewer', runtime: 'fake' });
  engine = fixture.engine;
  ({ id: accountId, subscriptionId } = fixture.account);
});

afterAll(async () => {
  await fixture?.close();
});

describe.each(SHARE_LANGUAGES)('in %s', (language) => {
  const text = resources[language].viewer;

  it('shows the waiting screen with progress and a screen-reader status', async () => {
    const { container } = render(<ShareViewer shareUrl={await sessionLink('starting', language)} />);
    expect(await screen.findByRole('heading', { name: text.waiting.title })).toBeInTheDocument();
    expect(screen.getByRole('progressbar', { name: text.waiting.progress })).toBeInTheDocument();
    const status = screen.getByRole('status');
    expect(status).toHaveAttribute('aria-live', 'polite');
    expect(status).toHaveTextContent(text.waiting.status.replace('{{browser}}', 'Chromium'));
    expect(container.firstElementChild).toHaveAttribute('lang', language);
    await waitFor(() => expect(container.firstElementChild).toHaveAttribute('data-state', 'waiting'));
    expect(await axeViolations(container)).toEqual([]);
  });

  it('shows the live session screen with its controls: one row, the input controls behind "More"', async () => {
    const { container } = render(<ShareViewer shareUrl={await sessionLink('running', language)} />);
    expect(await screen.findByRole('application', { name: text.running.region.replace('{{browser}}', 'Chromium') })).toBeInTheDocument();
    const toolbar = screen.getByRole('toolbar', { name: text.toolbar.label });
    for (const name of [text.toolbar.fullscreen, text.leave]) expect(toolbar).toContainElement(screen.getByRole('button', { name }));
    expect(screen.queryByRole('button', { name: text.toolbar.keyboard })).toBeNull();
    await userEvent.click(within(toolbar).getByRole('button', { name: text.toolbar.more }));
    for (const name of [text.toolbar.paste, text.toolbar.keyboard, text.toolbar.esc]) {
      expect(toolbar).toContainElement(screen.getByRole('button', { name }));
    }
    // Not recorded: nothing says it is.
    expect(screen.queryByText(text.running.recorded)).toBeNull();
    expect(await axeViolations(container)).toEqual([]);
  });

  it('tells everyone watching a recorded session that it is recorded, in words a screen reader reads too', async () => {
    const { container } = render(<ShareViewer shareUrl={await sessionLink('running', language, null, true)} viewOnly />);
    const toolbar = await screen.findByRole('toolbar', { name: text.toolbar.label });
    const sign = await screen.findByText(text.running.recorded);
    expect(toolbar).toContainElement(sign);
    // Said by the viewer's own status, outside the toolbar (decisions.md 172), the note with it.
    const heard = screen.getAllByRole('status').find((region) => region.textContent?.includes(text.running.recordedNote));
    expect(heard).toBeDefined();
    expect(toolbar).not.toContainElement(heard!);
    expect(await axeViolations(container)).toEqual([]);
  });

  it('shows the ended screen, and Leave goes to the callbackUrl', async () => {
    const onLeave = vi.fn();
    const { container } = render(<ShareViewer shareUrl={await sessionLink('suspended', language, 'https://app.example.com/done')} onLeave={onLeave} />);
    expect(await screen.findByRole('heading', { name: text.ended.title })).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: text.leave }));
    expect(onLeave).toHaveBeenCalledWith('https://app.example.com/done');
    expect(await axeViolations(container)).toEqual([]);
  });

  it('shows the gone screen for a deleted session, and Leave goes to the launch page', async () => {
    const onLeave = vi.fn();
    const { container } = render(<ShareViewer shareUrl={await sessionLink('deleted', language)} onLeave={onLeave} />);
    expect(await screen.findByRole('heading', { name: text.gone.title })).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: text.leave }));
    expect(onLeave).toHaveBeenCalledWith(`${engine.url}/`);
    expect(await axeViolations(container)).toEqual([]);
  });
});

describe('ShareViewer', () => {
  it('takes its language from the link, unless overridden', async () => {
    render(<ShareViewer shareUrl={await sessionLink('suspended', 'de')} language="fr" />);
    expect(await screen.findByRole('heading', { name: resources.fr.viewer.ended.title })).toBeInTheDocument();
  });

  it('accepts a share base and link id instead of a link, and reports each state', async () => {
    const link = new URL(await sessionLink('starting', 'en'));
    const states: string[] = [];
    render(<ShareViewer shareBase={engine.url} linkId={link.search.slice(1)} onStateChange={(s) => states.push(s)} />);
    expect(await screen.findByRole('heading', { name: resources.en.viewer.waiting.title })).toBeInTheDocument();
    // Reported from an effect, just after the screen it names is drawn.
    await waitFor(() => expect(states).toEqual(['waiting']));
  });

  it('reads the share API through a given fetch, and polls with it', async () => {
    const url = await sessionLink('starting', 'pt');
    const id = (await engine.store.sessionsWithStatus(['starting'])).at(-1)!.id;
    const asked: string[] = [];
    const recordingFetch: typeof fetch = (input, init) => {
      asked.push(String(input));
      return fetch(input, init);
    };
    render(<ShareViewer shareUrl={url} fetch={recordingFetch} />);
    expect(await screen.findByRole('heading', { name: resources.pt.viewer.waiting.title })).toBeInTheDocument();
    await engine.store.moveSession(id, ['starting'], 'error');
    await waitFor(() => expect(screen.getByRole('heading', { name: resources.pt.viewer.ended.title })).toBeInTheDocument(), { timeout: 8000 });
    expect(asked.length).toBeGreaterThanOrEqual(2);
    expect(asked.every((address) => address === `${engine.url}/share/${new URL(url).search.slice(1)}`)).toBe(true);
  });

  it('says the link is not valid for an unknown link id', async () => {
    render(<ShareViewer shareUrl={`${engine.url}/it/s?AAAAAAAAAAAAAAAAAAAAAA`} />);
    expect(await screen.findByRole('heading', { name: resources.it.viewer.gone.title })).toBeInTheDocument();
  });

  it('says the service cannot be reached, and when it will try again', async () => {
    render(<ShareViewer shareUrl="http://127.0.0.1:9/en/s?AAAAAAAAAAAAAAAAAAAAAA" />);
    expect(await screen.findByRole('alert')).toHaveTextContent(resources.en.viewer.error.title);
  });

  it('has no view-only controls for input', async () => {
    render(<ShareViewer shareUrl={await sessionLink('running', 'en')} viewOnly />);
    await screen.findByRole('application');
    expect(screen.getByText(resources.en.viewer.running.viewOnly)).toBeInTheDocument();
    // Not behind "More" either.
    await userEvent.click(screen.getByRole('button', { name: resources.en.viewer.toolbar.more }));
    expect(screen.queryByRole('button', { name: resources.en.viewer.toolbar.keyboard })).toBeNull();
    expect(screen.queryByRole('button', { name: resources.en.viewer.toolbar.paste })).toBeNull();
  });

  it('watches through a view-only link it makes: the link, then a view-only screen, and how many watch', async () => {
    const url = await sessionLink('running', 'de');
    const id = (await engine.store.sessionsWithStatus(['running'])).at(-1)!.id;
    await engine.store.updateSession(id, { viewers: 3 });
    const text = resources.de.viewer;
    // The full toolbar: it writes out what the link may do and how many watch (decisions.md 180).
    const owner = render(<ShareViewer shareUrl={url} toolbar="full" />);
    expect(await screen.findByText(text.running.canControl)).toBeInTheDocument();
    expect(screen.getByText('3 schauen zu')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: text.toolbar.shareViewOnly }));
    const field = await screen.findByRole('textbox', { name: text.toolbar.viewOnlyLink });
    const viewUrl = (field as HTMLInputElement).value;
    expect(viewUrl).toMatch(new RegExp(`^${engine.url}/de/s\\?[A-Za-z0-9_-]{22}$`));
    expect(viewUrl).not.toBe(url);
    expect(await axeViolations(owner.container)).toEqual([]);
    owner.unmount();

    // The view-only link's viewer: no input controls, even without the viewOnly prop.
    await engine.store.updateSession(id, { viewers: 1 });
    const watcher = render(<ShareViewer shareUrl={viewUrl} toolbar="full" />);
    expect(await screen.findByText(text.running.viewOnly)).toBeInTheDocument();
    expect(screen.getByText('1 schaut zu')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: text.toolbar.keyboard })).toBeNull();
    expect(screen.queryByRole('button', { name: text.toolbar.shareViewOnly })).toBeNull();
    expect(screen.queryByRole('textbox', { name: text.running.typeHere })).toBeNull();
    expect(await axeViolations(watcher.container)).toEqual([]);
    watcher.unmount();
  });

  it('lets a keyboard user out of the remote screen with Esc twice, and says so', async () => {
    render(<ShareViewer shareUrl={await sessionLink('running', 'fr')} />);
    const text = resources.fr.viewer;
    const input = await screen.findByRole('textbox', { name: text.running.typeHere });
    expect(input).toHaveAccessibleDescription(text.running.leaveKeys);
    input.focus();
    // One Esc goes to the remote browser and keeps the focus; a second right after leaves.
    await userEvent.keyboard('{Escape}');
    expect(input).toHaveFocus();
    await userEvent.keyboard('{Escape}');
    expect(screen.getByRole('toolbar', { name: text.toolbar.label })).toContainElement(document.activeElement as HTMLElement);
  });

  it('follows the session from waiting to ended without a reload', async () => {
    const url = await sessionLink('starting', 'es');
    const id = (await engine.store.sessionsWithStatus(['starting'])).at(-1)!.id;
    render(<ShareViewer shareUrl={url} />);
    expect(await screen.findByRole('heading', { name: resources.es.viewer.waiting.title })).toBeInTheDocument();
    // jsdom has no EventSource; the viewer re-reads the state when the stream is unavailable.
    await engine.store.moveSession(id, ['starting'], 'error');
    await waitFor(() => expect(screen.getByRole('heading', { name: resources.es.viewer.ended.title })).toBeInTheDocument(), { timeout: 8000 });
  });
});
