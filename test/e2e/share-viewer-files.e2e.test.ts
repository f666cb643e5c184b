// End to end, files in and out as a person moves them (issue 23): a real engine, a confined
// Chromium session, and the engine's own viewer site opened at the share link in Debian Chromium
// (playwright-core). The remote page downloads a 5 MB file: the viewer's Files panel offers it and
// the viewer's browser saves it with its own name and the same SHA-256. The viewer gives a file
// (its browser's file chooser); the remote page's <input type=file>, opened by a click through
// the viewer, receives it with the same SHA-256, picked in the remote dialog by keys typed into the
// viewer and its Open button clicked there. A view-only viewer is offered no files.
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { RuntimeSession } from '../../src/engine/runtime/runtime.js';
import { fileDialogOpenButton, fileDialogShows, waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';

const REPORT = randomBytes(5 * 1024 * 1024);
const GIVEN = randomBytes(700_000);
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

// A download link at the top; below it, a file input over the rest of the page that shows the SHA-256 of what it receives.
const PAGE = `<!doctype html><title>Files</title><a id="get" href="/report.pdf" download style="display:block;height:40px">get</a>
<input type="file" id="pick" style="position:fixed;left:0;right:0;top:60px;bottom:0;width:100vw;opacity:0.01">
<script>document.getElementById('pick').addEventListener('change', async (e) => {
  const file = e.target.files[0];
  const digest = await crypto.subtle.digest('SHA-256', await file.arrayBuffer());
  document.title = 'picked ' + file.name + ' ' + [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
});</script>`;

let fixture: EngineFixture;
let engine: Engine;
let key: string;
let browser: Browser;
let shareUrl: string;
let vmId: string;
let session: RuntimeSession;
const api = v8Caller(() => engine.url, () => key);

async function openViewer(url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  await page.goto(url);
  await page.waitForSelector('.rbk-viewer__screen canvas', { timeout: 30_000 });
  await expect.poll(() => page.locator('.rbk-viewer__live').getAttribute('data-connection'), { timeout: 15_000 }).toBe('connected');
  return page;
}

beforeAll(async () => {
  fixture = await startEngine({ name: 'files-e2e', site: (request, response) => {
    if (request.url === '/report.pdf') return void response.writeHead(200, { 'content-type': 'application/pdf', 'content-length': REPORT.length }).end(REPORT);
    response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  } });
  ({ engine, account: { key } } = fixture);
  const origin = fixture.site.origin;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  const created = await api('/vm/create', { browser: 'chromium', url: `${origin}/`, shareLanguage: 'en' });
  expect(created.status).toBe('ok');
  shareUrl = created.shareUrl;
  vmId = created.vmId;
  expect(await waitFor(async () => (await api(`/vm/data?id=${vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
  session = engine.runtime.get((await engine.store.session(vmId))!.runtime_id!)!;
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await fixture?.close();
});

describe("a share link's viewer moves files", () => {
  it('is offered what the remote page downloads and saves it with its own name and the same SHA-256', async () => {
    const page = await openViewer(shareUrl);
    await waitFor(() => session.control!.evaluate("Boolean(document.getElementById('get'))").catch(() => false), Boolean);
    await session.control!.evaluate("document.getElementById('get').click(), 1");
    const files = page.getByRole('button', { name: /^Files/ });
    await files.waitFor({ timeout: 15_000 });
    await files.click();
    const save = page.getByRole('link', { name: 'Save report.pdf' });
    await save.waitFor({ timeout: 20_000 });
    const [download] = await Promise.all([page.waitForEvent('download'), save.click()]);
    expect(download.suggestedFilename()).toBe('report.pdf');
    expect(sha(await readFile((await download.path())!))).toBe(sha(REPORT));
    // A program sees the same file.
    const listed = await api(`/vm/files?id=${vmId}`);
    expect(listed.files.find((f: { name: string }) => f.name === 'report.pdf')).toMatchObject({ size: REPORT.length, kind: 'download' });
    await page.close();
  }, 60_000);

  it('gives a file that the remote page picks in its own dialog, by a click and keys through the viewer', async () => {
    const page = await openViewer(shareUrl);
    await page.getByRole('button', { name: /^Files/ }).click();
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Give files…' }).click()]);
    await chooser.setFiles({ name: 'signed-contract.bin', mimeType: 'application/octet-stream', buffer: GIVEN });
    await page.getByRole('status').filter({ hasText: "signed-contract.bin is in the remote browser's uploads folder" }).waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Close' }).click();
    // A click on the remote page (its file input) through the viewer's screen opens the remote dialog.
    const box = (await page.locator('.rbk-viewer__screen canvas').boundingBox())!;
    await page.mouse.click(box.x + box.width / 2, box.y + box.height * 0.6);
    expect(await fileDialogShows(session)).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    await page.keyboard.press('Control+L');
    await new Promise((r) => setTimeout(r, 300));
    await page.keyboard.type('signed-contract.bin', { delay: 30 });
    await new Promise((r) => setTimeout(r, 500));
    // "Open", clicked through the viewer's screen (scaled from the remote display to the canvas).
    const display = await page.evaluate(() => {
      const canvas = document.querySelector('.rbk-viewer__screen canvas') as HTMLCanvasElement;
      return { width: canvas.width, height: canvas.height };
    });
    const open = await fileDialogOpenButton(session, display.width, display.height);
    await page.mouse.click(box.x + (open.x * box.width) / display.width, box.y + (open.y * box.height) / display.height);
    const title = await waitFor(() => session.control!.evaluate('document.title').catch(() => ''), (t) => String(t).startsWith('picked'), 15_000);
    expect(title).toBe(`picked signed-contract.bin ${sha(GIVEN)}`);
    await page.close();
  }, 60_000);

  it('offers a view-only viewer no files', async () => {
    const linkId = new URL(shareUrl).search.slice(1) || new URL(shareUrl).pathname.split('/').pop()!;
    const made = (await (await fetch(`${engine.url}/share/${linkId}/view-only`, { method: 'POST' })).json()) as { shareUrl: string };
    const page = await openViewer(made.shareUrl);
    await page.getByRole('button', { name: /full screen/i }).waitFor();
    expect(await page.getByRole('button', { name: /^Files/ }).count()).toBe(0);
    await page.close();
  }, 60_000);
});
