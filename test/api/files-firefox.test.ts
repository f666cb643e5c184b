// Files in and out of a Firefox ESR session through the API (issue 23; the Chromium version is
// files.test.ts): a file the remote Firefox downloads is listed and fetched by a program with the
// same SHA-256, and a file the program uploads is what Firefox's own file dialog opens on (the
// uploads folder: the bare name typed into it picks the file). One Firefox session; Firefox has
// no DevTools control here, so the page starts the download itself and the test reads the page's
// answer from the window's title, and clicks and keys go to the session's display.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { RuntimeSession } from '../../src/engine/runtime/runtime.js';
import { v8Caller } from '../helpers/site.js';
import { waitFor, x } from '../helpers/session.js';
import { TEST_STORE, testStore } from './harness.js';

const REPORT = randomBytes(5 * 1024 * 1024);
const GIVEN = randomBytes(2 * 1024 * 1024 + 5);
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

// The page downloads the report as soon as it loads; a file input over the rest of the page puts
// the name and SHA-256 of the file it receives into the title (which the window's name shows).
const PAGE = `<!doctype html><title>Files</title><a id="get" href="/report.bin" download style="display:block;height:40px">get</a>
<input type="file" id="pick" style="position:fixed;left:0;right:0;top:60px;bottom:0;width:100vw;opacity:0.01">
<script>
addEventListener('load', () => document.getElementById('get').click());
document.getElementById('pick').addEventListener('change', async (e) => {
  const file = e.target.files[0];
  const digest = await crypto.subtle.digest('SHA-256', await file.arrayBuffer());
  document.title = 'picked ' + file.name + ' ' + [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
});</script>`;

let fixture: EngineFixture;
let engine: Engine;
let key: string;
let vmId: string;
let session: RuntimeSession;

const api = v8Caller(() => engine.url, () => key);
const filesUrl = (path: string, query: Record<string, string>) => `${engine.url}/v8/vm/files${path}?${new URLSearchParams(query).toString()}`;
/** The remote Firefox window's name: its page's title. */
const windowName = () => x(session, 'xdotool', ['search', '--onlyvisible', '--classname', 'Navigator', 'getwindowname']).catch(() => '');
/** Firefox's own file dialog on the session's display (a GTK dialog named "File Upload - <page title>"). */
const fileDialog = () => x(session, 'xdotool', ['search', '--onlyvisible', '--name', '^File Upload']).then((ids) => ids.trim()).catch(() => '');
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  fixture = await startEngine({ name: 'firefox-files', config: await testStore(), site: (request, response) => {
    if (request.url === '/report.bin') {
      // Not a PDF: Firefox would open a downloaded PDF in a tab of its own.
      return void response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': REPORT.length, 'content-disposition': 'attachment; filename="report.bin"' }).end(REPORT);
    }
    response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  } });
  ({ engine, account: { key } } = fixture);
  const origin = fixture.site.origin;
  expect(engine.store.dialect).toBe(TEST_STORE);
  const created = await api('/vm/create', { browser: 'firefox-esr', url: `${origin}/` });
  expect(created.status).toBe('ok');
  vmId = created.vmId;
  expect(await waitFor(async () => (await api(`/vm/data?id=${vmId}`)).data?.[0]?.status, (s) => s === 'running', 45_000)).toBe('running');
  session = engine.runtime.get((await engine.store.session(vmId))!.runtime_id!)!;
}, 90_000);

afterAll(async () => {
  await fixture?.close();
});

describe('a Firefox ESR session', () => {
  it('lists what the remote Firefox downloaded, and hands it to a program with the same SHA-256', async () => {
    // Firefox finishes a download in steps (the whole file, then its `.part` removed): on a loaded
    // machine the list can be read between them, so the test waits for the download to settle.
    const listed = await waitFor(
      () => api(`/vm/files?id=${vmId}`),
      (a) => a.files?.length === 1 && a.files.some((f: any) => f.name === 'report.bin' && f.state === 'complete'),
      30_000,
    );
    expect(listed.status).toBe('ok');
    // One entry, under its own name: not Firefox's `.part` file beside it, nor a second copy.
    expect(listed.files).toEqual([{ name: 'report.bin', size: REPORT.length, kind: 'download', state: 'complete', created: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) }]);
    const response = await fetch(filesUrl('/download', { id: vmId, name: 'report.bin' }), { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="report.bin"; filename*=UTF-8''report.bin`);
    expect(sha(new Uint8Array(await response.arrayBuffer()))).toBe(sha(REPORT));
  }, 40_000);

  it("takes a program's upload, which Firefox's file dialog opens on: its bare name picks it, with the same SHA-256", async () => {
    const answer = (await (await fetch(filesUrl('/upload', { id: vmId, name: 'contract 3.bin' }), { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: new Uint8Array(GIVEN) as unknown as BodyInit })).json()) as Record<string, unknown>;
    expect(answer).toEqual({ status: 'ok', name: 'contract 3.bin', size: GIVEN.length });
    expect((await api(`/vm/files?id=${vmId}`)).files.find((f: any) => f.name === 'contract 3.bin')).toMatchObject({ kind: 'upload', size: GIVEN.length, state: 'complete' });
    expect(await windowName()).toMatch(/^Files\b/);
    // Firefox shows its downloads panel after a download: Esc closes it, so that the click below
    // reaches the page and opens the browser's own file dialog.
    await x(session, 'xdotool', ['key', 'Escape']);
    await pause(300);
    await x(session, 'xdotool', ['mousemove', '640', '400', 'click', '1']);
    expect(await waitFor(fileDialog, (id) => id !== '', 15_000)).not.toBe('');
    await pause(500);
    // Only the file's name: it is found because the dialog opened in the uploads folder.
    await x(session, 'xdotool', ['key', 'ctrl+l']);
    await pause(300);
    await x(session, 'xdotool', ['type', '--delay', '30', 'contract 3.bin']);
    await pause(500);
    await x(session, 'xdotool', ['key', 'Return']);
    const title = await waitFor(windowName, (name) => name.startsWith('picked'), 15_000);
    expect(title).toMatch(new RegExp(`^picked contract 3\\.bin ${sha(GIVEN)}\\b`));
    expect(await fileDialog()).toBe('');
  }, 60_000);
});
