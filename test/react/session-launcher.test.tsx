// <SessionLauncher> against the real proxy route in front of a real engine (on the fake runtime:
// what the launcher shows is the service's statuses, not the browser): the form in every
// language, unavailable browsers, each failure class shown where it belongs, and a launch from
// starting to running to ended (also for a host that keeps the session in its state). axe checks
// in every state.
import { render, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { useState } from 'react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { isSessionEnded, SHARE_LANGUAGES, type SessionStatus } from '../../src/protocol/index.js';
import { resources } from '../../src/react/i18n.js';
import { SessionLauncher, type LaunchedSession } from '../../src/react/SessionLauncher.js';
import { RemoteBrowserProvider } from '../../src/react/RemoteBrowserProvider.js';
import { SESSION_WAIT_MS } from '../../src/core/queries.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { axeViolations } from './axe.js';
import { mountRoute, renderWithRoute, type MountedRoute } from './route-harness.js';

const plan = { residential_cycle_mb_limit: null, location_access: true, programmatic_access: true, max_session_minutes: 60, idle_timeout_minutes: 30 };
let fixture: EngineFixture<FakeRuntime>;
let engine: Engine<FakeRuntime>;
let pageUrl: string;
const routes: MountedRoute[] = [];
const en = resources.en.launcher;

async function route(planId: string, options: Parameters<typeof mountRoute>[2] = {}): Promise<string> {
  const { apiKey } = await engine.accounts.create({ contact: `${planId}@example.com`, plans: [planId] });
  const mounted = await mountRoute(engine, apiKey.key, options);
  routes.push(mounted);
  return mounted.endpoint;
}

/** The launch button once the browsers have loaded (it is disabled until there is one to start). */
async function launchButton(): Promise<HTMLElement> {
  const button = await screen.findByRole('button', { name: en.launch });
  await waitFor(() => expect(button).toBeEnabled());
  return button;
}

beforeAll(async () => {
  fixture = await startEngine({
    name: 'launcher',
    site: '<title>start</title><h1>start</h1>',
    plans: ['std'],
    runtime: 'fake',
    // A start takes about as long as a browser's: the launcher's starting state is seen.
    fake: { startMs: 1000 },
    config: {
      plans: [
        { id: 'std', name: 'Standard', running_session_limit: 2, cycle_session_limit: null, ...plan },
        { id: 'full', name: 'Full', running_session_limit: 0, cycle_session_limit: 10, ...plan },
      ],
      rateLimit: { requests: 100_000, perSeconds: 60 }, standby: { afterSeconds: false },
      egress: { allow: ['127.0.0.1/32'] },
      locations: [{ code: 'de', name: 'Germany', default: 'de-ber', cities: [{ code: 'de-ber', location: 'Berlin', upstream: null, capacity: 1 }, { code: 'de-muc', location: 'Munich', upstream: null, capacity: 1 }] }],
    },
  });
  engine = fixture.engine;
  pageUrl = `${fixture.site.origin}/`;
});

afterAll(async () => {
  await Promise.all(routes.map((r) => r.close()));
  await fixture?.close();
});

describe.each(SHARE_LANGUAGES)('the form in %s', (language) => {
  it('is labelled in the language, shows unavailable browsers disabled, and passes axe', async () => {
    const text = resources[language].launcher;
    const { container } = renderWithRoute(<SessionLauncher />, await route('std'), language);
    const browser = await screen.findByRole('combobox', { name: text.browser });
    await waitFor(() => expect(within(browser).getByRole('option', { name: 'Chromium' })).toBeEnabled());
    const chrome = within(browser).getByRole('option', { name: text.browserUnavailable.replace('{{name}}', 'Google Chrome') });
    expect(chrome).toBeDisabled();
    expect(screen.getByRole('textbox', { name: text.url })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: text.launch })).toBeEnabled();
    expect(await axeViolations(container)).toEqual([]);
  });
});

