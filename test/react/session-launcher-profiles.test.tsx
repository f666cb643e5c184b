// <SessionLauncher profiles> (issue 34) against the real proxy route in front of a real engine and
// a real confined Chromium: the person makes a profile in the launcher, launches on it (the route
// hands the engine the profile behind the handle), and a second launch on the same profile while
// the first runs is refused on the profile field, saying why; axe in each state.
import { screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import { resources } from '../../src/react/i18n.js';
import { SessionLauncher } from '../../src/react/SessionLauncher.js';
import { servePage } from '../helpers/site.js';
import { axeViolations } from './axe.js';
import { mountRoute, renderWithRoute, type MountedRoute } from './route-harness.js';

const en = resources.en.launcher;
let engine: Engine;
let dir: string;
let site: Awaited<ReturnType<typeof servePage>>;
let route: MountedRoute;

beforeAll(async () => {
  site = await servePage('<!doctype html><title>start</title>');
  dir = await mkdtemp(join(tmpdir(), 'rbk-launcher-profiles-'));
  engine = await createEngine({ dataDir: dir, port: 0, config: { egress: { allow: ['127.0.0.1/32'] }, rateLimit: { requests: 100_000, perSeconds: 60 }, standby: { afterSeconds: false } } as never });
  const { apiKey } = await engine.accounts.create({ contact: 'launcher-profiles@example.com', plans: ['pro'] });
  route = await mountRoute(engine, apiKey.key);
}, 60_000);

afterAll(async () => {
  await route?.close();
  await engine?.close();
  site?.server.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the launcher's saved profiles", () => {
  it('makes a profile, launches on it, and refuses a second launch on it on its field', async () => {
    const first = renderWithRoute(<SessionLauncher profiles defaultUrl={`${site.origin}/`} />, route.endpoint);
    const picker = await screen.findByRole('combobox', { name: en.profile.label }, { timeout: 15_000 });
    await waitFor(() => expect(picker).toBeEnabled());
    expect(within(picker).getByRole('option', { name: en.profile.none })).toBeInTheDocument();
    await userEvent.selectOptions(picker, en.profile.new);
    await userEvent.type(screen.getByRole('textbox', { name: en.profile.newName }), 'Shop');
    await userEvent.click(screen.getByRole('button', { name: en.profile.create }));
    await waitFor(() => expect((picker as HTMLSelectElement).selectedOptions[0]?.textContent).toBe('Shop'));
    expect(screen.getByRole('checkbox', { name: en.profile.save })).toBeChecked();
    expect(screen.getByRole('checkbox', { name: en.profile.tabs })).not.toBeChecked();
    expect(await axeViolations(first.container)).toEqual([]);

    await userEvent.click(screen.getByRole('button', { name: en.launch }));
    expect(await screen.findByText(en.status.running.replace('{{browser}}', 'Chromium'), {}, { timeout: 30_000 })).toBeInTheDocument();
    const running = (await engine.store.sessionsWithStatus(['running'])).at(-1)!;
    const [saved] = await engine.store.sql.all<{ id: string; name: string }>('SELECT id, name FROM profiles');
    expect(running.profile_id).toBe(saved!.id);
    expect(saved!.name).toMatch(/^[A-Za-z0-9_-]{16}:Shop$/);
    first.unmount();

    // A second launcher on the same profile, while the first session runs.
    const second = renderWithRoute(<SessionLauncher profiles defaultUrl={`${site.origin}/`} />, route.endpoint);
    const again = await screen.findByRole('combobox', { name: en.profile.label }, { timeout: 15_000 });
    await waitFor(() => expect(within(again).getByRole('option', { name: 'Shop' })).toBeInTheDocument());
    await userEvent.selectOptions(again, 'Shop');
    await userEvent.click(screen.getByRole('button', { name: en.launch }));
    const refusal = await screen.findByText(/a session runs on this profile now/, {}, { timeout: 15_000 });
    expect(refusal).toHaveAttribute('role', 'alert');
    expect(again).toHaveAttribute('aria-invalid', 'true');
    expect(await axeViolations(second.container)).toEqual([]);
  }, 90_000);
});
