// Files in and out through the API (issue 23), against a real engine and a confined Chromium
// session: a program lists and fetches what the remote page downloaded (same SHA-256), uploads a
// file that the remote page then picks in its own file dialog (opened in the uploads folder, the
// file chosen by keys on the session's display), and is refused, in the envelope naming the field,
// for hostile names, oversized bodies, a link planted in downloads, another account's key, a plan
// without files, and a session that ended.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { RuntimeSession } from '../../src/engine/runtime/runtime.js';
import { v8Caller } from '../helpers/site.js';
import { fileDialogShows, folderBytes, waitFor, x } from '../helpers/session.js';
import { TEST_STORE, testStore } from './harness.js';

const FIVE_MB = randomBytes(5 * 1024 * 1024);
const sha = (bytes: Buffer | Uint8Array) => createHash('sha256').update(bytes).digest('hex');

// The page offers a download, and a file input over the whole page that shows the SHA-256 of the file picked.
const PAGE = `<!doctype html><title>Files</title><a id="get" href="/report.pdf" download>get</a>
<input type="file" id="pick" style="position:fixed;inset:0;width:100vw;height:100vh;opacity:0.01">
<script>document.getElementById('pick').addEventListener('change', async (e) => {
  const file = e.target.files[0];
  const digest = await crypto.subtle.digest('SHA-256', await file.arrayBuffer());
  document.title = 'picked ' + file.name + ' ' + [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
});</script>`;

let fixture: EngineFixture;
let engine: Engine;
let origin: string;
let key: string;
let otherKey: string;
let vmId: string;
let session: RuntimeSession;

const api = v8Caller(() => engine.url, () => key);
const filesUrl = (path: string, query: Record<string, string>) => `${engine.url}/v8/vm/files${path}?${new URLSearchParams(query).toString()}`;
const download = (name: string, withKey = key, id = vmId) => fetch(filesUrl('/download', { id, name }), { headers: { authorization: `Bearer ${withKey}` } });
const upload = async (name: string, body: Buffer, withKey = key, id = vmId) =>
  (await (await fetch(filesUrl('/upload', { id, name }), { method: 'POST', headers: { authorization: `Bearer ${withKey}` }, body: new Uint8Array(body) as unknown as BodyInit })).json()) as Record<string, any>;

beforeAll(async () => {
  fixture = await startEngine({
    name: 'files',
    site: (request, response) => {
      if (request.url === '/report.pdf') return void response.writeHead(200, { 'content-type': 'application/pdf', 'content-length': FIVE_MB.length }).end(FIVE_MB);
      response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    },
    config: {
      // On the run's Postgres in the api-postgres project, as every other API test.
      ...(await testStore()),
      files: { maxFileMb: 8, maxSessionMb: 12 },
      plans: [
        { id: 'pro', name: 'Pro', running_session_limit: 2, cycle_session_limit: null, residential_cycle_mb_limit: null, location_access: false, programmatic_access: true, max_session_minutes: 60, idle_timeout_minutes: 30 },
        { id: 'nofiles', name: 'No files', running_session_limit: 2, cycle_session_limit: null, residential_cycle_mb_limit: null, location_access: false, programmatic_access: true, max_session_minutes: 60, idle_timeout_minutes: 30, downloads: false, uploads: false },
      ],
    },
  });
  ({ engine, account: { key }, site: { origin } } = fixture);
  expect(engine.store.dialect).toBe(TEST_STORE);
  otherKey = (await engine.accounts.create({ contact: 'other@example.com', plans: ['pro'] })).apiKey.key;
  const created = await api('/vm/create', { browser: 'chromium', url: `${origin}/` });
  expect(created.status).toBe('ok');
  vmId = created.vmId;
  expect(await waitFor(async () => (await api(`/vm/data?id=${vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
  session = engine.runtime.get((await engine.store.session(vmId))!.runtime_id!)!;
}, 90_000);

afterAll(async () => {
  await fixture?.close();
});

describe('GET /v8/vm/files and /vm/files/download', () => {
  it('lists what the remote page downloaded, and hands it out with its own name and the same SHA-256', async () => {
    await waitFor(() => session.control!.evaluate("Boolean(document.getElementById('get'))").catch(() => false), Boolean);
    await session.control!.evaluate("document.getElementById('get').click(), 1");
    const listed = await waitFor(() => api(`/vm/files?id=${vmId}`), (a) => a.files?.some((f: any) => f.name === 'report.pdf' && f.state === 'complete'), 20_000);
    expect(listed.status).toBe('ok');
    const entry = listed.files.find((f: any) => f.name === 'report.pdf');
    expect(entry).toMatchObject({ name: 'report.pdf', size: FIVE_MB.length, kind: 'download', state: 'complete' });
    expect(entry.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const response = await download('report.pdf');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`);
    expect(Number(response.headers.get('content-length'))).toBe(FIVE_MB.length);
    expect(sha(new Uint8Array(await response.arrayBuffer()))).toBe(sha(FIVE_MB));
    // The same under /v7.
    const v7 = await fetch(`${engine.url}/v7/vm/files?id=${vmId}`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await v7.json()) as any).files.some((f: any) => f.name === 'report.pdf')).toBe(true);
  });

  it('refuses hostile names, a missing file and a link planted in downloads, in the envelope', async () => {
    for (const name of ['../../etc/passwd', '/etc/passwd', 'a/b', 'x\0y', 'x'.repeat(300)]) {
      const response = await download(name);
      expect(response.status).toBe(400);
      const body = (await response.json()) as any;
      expect(body.status).toBe('denied');
      expect(body.message).toMatch(/^name: /);
    }
    await session.sandbox.run('/usr/bin/ln', ['-s', '/etc/hostname', '/session/downloads/hostname'], session.sandbox.env);
    const linked = await download('hostname');
    expect(linked.status).toBe(403);
    expect(((await linked.json()) as any).message).toMatch(/^name: "hostname" is not a plain file/);
    const missing = await download('absent.pdf');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).message).toBe('name: no file named "absent.pdf" in this session');
  });
});

