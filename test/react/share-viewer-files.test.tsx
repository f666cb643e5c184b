// <ShareViewer>'s Files control against the real engine and a real confined Chromium session (its
// files channel, its share API's download and upload): every string translated in seven
// languages, reached and closed with the keyboard, a download offered as it arrives and announced,
// saved from a link that carries its name (the same bytes), files given with progress (picked,
// and dropped on the viewer), nothing for a view-only link, and axe in each state. Stand-ins for
// what jsdom lacks: a WebSocket that works in its window (the files channel goes over `ws` to the
// real engine, with the browser's interface), and DataTransfer (a drop carries the files, as a
// browser's would).
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { RuntimeSession } from '../../src/engine/runtime/runtime.js';
import { SHARE_LANGUAGES } from '../../src/protocol/index.js';
import { resources } from '../../src/react/i18n.js';
import { ShareViewer } from '../../src/react/ShareViewer.js';
import { waitFor as poll } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';
import { axeViolations } from './axe.js';

const NAME = 'Rapport été.pdf';
const REPORT = randomBytes(3 * 1024 * 1024);
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const en = resources.en.viewer.files;
/** A translated string with its values put in. */
const fill = (text: string, values: Record<string, string | number>) => text.replace(/\{\{(\w+)\}\}/g, (_, key: string) => String(values[key]));

let fixture: EngineFixture;
let engine: Engine;
let key: string;
let shareUrl: string;
let linkId: string;
let session: RuntimeSession;
const api = v8Caller(() => engine.url, () => key);

