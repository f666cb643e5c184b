// The viewer's people panel (issue 36) against the real engine's `people` channel, its seat and its
// viewer passes (on the runtime that starts no browser: who drives is decided without one): the
// list of who is here in every language, the viewer's own requests found by role and name (ask,
// withdraw, give, release, take), the status line that screen readers hear when control moves,
// keyboard use, axe in each state, and a view-only viewer that cannot ask. The panel is bound as
// LiveScreen binds it (usePeople), inside StrictMode as a host app's development build runs it;
// the other people are raw `people` sockets (test/helpers/people-client.ts).
import { render, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { StrictMode, useMemo } from 'react';
import { I18nextProvider } from 'react-i18next';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { connectPeople, type PeopleClient } from '../helpers/people-client.js';
import { waitFor as poll } from '../helpers/session.js';
import { SHARE_LANGUAGES, type ControlMode, type ShareLanguage } from '../../src/protocol/index.js';
import { createComponentI18n, resources } from '../../src/react/i18n.js';
import { PeoplePanel } from '../../src/react/viewer/PeoplePanel.js';
import { usePeople } from '../../src/react/viewer/usePeople.js';
import { axeViolations } from './axe.js';

let fixture: EngineFixture<FakeRuntime>;
const others: PeopleClient[] = [];
const sessions: string[] = [];
/** A translated string with its values put in. */
const fill = (text: string, values: Record<string, string | number>) => text.replace(/\{\{(\w+)\}\}/g, (_, key: string) => String(values[key]));

beforeAll(async () => {
  fixture = await startEngine({ name: 'people-panel', runtime: 'fake' });
}, 60_000);

// The plan runs a few sessions at a time: each test ends its own.
afterEach(async () => {
  for (const other of others.splice(0)) other.close();
  for (const vmId of sessions.splice(0)) await fixture.call('/vm/remove', { id: vmId });
});

afterAll(async () => {
  await fixture?.close();
});

interface Session {
  vmId: string;
  linkId: string;
  /** Another person joins through the share link (or its view-only link), optionally with a pass. */
  join(options?: { pass?: string; view?: boolean }): Promise<PeopleClient>;
  pass(name?: string): Promise<string>;
  viewLinkId(): Promise<string>;
}

async function startSession(control: ControlMode): Promise<Session> {
  const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/`, control });
  expect(created.status).toBe('ok');
  const vmId: string = created.vmId;
  sessions.push(vmId);
  const linkId = new URL(created.shareUrl).search.slice(1);
  expect(await poll(async () => (await fixture.call(`/vm/data?id=${vmId}`)).data?.[0]?.status, (status) => status === 'running', 20_000)).toBe('running');
  let viewLink: string | undefined;
  const session: Session = {
    vmId,
    linkId,
    async viewLinkId() {
      viewLink ??= ((await (await fetch(`${fixture.engine.url}/share/${linkId}/view-only`, { method: 'POST' })).json()) as { linkId: string }).linkId;
      return viewLink;
    },
    async join(options = {}) {
      const link = options.view ? await session.viewLinkId() : linkId;
      const person = await connectPeople(`${fixture.engine.url.replace(/^http/, 'ws')}/share/${link}/people`, options.pass ? { pass: options.pass } : {});
      others.push(person);
      await person.until((picture) => picture.people.some((p) => p.id === picture.you));
      return person;
    },
    async pass(name) {
      const made = await fixture.call('/vm/viewer', { id: vmId, ...(name ? { name } : {}) });
      expect(made.status).toBe('ok');
      return made.pass as string;
    },
  };
  return session;
}

/** The panel as LiveScreen binds it, in `language`. */
function Viewer({ linkId, language, pass }: { linkId: string; language: ShareLanguage; pass?: string }) {
  const i18n = useMemo(() => createComponentI18n(language), [language]);
  const people = usePeople({ shareBase: fixture.engine.url, linkId, pass, enabled: true });
  return (
    <I18nextProvider i18n={i18n}>
      <div className="rbk-root rbk-viewer" lang={language}>
        <PeoplePanel snapshot={people.snapshot} onRequest={people.request} />
      </div>
    </I18nextProvider>
  );
}

function renderViewer(linkId: string, language: ShareLanguage, pass?: string) {
  return render(
    <StrictMode>
      <Viewer linkId={linkId} language={language} {...(pass ? { pass } : {})} />
    </StrictMode>,
  );
}

describe('the strings of the people panel', () => {
  it.each(SHARE_LANGUAGES.filter((language) => language !== 'en'))('are all translated in %s, with the same values to fill in', (language) => {
    const english = resources.en.viewer.people as Record<string, string>;
    const translated = resources[language].viewer.people as Record<string, string>;
    expect(Object.keys(translated).sort()).toEqual(Object.keys(english).sort());
    for (const [name, text] of Object.entries(english)) {
      const where = `${language}/viewer.json people.${name}`;
      expect(translated[name]!.trim(), where).not.toBe('');
      expect(translated[name]!.match(/\{\{\w+\}\}/g)?.sort() ?? [], where).toEqual(text.match(/\{\{\w+\}\}/g)?.sort() ?? []);
      expect(translated[name], where).not.toBe(text);
    }
  });
});

describe.each(SHARE_LANGUAGES)('the people panel in %s', (language) => {
  const t = resources[language].viewer.people;
  const guest = (n: number) => fill(t.guest, { n });
  const toggle = () => screen.findByRole('button', { name: new RegExp(`^${fill(t.button, { count: '\\d+' }).replace(/[()]/g, '\\$&')}$`) }, { timeout: 10_000 });

  it('lists who is here and who has control, says it in the status line, and passes axe open and closed', async () => {
    const session = await startSession('one');
    const { container } = renderViewer(session.linkId, language);
    expect(await screen.findByRole('status')).toHaveTextContent(t.nobodyDrives);
    const ada = await session.join({ pass: await session.pass('Ada Lovelace') });
    ada.send({ type: 'ask' });
    // Heard without opening anything: the status line is live.
    await waitFor(() => expect(screen.getByRole('status')).toHaveTextContent(fill(t.driverIs, { name: 'Ada Lovelace' })));
    const button = await toggle();
    expect(button).toHaveAccessibleName(fill(t.button, { count: 2 }));
    expect(button).toHaveAttribute('aria-expanded', 'false');
    expect(await axeViolations(container)).toEqual([]);
    await userEvent.click(button);
    const panel = screen.getByRole('region', { name: t.label });
    expect(button).toHaveAttribute('aria-controls', panel.id);
    const items = within(panel).getAllByRole('listitem').map((item) => item.textContent);
    expect(items).toEqual([fill(t.you, { name: guest(1) }), `Ada Lovelace · ${t.owner} · ${t.drives}`]);
    expect(within(panel).getByRole('button', { name: t.ask })).toBeEnabled();
    expect(await axeViolations(container)).toEqual([]);
  });

  it('asks and withdraws with the keyboard, keeping the focus on its button, and closes with Escape', async () => {
    const session = await startSession('one');
    renderViewer(session.linkId, language);
    const button = await toggle();
    const driver = await session.join();
    driver.send({ type: 'ask' });
    await waitFor(() => expect(screen.getByRole('status')).toHaveTextContent(fill(t.driverIs, { name: guest(2) })));
    for (let presses = 0; presses < 10 && document.activeElement !== button; presses++) await userEvent.tab();
    expect(button).toHaveFocus();
    await userEvent.keyboard('{Enter}');
    expect(button).toHaveAttribute('aria-expanded', 'true');
    await userEvent.tab();
    expect(screen.getByRole('button', { name: t.ask })).toHaveFocus();
    await userEvent.keyboard('{Enter}');
    // The engine has the request: the driver sees it, and the same button now withdraws it.
    await driver.until((picture) => picture.people.some((person) => person.guest === 1 && person.asks));
    await waitFor(() => expect(screen.getByRole('button', { name: t.cancel })).toHaveFocus());
    expect(screen.getByText(fill(t.waiting, { seconds: 30, name: guest(2) }))).toBeVisible();
    await userEvent.keyboard(' ');
    await driver.until((picture) => picture.people.every((person) => !person.asks));
    await waitFor(() => expect(screen.getByRole('button', { name: t.ask })).toHaveFocus());
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('region', { name: t.label })).toBeNull();
    expect(button).toHaveAttribute('aria-expanded', 'false');
    expect(button).toHaveFocus();
  });

  it('takes control when nobody has it, gives it to who asks, and releases it', async () => {
    const session = await startSession('one');
    const { container } = renderViewer(session.linkId, language);
    await userEvent.click(await toggle());
    await userEvent.click(screen.getByRole('button', { name: t.ask }));
    await waitFor(() => expect(screen.getByRole('status')).toHaveTextContent(t.youDrive));
    const asking = await session.join();
    asking.send({ type: 'ask' });
    const give = await screen.findByRole('button', { name: fill(t.give, { name: guest(2) }) });
    expect(await axeViolations(container)).toEqual([]);
    await userEvent.click(give);
    await asking.until((picture) => picture.driver?.id === picture.you);
    await waitFor(() => expect(screen.getByRole('status')).toHaveTextContent(fill(t.driverIs, { name: guest(2) })));
    expect(screen.queryByRole('button', { name: fill(t.give, { name: guest(2) }) })).toBeNull();
    // Back again: the other gives it, and this viewer lets go.
    const me = asking.picture()!.people.find((person) => person.guest === 1)!;
    asking.send({ type: 'give', to: me.id });
    await waitFor(() => expect(screen.getByRole('status')).toHaveTextContent(t.youDrive));
    await userEvent.click(screen.getByRole('button', { name: t.release }));
    await waitFor(() => expect(screen.getByRole('status')).toHaveTextContent(t.nobodyDrives));
    await asking.until((picture) => picture.driver === null);
  });

  it("names the owner's viewer from its pass, and lets it take control back", async () => {
    const session = await startSession('one');
    renderViewer(session.linkId, language, await session.pass('Grace Hopper'));
    const driver = await session.join();
    driver.send({ type: 'ask' });
    await waitFor(() => expect(screen.getByRole('status')).toHaveTextContent(fill(t.driverIs, { name: guest(2) })));
    await userEvent.click(await toggle());
    const panel = screen.getByRole('region', { name: t.label });
    await waitFor(() => expect(within(panel).getAllByRole('listitem')[0]).toHaveTextContent(`${fill(t.you, { name: 'Grace Hopper' })} · ${t.owner}`));
    expect(within(panel).queryByRole('button', { name: t.ask })).toBeNull();
    await userEvent.click(within(panel).getByRole('button', { name: t.take }));
    await waitFor(() => expect(screen.getByRole('status')).toHaveTextContent(t.youDrive));
    expect((await driver.until((picture) => picture.driver?.name === 'Grace Hopper')).driver).toMatchObject({ kind: 'person', owner: true });
  });

  it('lets a view-only viewer watch: no request to make, and not told to press a key', async () => {
    const session = await startSession('one');
    const { container } = renderViewer(await session.viewLinkId(), language);
    expect(await screen.findByRole('status')).toHaveTextContent(t.nobody);
    expect(screen.getByRole('status')).not.toHaveTextContent(t.nobodyDrives);
    await userEvent.click(await toggle());
    const panel = screen.getByRole('region', { name: t.label });
    expect(within(panel).getByRole('listitem')).toHaveTextContent(`${fill(t.you, { name: guest(1) })} · ${t.watching}`);
    expect(within(panel).queryByRole('button')).toBeNull();
    expect(await axeViolations(container)).toEqual([]);
  });

  it('says everyone has control in the shared mode, with nothing to ask for', async () => {
    const session = await startSession('shared');
    renderViewer(session.linkId, language);
    await session.join();
    expect(await screen.findByRole('status')).toHaveTextContent(t.everyone);
    await userEvent.click(await toggle());
    await waitFor(() => expect(within(screen.getByRole('region', { name: t.label })).getAllByRole('listitem')).toHaveLength(2));
    expect(within(screen.getByRole('region', { name: t.label })).queryByRole('button')).toBeNull();
  });
});