describe('SessionLauncher', () => {
  it('offers exit locations from the image list: country, then its cities', async () => {
    renderWithRoute(<SessionLauncher />, await route('std'));
    const location = await screen.findByRole('combobox', { name: en.location });
    await waitFor(() => expect(within(location).getByRole('option', { name: 'Germany' })).toBeInTheDocument());
    expect(screen.queryByRole('combobox', { name: en.city })).toBeNull();
    await userEvent.selectOptions(location, 'de');
    const city = screen.getByRole('combobox', { name: en.city });
    expect(within(city).getAllByRole('option').map((o) => o.textContent)).toEqual([en.cityDefault, 'Berlin', 'Munich']);
  });

  it('hides exit locations when the plan has none', async () => {
    renderWithRoute(<SessionLauncher locations={false} />, await route('std'));
    await screen.findByRole('combobox', { name: en.browser });
    expect(screen.queryByRole('combobox', { name: en.location })).toBeNull();
    expect(screen.getByText(en.locationNotIncluded)).toBeInTheDocument();
  });

  it('shows a refused field on that field', async () => {
    const { container } = renderWithRoute(<SessionLauncher />, await route('std'));
    const url = await screen.findByRole('textbox', { name: en.url });
    await userEvent.type(url, 'ftp://files.example.com/');
    await userEvent.click(await launchButton());
    await waitFor(() => expect(url).toHaveAttribute('aria-invalid', 'true'));
    expect(url).toHaveAccessibleDescription(expect.stringContaining('url: must be an http or https address'));
    expect(await axeViolations(container)).toEqual([]);
  });

  it("shows an upgrade answer with the host app's call to action", async () => {
    const { container } = renderWithRoute(<SessionLauncher renderUpgrade={(message) => <a href="/pricing">Upgrade ({message.length > 0 ? 'see plans' : ''})</a>} />, await route('full'));
    await userEvent.click(await launchButton());
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('running session limit reached');
    expect(within(alert).getByRole('link', { name: /Upgrade/ })).toHaveAttribute('href', '/pricing');
    expect(await axeViolations(container)).toEqual([]);
  });

  it('says when to retry after a rate limit, and waits until then', async () => {
    const endpoint = await route('full', { rateLimit: { creates: 1, perSeconds: 60 } });
    renderWithRoute(<SessionLauncher />, endpoint);
    // The first launch is refused by the plan (upgrade); the second by the route's create limit.
    await userEvent.click(await launchButton());
    await screen.findByRole('alert');
    await userEvent.click(screen.getByRole('button', { name: en.launch }));
    await waitFor(() => expect(screen.getByRole('alert')).toHaveTextContent(/Too many requests\. You can try again in \d+ s\./));
    expect(screen.getByRole('button', { name: en.retry })).toBeDisabled();
  });

  it('offers a retry when the service fails', async () => {
    const { apiKey } = await engine.accounts.create({ contact: 'down@example.com', plans: ['std'] });
    const down = await mountRoute(null, apiKey.key);
    routes.push(down);
    const { container } = renderWithRoute(<SessionLauncher />, down.endpoint);
    // The image list cannot load: the form says so and offers to try again.
    expect(await screen.findByRole('alert', {}, { timeout: 8000 })).toHaveTextContent(en.errors.images);
    expect(screen.getByRole('button', { name: en.retry })).toBeEnabled();
    expect(await axeViolations(container)).toEqual([]);
  });

  it('asks the person to sign in when the host app does not know them', async () => {
    const { apiKey } = await engine.accounts.create({ contact: 'anon@example.com', plans: ['std'] });
    const anonymous = await mountRoute(engine, apiKey.key, { authorize: () => null });
    routes.push(anonymous);
    renderWithRoute(<SessionLauncher />, anonymous.endpoint);
    expect(await screen.findByRole('alert')).toHaveTextContent(en.errors.unauthorized);
    expect(screen.getByRole('button', { name: en.launch })).toBeDisabled();
  });

  it('launches a session: starting, running with its share link, then ended', async () => {
    const changes: string[] = [];
    const { container } = renderWithRoute(<SessionLauncher defaultUrl={pageUrl} onSessionChange={(s) => changes.push(s.status)} />, await route('std'));
    await userEvent.click(await launchButton());
    expect(await screen.findByText(en.status.starting.replace('{{browser}}', 'Chromium'))).toBeInTheDocument();
    expect(screen.getByRole('progressbar', { name: en.progress })).toBeInTheDocument();
    expect(await screen.findByText(en.status.running.replace('{{browser}}', 'Chromium'), {}, { timeout: 20_000 })).toBeInTheDocument();
    const link = screen.getByRole('textbox', { name: en.shareLink }) as HTMLInputElement;
    expect(link.value).toMatch(new RegExp(`^${engine.url}/en/s\\?[A-Za-z0-9_-]{22}$`));
    expect(screen.getByRole('link', { name: en.openViewer })).toHaveAttribute('href', link.value);
    expect(await axeViolations(container)).toEqual([]);
    await userEvent.click(screen.getByRole('button', { name: en.end }));
    expect(await screen.findByText(en.status.ended, {}, { timeout: 10_000 })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: en.another })).toBeInTheDocument();
    expect(changes[0]).toBe('starting');
    expect(changes).toContain('running');
    expect(await axeViolations(container)).toEqual([]);
  });

  it('follows a start with held reads of the session (wait), not a tight poll', async () => {
    const reads: string[] = [];
    const recording: typeof fetch = (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (/\/sessions\/[^/?]+(\?|$)/.test(url) && (init?.method ?? 'GET') === 'GET') reads.push(url);
      return fetch(input, init);
    };
    const endpoint = await route('std');
    render(
      <RemoteBrowserProvider endpoint={endpoint} fetch={recording}>
        <SessionLauncher defaultUrl={pageUrl} />
      </RemoteBrowserProvider>,
    );
    await userEvent.click(await launchButton());
    expect(await screen.findByText(en.status.running.replace('{{browser}}', 'Chromium'), {}, { timeout: 20_000 })).toBeInTheDocument();
    expect(reads.length).toBeGreaterThan(0);
    for (const url of reads) expect(new URL(url).searchParams.get('wait'), url).toBe(String(SESSION_WAIT_MS));
    await userEvent.click(screen.getByRole('button', { name: en.end }));
    expect(await screen.findByText(en.status.ended, {}, { timeout: 10_000 })).toBeInTheDocument();
  });

  it('tells a host that keeps the session in its state once per status change, without re-rendering it in a loop', async () => {
    const told: LaunchedSession['status'][] = [];
    let hostRenders = 0;
    // The usual host: the session in state, an inline arrow as the callback (a new one every render).
    function Host() {
      const [session, setSession] = useState<LaunchedSession | null>(null);
      hostRenders++;
      return (
        <>
          <SessionLauncher
            defaultUrl={pageUrl}
            onSessionChange={(s) => {
              told.push(s.status);
              setSession(s);
            }}
          />
          <p>Host sees: {session?.status ?? 'nothing'}</p>
        </>
      );
    }
    renderWithRoute(<Host />, await route('std'));
    await userEvent.click(await launchButton());
    expect(await screen.findByText('Host sees: starting')).toBeInTheDocument();
    expect(await screen.findByText('Host sees: running', {}, { timeout: 20_000 })).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: en.end }));
    expect(await screen.findByText(en.status.ended, {}, { timeout: 10_000 })).toBeInTheDocument();
    await waitFor(() => expect(told.at(-1)).not.toBe('running'));

    // Starting, running, then how it ended (stopping, then deleted, or either): each call a change.
    expect(told.slice(0, 2)).toEqual(['starting', 'running']);
    expect(told.filter((status, i) => status === told[i - 1])).toEqual([]);
    expect(told.length).toBeLessThanOrEqual(4);
    expect(told.slice(2).every((status) => isSessionEnded(status as SessionStatus))).toBe(true);
    expect(screen.getByText(`Host sees: ${told.at(-1)}`)).toBeInTheDocument();
    // Its first render, then one for each session it was told about.
    expect(hostRenders).toBeLessThanOrEqual(1 + told.length);
  });
});