beforeAll(async () => {
  fixture = await startEngine({ name: 'viewer-files', site: (request, response) => {
    if (request.url === '/report') {
      // Slowly, so that the viewer sees it arrive: 3 MB over about 3 s.
      response.writeHead(200, { 'content-type': 'application/pdf', 'content-length': REPORT.length, 'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(NAME)}` });
      let offset = 0;
      const timer = setInterval(() => {
        response.write(REPORT.subarray(offset, offset + 128 * 1024));
        offset += 128 * 1024;
        if (offset >= REPORT.length) {
          clearInterval(timer);
          response.end();
        }
      }, 125);
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Files</title><a id="get" href="/report">get</a>');
  } });
  ({ engine, account: { key } } = fixture);
  const origin = fixture.site.origin;
  const created = await api('/vm/create', { browser: 'chromium', url: `${origin}/` });
  expect(created.status).toBe('ok');
  shareUrl = created.shareUrl;
  linkId = new URL(shareUrl).search.slice(1);
  expect(await poll(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
  session = engine.runtime.get((await engine.store.session(created.vmId))!.runtime_id!)!;
}, 90_000);

afterAll(async () => {
  vi.unstubAllGlobals();
  await fixture?.close();
});

/** The Files button once the files channel has told the viewer what may move ("Files", or "Files (2)"). */
function filesButton(label = en.button): Promise<HTMLElement> {
  return screen.findByRole('button', { name: new RegExp(`^${label}( ?\\(\\d+\\))?$`) }, { timeout: 10_000 });
}

describe('the strings of the Files control and of the launched panel', () => {
  // The same word in English, where it is that language's word too.
  const SAME_AS_ENGLISH: Record<string, string[]> = { de: ['viewer.downloads', 'launcher.title'] };

  it.each(SHARE_LANGUAGES.filter((language) => language !== 'en'))('are all translated in %s, with the same values to fill in', (language) => {
    for (const namespace of ['viewer', 'launcher'] as const) {
      const english = resources.en[namespace].files as Record<string, string>;
      const translated = resources[language][namespace].files as Record<string, string>;
      expect(Object.keys(translated).sort(), `${language}/${namespace}.json`).toEqual(Object.keys(english).sort());
      for (const [name, text] of Object.entries(english)) {
        const where = `${language}/${namespace}.json files.${name}`;
        expect(translated[name]!.trim(), where).not.toBe('');
        expect(translated[name]!.match(/\{\{\w+\}\}/g)?.sort() ?? [], where).toEqual(text.match(/\{\{\w+\}\}/g)?.sort() ?? []);
        if (!SAME_AS_ENGLISH[language]?.includes(`${namespace}.${name}`)) expect(translated[name], where).not.toBe(text);
      }
    }
  });
});

describe.each(SHARE_LANGUAGES)('the Files control in %s', (language) => {
  const text = resources[language].viewer.files;

  it('opens a labelled panel with the downloads, what was given and how to give files, and passes axe open and closed', async () => {
    const { container } = render(<ShareViewer shareUrl={shareUrl} language={language} />);
    const button = await filesButton(text.button);
    expect(button).toHaveAttribute('aria-expanded', 'false');
    expect(await axeViolations(container)).toEqual([]);
    await userEvent.click(button);
    expect(button).toHaveAttribute('aria-expanded', 'true');
    const panel = screen.getByRole('region', { name: text.title });
    expect(button).toHaveAttribute('aria-controls', panel.id);
    expect(within(panel).getByRole('heading', { name: text.downloads })).toBeInTheDocument();
    expect(within(panel).getByRole('heading', { name: text.uploads })).toBeInTheDocument();
    expect(within(panel).getByText(text.none)).toBeInTheDocument();
    expect(within(panel).getByRole('button', { name: text.give })).toBeInTheDocument();
    expect(within(panel).getByText(`${text.drop} ${text.dropHint}`)).toBeInTheDocument();
    expect(await axeViolations(container)).toEqual([]);
    await userEvent.click(within(panel).getByRole('button', { name: text.close }));
    expect(screen.queryByRole('region', { name: text.title })).toBeNull();
    expect(button).toHaveFocus();
  });
});

describe('the Files control', () => {
  it('is reached with Tab, opens with Enter and closes with Esc, the focus back on it', async () => {
    render(<ShareViewer shareUrl={shareUrl} />);
    const button = await filesButton();
    for (let presses = 0; presses < 40 && document.activeElement !== button; presses++) await userEvent.tab();
    expect(button).toHaveFocus();
    await userEvent.keyboard('{Enter}');
    const panel = screen.getByRole('region', { name: en.title });
    // Into the panel: its first control is the next stop.
    await userEvent.tab();
    expect(panel).toContainElement(document.activeElement as HTMLElement);
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('region', { name: en.title })).toBeNull();
    expect(button).toHaveAttribute('aria-expanded', 'false');
    expect(button).toHaveFocus();
  });

  it('shows a download arriving, announces it once there, and saves it from a link with its name and the same bytes', async () => {
    const { container } = render(<ShareViewer shareUrl={shareUrl} />);
    await userEvent.click(await filesButton());
    const panel = screen.getByRole('region', { name: en.title });
    await poll(() => session.control!.evaluate("Boolean(document.getElementById('get'))").catch(() => false), Boolean);
    await session.control!.evaluate("document.getElementById('get').click(), 1");
    // While it arrives: an entry saying so, under its own name, with its size so far.
    const arriving = await within(panel).findByText(fill(en.arriving, { name: NAME }), {}, { timeout: 10_000 });
    expect(arriving.closest('li')).toHaveAttribute('data-state', 'downloading');
    expect(within(arriving.closest('li')!).getByText(/^[\d.]+ (kB|MB)$/)).toBeInTheDocument();
    const save = await within(panel).findByRole('link', { name: fill(en.save, { name: NAME }) }, { timeout: 20_000 });
    expect(save).toHaveAttribute('href', `${engine.url}/share/${linkId}/files/download?name=${encodeURIComponent(NAME)}`);
    expect(save).toHaveAttribute('download', NAME);
    expect(within(save.closest('li')!).getByText('3.1 MB')).toBeInTheDocument();
    // Said once to a screen reader, in the control's polite live region.
    const said = screen.getByText(fill(en.arrived, { name: NAME }));
    expect(said).toHaveAttribute('role', 'status');
    expect(said).toHaveAttribute('aria-live', 'polite');
    // The button counts the downloads ("Files (1)"; jsdom's name computation drops the space).
    expect(screen.getByRole('button', { name: new RegExp(`^${en.button} ?\\(1\\)$`) })).toBeInTheDocument();
    // What the viewer's browser saves when the link is pressed.
    const saved = await fetch(save.getAttribute('href')!);
    expect(saved.status).toBe(200);
    expect(sha(new Uint8Array(await saved.arrayBuffer()))).toBe(sha(REPORT));
    expect(await axeViolations(container)).toEqual([]);
  }, 40_000);

  it('does not announce the downloads that were there before the viewer opened', async () => {
    render(<ShareViewer shareUrl={shareUrl} />);
    await userEvent.click(await filesButton());
    expect(await screen.findByRole('link', { name: fill(en.save, { name: NAME }) })).toBeInTheDocument();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(screen.queryByText(fill(en.arrived, { name: NAME }))).toBeNull();
  });

  it('gives a picked file with its progress, then lists it as given and says so', async () => {
    const bytes = randomBytes(4 * 1024 * 1024);
    const { container } = render(<ShareViewer shareUrl={shareUrl} />);
    await userEvent.click(await filesButton());
    const panel = screen.getByRole('region', { name: en.title });
    const picker = panel.querySelector<HTMLInputElement>('input[type=file]')!;
    await userEvent.upload(picker, new File([bytes], 'scan 1.png', { type: 'image/png' }));
    // While it goes: its name, how far, and a progress bar named after it.
    expect(within(panel).getByRole('progressbar', { name: 'scan 1.png' })).toBeInTheDocument();
    expect(within(panel).getByText(new RegExp(`^${fill(en.uploading, { name: 'scan 1.png', percent: '\\d+' })}$`))).toBeInTheDocument();
    expect(await axeViolations(container)).toEqual([]);
    expect(await screen.findByText(fill(en.uploaded, { name: 'scan 1.png' }), {}, { timeout: 15_000 })).toHaveAttribute('role', 'status');
    const given = within(panel).getByRole('heading', { name: en.uploads }).closest('section')!;
    expect(await within(given).findByText('scan 1.png', {}, { timeout: 5000 })).toBeInTheDocument();
    expect(within(given).queryByRole('progressbar')).toBeNull();
    // In the session's uploads folder, where the remote browser's file dialog opens: the same bytes.
    expect(sha(await readFile(session.sandbox.hostPath('/session/uploads/scan 1.png')))).toBe(sha(bytes));
  }, 30_000);

  it('gives files dropped anywhere on the viewer, opening the panel to show them', async () => {
    const { container } = render(<ShareViewer shareUrl={shareUrl} />);
    const button = await filesButton();
    expect(button).toHaveAttribute('aria-expanded', 'false');
    const dropped = new File(['dropped text'], 'notes.txt', { type: 'text/plain' });
    const dataTransfer = { files: [dropped], types: ['Files'] };
    const viewer = container.querySelector('.rbk-viewer__live')!;
    // A page that does not take the drag over lets the browser open the file itself instead.
    expect(fireEvent.dragOver(viewer, { dataTransfer })).toBe(false);
    fireEvent.drop(viewer, { dataTransfer });
    expect(button).toHaveAttribute('aria-expanded', 'true');
    expect(await screen.findByText(fill(en.uploaded, { name: 'notes.txt' }), {}, { timeout: 15_000 })).toBeInTheDocument();
    expect(await readFile(session.sandbox.hostPath('/session/uploads/notes.txt'), 'utf8')).toBe('dropped text');
  }, 30_000);

  it('says why a file was not given, as an alert', async () => {
    render(<ShareViewer shareUrl={shareUrl} />);
    await userEvent.click(await filesButton());
    const panel = screen.getByRole('region', { name: en.title });
    // A name no session takes (a browser can hand out such a name from another system).
    await userEvent.upload(panel.querySelector<HTMLInputElement>('input[type=file]')!, new File(['x'], '..', { type: 'text/plain' }));
    const alert = await within(panel).findByRole('alert', {}, { timeout: 10_000 });
    expect(alert).toHaveTextContent(fill(en.failed, { name: '..', reason: 'name: ".." is not a file name' }));
  });

  it('is not there for a view-only link, nor with viewOnly', async () => {
    const viewLink = ((await (await fetch(`${engine.url}/share/${linkId}/view-only`, { method: 'POST' })).json()) as { linkId: string }).linkId;
    const watcher = render(<ShareViewer shareUrl={`${engine.url}/en/s?${viewLink}`} />);
    expect(await screen.findByText(resources.en.viewer.running.viewOnly)).toBeInTheDocument();
    const toolbar = screen.getByRole('toolbar', { name: resources.en.viewer.toolbar.label });
    // Longer than the files channel takes to tell a controlling viewer (the tests above).
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(within(toolbar).queryByRole('button', { name: new RegExp(`^${en.button}`) })).toBeNull();
    expect(screen.queryByText(fill(en.save, { name: NAME }))).toBeNull();
    expect(await axeViolations(watcher.container)).toEqual([]);
    watcher.unmount();

    render(<ShareViewer shareUrl={shareUrl} viewOnly />);
    expect(await screen.findByText(resources.en.viewer.running.viewOnly)).toBeInTheDocument();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(screen.queryByRole('button', { name: new RegExp(`^${en.button}`) })).toBeNull();
  });
});
