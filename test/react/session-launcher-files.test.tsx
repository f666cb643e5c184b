// <SessionLauncher>'s launched panel lists the session's downloads (issue 23), against the real
// proxy route in front of a real engine and a real confined Chromium session: "nothing yet" while
// the page has downloaded nothing, then the file with a Save link through the route that carries
// its name and gives the same bytes; axe in both states.
import { screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { resources } from '../../src/react/i18n.js';
import { SessionLauncher } from '../../src/react/SessionLauncher.js';
import { waitFor as poll } from '../helpers/session.js';
import { axeViolations } from './axe.js';
import { mountRoute, renderWithRoute, type MountedRoute } from './route-harness.js';

const REPORT = randomBytes(1024 * 1024);
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const en = resources.en.launcher;

let fixture: EngineFixture;
let engine: Engine;
let pageUrl: string;
let route: MountedRoute;

beforeAll(async () => {
  fixture = await startEngine({
    name: 'launcher-files',
    site: (request, response) => {
      if (request.url === '/invoice.pdf') return void response.writeHead(200, { 'content-type': 'application/pdf', 'content-length': REPORT.length, 'content-disposition': 'attachment; filename="invoice 7.pdf"' }).end(REPORT);
      response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>start</title><a id="get" href="/invoice.pdf">get</a>');
    },
    config: { rateLimit: { requests: 100_000, perSeconds: 60 }, standby: { afterSeconds: false } },
  });
  engine = fixture.engine;
  pageUrl = `${fixture.site.origin}/`;
  route = await mountRoute(engine, fixture.account.key);
});

afterAll(async () => {
  await route?.close();
  await fixture?.close();
});

describe("the launched panel's downloads", () => {
  it('says nothing was downloaded yet, then offers the download with a Save link that carries its name and the same bytes', async () => {
    const { container } = renderWithRoute(<SessionLauncher defaultUrl={pageUrl} />, route.endpoint);
    const launch = await screen.findByRole('button', { name: en.launch });
    await waitFor(() => expect(launch).toBeEnabled());
    await userEvent.click(launch);
    expect(await screen.findByText(en.status.running.replace('{{browser}}', 'Chromium'), {}, { timeout: 20_000 })).toBeInTheDocument();
    const downloads = await screen.findByRole('region', { name: en.files.title });
    expect(within(downloads).getByRole('heading', { name: en.files.title })).toBeInTheDocument();
    expect(await within(downloads).findByText(en.files.none)).toBeInTheDocument();
    expect(await axeViolations(container)).toEqual([]);

    // The remote page downloads a file.
    const row = (await engine.store.sessionsWithStatus(['running'])).at(-1)!;
    const session = engine.runtime.get(row.runtime_id!)!;
    await poll(() => session.control!.evaluate("Boolean(document.getElementById('get'))").catch(() => false), Boolean);
    await session.control!.evaluate("document.getElementById('get').click(), 1");

    const save = await within(downloads).findByRole('link', { name: en.files.save.replace('{{name}}', 'invoice 7.pdf') }, { timeout: 20_000 });
    expect(save).toHaveAttribute('download', 'invoice 7.pdf');
    expect(save.getAttribute('href')).toMatch(new RegExp(`^${route.endpoint.replace(/[.]/g, '\\.')}/`));
    expect(within(save.closest('li')!).getByText('1 MB')).toBeInTheDocument();
    expect(within(downloads).queryByText(en.files.none)).toBeNull();
    // What the person's browser saves when the link is pressed: the file, through the route.
    const saved = await fetch(save.getAttribute('href')!);
    expect(saved.status).toBe(200);
    expect(saved.headers.get('content-disposition')).toContain(`filename*=UTF-8''invoice%207.pdf`);
    expect(sha(new Uint8Array(await saved.arrayBuffer()))).toBe(sha(REPORT));
    expect(await axeViolations(container)).toEqual([]);

    // Ended: its files went with it, and the list with them.
    await userEvent.click(screen.getByRole('button', { name: en.end }));
    expect(await screen.findByText(en.status.ended, {}, { timeout: 10_000 })).toBeInTheDocument();
    expect(screen.queryByRole('region', { name: en.files.title })).toBeNull();
  }, 60_000);
});