describe('POST /v8/vm/files/upload', () => {
  const GIVEN = randomBytes(2 * 1024 * 1024 + 3);

  it('takes a file that the remote page then picks in its own dialog, with the same SHA-256', async () => {
    const answer = await upload('contract-2.bin', GIVEN);
    expect(answer).toEqual({ status: 'ok', name: 'contract-2.bin', size: GIVEN.length });
    const listed = await api(`/vm/files?id=${vmId}`);
    expect(listed.files.find((f: any) => f.name === 'contract-2.bin')).toMatchObject({ kind: 'upload', size: GIVEN.length, state: 'complete' });
    // A click on the page opens the browser's own file dialog; it opens in the uploads folder, so
    // the name typed into its location (Ctrl+L) and "Open" (Alt+O) pick the file.
    await x(session, 'xdotool', ['mousemove', '640', '400', 'click', '1']);
    expect(await fileDialogShows(session)).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    await x(session, 'xdotool', ['key', 'ctrl+l']);
    await new Promise((r) => setTimeout(r, 300));
    await x(session, 'xdotool', ['type', '--delay', '30', 'contract-2.bin']);
    await new Promise((r) => setTimeout(r, 500));
    await x(session, 'xdotool', ['key', 'alt+o']);
    const title = await waitFor(() => session.control!.evaluate('document.title').catch(() => ''), (t) => String(t).startsWith('picked'), 15_000);
    expect(title).toBe(`picked contract-2.bin ${sha(GIVEN)}`);
  });

  it('refuses hostile names and oversized files naming the field and the cap, writing nothing', async () => {
    const uploadsBefore = await readdir(session.sandbox.hostPath('/session/uploads'));
    for (const name of ['../../etc/passwd', '/tmp/owned', 'a/b', 'x\0y', '..', 'x'.repeat(300)]) {
      const answer = await upload(name, Buffer.from('owned'));
      expect(answer.status).toBe('denied');
      expect(answer.message).toMatch(/^name: /);
    }
    const tooBig = await upload('big.bin', randomBytes(9 * 1024 * 1024));
    expect(tooBig).toEqual({ status: 'denied', message: 'body: a file may be at most 8 MB on this service (this one is 9 MB)' });
    // 2 MB given already: 7 MB more fit the file cap but not the session's 12 MB with the 5 MB below.
    expect((await upload('five.bin', randomBytes(5 * 1024 * 1024))).status).toBe('ok');
    const full = await upload('seven.bin', randomBytes(7 * 1024 * 1024));
    expect(full.status).toBe('denied');
    expect(full.message).toContain('12 MB');
    expect((await readdir(session.sandbox.hostPath('/session/uploads'))).sort()).toEqual([...uploadsBefore, 'five.bin'].sort());
    expect(existsSync('/tmp/owned')).toBe(false);
    expect(existsSync(session.sandbox.hostPath('/tmp/owned'))).toBe(false);
  });

  it("refuses a name the engine keeps for its own temporary files, naming name, writing nothing", async () => {
    const uploadsFolder = session.sandbox.hostPath('/session/uploads');
    const before = (await readdir(uploadsFolder)).sort();
    const answer = await upload('.rbk-upload-4242', Buffer.from('hidden and uncounted'));
    expect(answer.status).toBe('denied');
    expect(answer.message).toMatch(/^name: /);
    expect((await readdir(uploadsFolder)).sort()).toEqual(before);
  });

  it('holds the session cap across five uploads at once: what is stored stays under it, the rest are refused naming it', async () => {
    const uploadsFolder = session.sandbox.hostPath('/session/uploads');
    const storedBytes = () => folderBytes(uploadsFolder);
    const cap = 12 * 1024 * 1024;
    // Whatever the earlier tests left: each of the five takes a little under half the room left, so two fit.
    const size = Math.floor((cap - (await storedBytes())) / 2) - 1;
    expect(size).toBeGreaterThan(0);
    const answers = await Promise.all([0, 1, 2, 3, 4].map((i) => upload(`together-${i}.bin`, randomBytes(size))));
    const taken = answers.filter((a) => a.status === 'ok');
    expect(taken.length).toBe(2);
    for (const refused of answers.filter((a) => a.status !== 'ok')) {
      expect(refused.status).toBe('denied');
      expect(refused.message).toMatch(/^body: .*12 MB/);
    }
    expect(await storedBytes()).toBeLessThanOrEqual(cap);
    expect((await readdir(uploadsFolder)).filter((name) => name.startsWith('.rbk-upload-'))).toEqual([]);
  });
});

