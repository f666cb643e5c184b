// A session's files through the program inside it (issue 23), with real parts: a confined Chromium
// session whose page downloads a file into its downloads folder; uploads written, listed and read
// back byte for byte; hostile names, a link to a host file, a FIFO and oversized uploads refused,
// with nothing written outside the session and nothing read from outside it; the remote file
// dialog opening in the uploads folder.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionRuntime, type RuntimeSession } from '../../src/engine/runtime/runtime.js';
import { FileRefusal, SessionFiles } from '../../src/engine/runtime/session/session-files.js';
import { folderBytes, waitFor } from '../helpers/session.js';

const PAYLOAD = randomBytes(3 * 1024 * 1024 + 17);
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const CAPS = { maxFileBytes: 4 * 1024 * 1024, maxSessionBytes: 6 * 1024 * 1024 };

let site: Server;
let origin: string;
let dataDir: string;
let runtime: SessionRuntime;
let session: RuntimeSession;
let files: SessionFiles;

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function refusal(promise: Promise<unknown>): Promise<FileRefusal> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(FileRefusal);
  return error as FileRefusal;
}

beforeAll(async () => {
  site = createServer((request, response) => {
    if (request.url === '/report.bin') {
      response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="report.bin"', 'content-length': PAYLOAD.length });
      response.end(PAYLOAD);
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Files</title><a id="get" href="/report.bin">get</a><input type="file" id="pick">');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  dataDir = await mkdtemp(join(tmpdir(), 'rbk-files-'));
  ({ runtime } = await SessionRuntime.open({ root: join(dataDir, 'sessions'), egress: { allow: ['127.0.0.1/32'] }, confinement: { memoryMb: 1024, diskMb: 96 } }));
  session = await runtime.startSession({ browser: 'chromium', url: `${origin}/`, language: 'en', layout: 'us' });
  files = new SessionFiles(session.sandbox);
}, 60_000);

afterAll(async () => {
  await runtime?.close();
  await new Promise((resolve) => site?.close(resolve));
  await rm(dataDir, { recursive: true, force: true });
});

describe("a confined session's files", () => {
  it('lists a file the remote page downloaded, and reads it back with the same SHA-256', async () => {
    await waitFor(() => session.control!.evaluate("Boolean(document.getElementById('get'))").catch(() => false), Boolean);
    await session.control!.evaluate("document.getElementById('get').click(), 1");
    const listed = await waitFor(() => files.list(), (list) => list.some((f) => f.name === 'report.bin' && f.state === 'complete'), 20_000);
    const entry = listed.find((f) => f.name === 'report.bin')!;
    expect(entry).toMatchObject({ kind: 'download', size: PAYLOAD.length, state: 'complete' });
    expect(Date.parse(entry.created)).toBeGreaterThan(Date.now() - 60_000);
    const { size, stream } = await files.read('download', 'report.bin');
    expect(size).toBe(PAYLOAD.length);
    expect(sha(await readAll(stream))).toBe(sha(PAYLOAD));
  });

  it('writes an upload, lists it and reads it back; the same name again replaces it', async () => {
    expect(await files.write('notes (1).txt', Readable.from([Buffer.from('first')]), CAPS)).toBe(5);
    expect(await files.write('Grüße ✓.bin', Readable.from([PAYLOAD]), CAPS)).toBe(PAYLOAD.length);
    expect(sha(await readAll((await files.read('upload', 'Grüße ✓.bin')).stream))).toBe(sha(PAYLOAD));
    expect(await files.write('notes (1).txt', Readable.from([Buffer.from('second!')]), CAPS)).toBe(7);
    const uploads = (await files.list()).filter((f) => f.kind === 'upload');
    expect(uploads.map((f) => [f.name, f.size]).sort()).toEqual([['Grüße ✓.bin', PAYLOAD.length], ['notes (1).txt', 7]]);
    // Written as the session's uid, in its own folder, where the browser reads it.
    const written = await stat(session.sandbox.hostPath('/session/uploads/notes (1).txt'));
    expect(written.uid).toBe(session.sandbox.uid);
  });

  it('refuses hostile names and writes nothing anywhere', async () => {
    const before = await readdir(session.sandbox.hostPath('/session'));
    for (const name of ['../../etc/passwd', '/etc/passwd', 'a/b', 'nul\0byte', '.', '..', '', 'x'.repeat(300), 'é'.repeat(128)]) {
      const refused = await refusal(files.write(name, Readable.from([Buffer.from('owned')]), CAPS));
      expect(refused.reason).toBe('name');
      expect(refused.message).toMatch(/^name: /);
      expect((await refusal(files.read('download', name))).reason).toBe('name');
    }
    expect(await readdir(session.sandbox.hostPath('/session'))).toEqual(before);
    expect(existsSync(join(session.sandbox.hostPath('/session'), 'etc'))).toBe(false);
  });

  it('refuses a link planted in downloads that points at a file outside, and a FIFO, without reading them', async () => {
    await session.sandbox.run('/usr/bin/ln', ['-s', '/etc/hostname', '/session/downloads/hostname'], session.sandbox.env);
    await session.sandbox.run('/usr/bin/mkfifo', ['/session/downloads/pipe'], session.sandbox.env);
    expect((await files.list()).map((f) => f.name)).not.toContain('hostname');
    expect((await refusal(files.read('download', 'hostname'))).reason).toBe('not-regular');
    expect((await refusal(files.read('download', 'pipe'))).reason).toBe('not-regular');
    expect((await refusal(files.read('download', 'absent.pdf'))).reason).toBe('missing');
    // An upload under a link's name replaces the link; the file it pointed at is untouched.
    await session.sandbox.run('/usr/bin/ln', ['-s', '/session/home/target', '/session/uploads/trap'], session.sandbox.env);
    await files.write('trap', Readable.from([Buffer.from('data')]), CAPS);
    expect(existsSync(session.sandbox.hostPath('/session/home/target'))).toBe(false);
  });

  it("lists a download Firefox is still writing once, under its final name, and will not hand it out yet", async () => {
    // Firefox ESR writes `report.<8 random>.pdf.part` and keeps an empty `report.pdf` for it.
    await session.sandbox.run('/usr/bin/truncate', ['-s', '1000', '/session/downloads/quarterly.Ak_kM1-D.pdf.part'], session.sandbox.env);
    await session.sandbox.run('/usr/bin/truncate', ['-s', '0', '/session/downloads/quarterly.pdf'], session.sandbox.env);
    const arriving = (await files.list(['download'])).filter((f) => f.name.startsWith('quarterly'));
    expect(arriving).toEqual([expect.objectContaining({ name: 'quarterly.pdf', size: 1000, state: 'downloading' })]);
    expect((await refusal(files.read('download', 'quarterly.pdf'))).reason).toBe('downloading');
    // Whole: Firefox moves it over the empty file.
    await session.sandbox.run('/usr/bin/mv', ['/session/downloads/quarterly.Ak_kM1-D.pdf.part', '/session/downloads/quarterly.pdf'], session.sandbox.env);
    expect((await files.list(['download'])).filter((f) => f.name.startsWith('quarterly'))).toEqual([expect.objectContaining({ name: 'quarterly.pdf', size: 1000, state: 'complete' })]);
  });

  it('refuses a file over the per-file cap and uploads over the session cap, leaving nothing behind', async () => {
    const big = randomBytes(CAPS.maxFileBytes + 1);
    const tooBig = await refusal(files.write('big.bin', Readable.from([big]), { ...CAPS, maxSessionBytes: 64 * 1024 * 1024 }));
    expect(tooBig.reason).toBe('file-cap');
    expect(tooBig.message).toContain('4 MB');
    // 3 MB are there already; another 3.5 MB pass the file cap but not the session's 6 MB.
    const full = await refusal(files.write('more.bin', Readable.from([randomBytes(3.5 * 1024 * 1024)]), CAPS));
    expect(full.reason).toBe('session-cap');
    expect(full.message).toContain('6 MB');
    const left = await readdir(session.sandbox.hostPath('/session/uploads'));
    expect(left.sort()).toEqual(['Grüße ✓.bin', 'notes (1).txt', 'trap']);
  });

  it("refuses a name the engine keeps for its own temporary files, and writes nothing", async () => {
    const before = (await readdir(session.sandbox.hostPath('/session/uploads'))).sort();
    for (const name of ['.rbk-upload-1', '.rbk-upload-', '.rbk-upload-report.pdf']) {
      const refused = await refusal(files.write(name, Readable.from([Buffer.from('hidden and uncounted')]), CAPS));
      expect(refused.reason).toBe('name');
      expect(refused.message).toMatch(/^name: /);
      expect((await refusal(files.read('upload', name))).reason).toBe('name');
    }
    expect((await readdir(session.sandbox.hostPath('/session/uploads'))).sort()).toEqual(before);
  });

  it('holds the session cap across five uploads at once, announced or not, leaving no partial file', async () => {
    const uploadsFolder = session.sandbox.hostPath('/session/uploads');
    const storedBytes = () => folderBytes(uploadsFolder);
    const SIZE = 1024 * 1024 + 5;
    const HALF = 512 * 1024;
    for (const announced of [true, false]) {
      // Room for two of the five; each is under the per-file cap.
      const stored = await storedBytes();
      const caps = { maxFileBytes: CAPS.maxFileBytes, maxSessionBytes: stored + 2 * SIZE + 1000 };
      // Each body holds its second half back until every upload has either begun writing (its
      // temporary file is there: its program counted) or been answered: all five are in flight at once.
      let settled = 0;
      const temporaries = async () => (await readdir(uploadsFolder)).filter((name) => name.startsWith('.rbk-upload-'));
      const gate = waitFor(async () => (await temporaries()).length + settled, (n) => n >= 5, 20_000);
      const body = () => {
        const bytes = randomBytes(SIZE);
        let step = 0;
        return new Readable({
          read() {
            step += 1;
            if (step === 1) return void this.push(bytes.subarray(0, HALF));
            if (step !== 2) return;
            void gate.then(() => {
              this.push(bytes.subarray(HALF));
              this.push(null);
            });
          },
        });
      };
      const outcomes = await Promise.all(
        [0, 1, 2, 3, 4].map((i) =>
          files
            .write(`together-${announced}-${i}.bin`, body(), caps, announced ? SIZE : null)
            .then((size) => ({ size }), (error: unknown) => ({ error }))
            .finally(() => (settled += 1)),
        ),
      );
      const taken = outcomes.filter((o): o is { size: number } => 'size' in o);
      const refused = outcomes.filter((o): o is { error: unknown } => 'error' in o);
      // Announced lengths are reserved whole before a byte is read: first come, first reserved.
      if (announced) expect(taken.length).toBe(2);
      else expect(taken.length).toBeLessThanOrEqual(2);
      for (const { error } of refused) expect(error).toMatchObject({ reason: 'session-cap' });
      expect(await storedBytes()).toBeLessThanOrEqual(caps.maxSessionBytes);
      expect(await storedBytes()).toBe(stored + taken.length * SIZE);
      expect(await temporaries()).toEqual([]);
    }
  });

  it('gives back the room of an upload cut off midway: its partial file is removed', async () => {
    const uploadsFolder = session.sandbox.hostPath('/session/uploads');
    const before = (await readdir(uploadsFolder)).sort();
    let step = 0;
    let settled = false;
    const cut = new Readable({
      read() {
        step += 1;
        if (step === 1) return void this.push(randomBytes(300 * 1024));
        if (step !== 2) return;
        // The sender goes away once the program has begun writing.
        void waitFor(async () => settled || (await readdir(uploadsFolder)).some((name) => name.startsWith('.rbk-upload-') && !before.includes(name)), Boolean).then(() => this.destroy(new Error('the sender went away')));
      },
    });
    const error = await files
      .write('cut.bin', cut, { ...CAPS, maxSessionBytes: 64 * 1024 * 1024 }, 2 * 1024 * 1024)
      .then(() => undefined, (e: unknown) => e)
      .finally(() => (settled = true));
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(FileRefusal);
    expect((await readdir(uploadsFolder)).sort()).toEqual(before);
  });

  it("opens the browser's file dialog in the uploads folder", async () => {
    const preferences = await stat(session.sandbox.hostPath('/session/profile/Default/Preferences'));
    expect(preferences.isFile()).toBe(true);
    const dirs = await readdir(session.sandbox.hostPath('/session'));
    expect(dirs).toEqual(expect.arrayContaining(['downloads', 'uploads']));
  });
});