describe('who may reach the files', () => {
  it("refuses another account's key, without saying whether the session exists", async () => {
    expect(await (await fetch(filesUrl('', { id: vmId }), { headers: { authorization: `Bearer ${otherKey}` } })).json()).toEqual({ status: 'denied', message: 'id: unknown session' });
    const fetched = await download('report.pdf', otherKey);
    expect(fetched.status).toBe(403);
    expect(await fetched.json()).toEqual({ status: 'denied', message: 'id: unknown session' });
    expect(await upload('x.txt', Buffer.from('x'), otherKey)).toEqual({ status: 'denied', message: 'id: unknown session' });
    const noKey = await fetch(filesUrl('/download', { id: vmId, name: 'report.pdf' }));
    expect(noKey.status).toBe(401);
  });

  it('answers upgrade for a plan without files, and denied once the session has ended', async () => {
    const limited = (await engine.accounts.create({ contact: 'limited@example.com', plans: ['nofiles'] })).apiKey.key;
    const call = v8Caller(() => engine.url, () => limited);
    const created = await call('/vm/create', { browser: 'chromium', url: `${origin}/` });
    expect(await waitFor(async () => (await call(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
    const refused = await upload('a.txt', Buffer.from('a'), limited, created.vmId);
    expect(refused).toEqual({ status: 'upgrade', message: 'your plan does not include giving files to sessions' });
    const fetched = await download('report.pdf', limited, created.vmId);
    expect(fetched.status).toBe(403);
    expect(await fetched.json()).toEqual({ status: 'upgrade', message: 'your plan does not include fetching files a session downloaded' });
    expect((await call(`/vm/files?id=${created.vmId}`)).files).toEqual([]);
    expect((await call('/vm/remove', { id: created.vmId })).status).toBe('ok');
    await waitFor(async () => (await call(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'deleted', 20_000);
    expect((await call(`/vm/files?id=${created.vmId}`)).message).toMatch(/^id: the session is (stopping|deleted); a session's files go away with it$/);
  }, 60_000);
});
