// Files through the share link (issue 23), against a real engine and a confined Chromium session:
// the files channel tells a controlling viewer of a download as it arrives (its size growing while
// it downloads, then complete), the file is saved through the link with its own name (RFC 5987)
// and the same SHA-256, an upload through the link lands in the session and in the list; a
// view-only link is offered nothing and moves nothing.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { parseFilesChannelMessage, type FilesChannelMessage } from '../../src/protocol/files.js';
import type { RuntimeSession } from '../../src/engine/runtime/runtime.js';
import { v8Caller } from '../helpers/site.js';
import { waitFor } from '../helpers/session.js';

const NAME = 'Bericht März.pdf';
const PAYLOAD = randomBytes(5 * 1024 * 1024);
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

let fixture: EngineFixture;
let engine: Engine;
let origin: string;
let key: string;
let linkId: string;
let vmId: string;
let viewLinkId: string;
let session: RuntimeSession;
const api = v8Caller(() => engine.url, () => key);
const ws = () => engine.url.replace(/^http/, 'ws');

/** The files channel's messages, as a viewer would follow them. */
function follow(link: string): { messages: FilesChannelMessage[]; socket: WebSocket; refused: Promise<number> } {
  const messages: FilesChannelMessage[] = [];
  const socket = new WebSocket(`${ws()}/share/${link}/files`);
  socket.on('message', (data) => {
    const message = parseFilesChannelMessage(data.toString());
    if (message) messages.push(message);
  });
  const refused = new Promise<number>((resolve) => {
    socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
    socket.on('open', () => resolve(101));
  });
  return { messages, socket, refused };
}

beforeAll(async () => {
  fixture = await startEngine({ name: 'files-share', site: (request, response) => {
    if (request.url === '/report') {
      // Slowly, so that a viewer sees it arrive: 5 MB over about 2.5 s.
      response.writeHead(200, { 'content-type': 'application/pdf', 'content-length': PAYLOAD.length, 'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(NAME)}` });
      let offset = 0;
      const timer = setInterval(() => {
        response.write(PAYLOAD.subarray(offset, offset + 256 * 1024));
        offset += 256 * 1024;
        if (offset >= PAYLOAD.length) {
          clearInterval(timer);
          response.end();
        }
      }, 125);
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Files</title><a id="get" href="/report">get</a>');
  } });
  ({ engine, account: { key }, site: { origin } } = fixture);
  const created = await api('/vm/create', { browser: 'chromium', url: `${origin}/` });
  linkId = new URL(created.shareUrl).search.slice(1);
  vmId = created.vmId;
  expect(await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running', 30_000)).toBe('running');
  session = engine.runtime.get((await engine.store.session(created.vmId))!.runtime_id!)!;
  viewLinkId = ((await (await fetch(`${engine.url}/share/${linkId}/view-only`, { method: 'POST' })).json()) as { linkId: string }).linkId;
}, 90_000);

afterAll(async () => {
  await fixture?.close();
});

describe("a share link's files", () => {
  it('tells a controlling viewer of a download as it arrives, then hands it out with its own name and the same SHA-256', async () => {
    const viewer = follow(linkId);
    expect(await viewer.refused).toBe(101);
    const first = await waitFor(() => viewer.messages[0], Boolean);
    expect(first).toMatchObject({ type: 'files', files: [], downloads: true, uploads: true, maxFileBytes: 256 * 1024 * 1024, maxSessionBytes: 512 * 1024 * 1024 });
    await waitFor(() => session.control!.evaluate("Boolean(document.getElementById('get'))").catch(() => false), Boolean);
    await session.control!.evaluate("document.getElementById('get').click(), 1");
    await waitFor(() => viewer.messages.at(-1)?.files.find((f) => f.name === NAME)?.state, (state) => state === 'complete', 20_000);
    // While it arrived the viewer saw it grow, under its final name. (Its last bytes may be
    // written a moment before Chromium renames the file: a full size still downloading is fine.)
    const arriving = viewer.messages.flatMap((m) => m.files).filter((f) => f.state === 'downloading');
    expect(arriving.some((f) => f.size < PAYLOAD.length)).toBe(true);
    expect(arriving.every((f, i) => f.size <= PAYLOAD.length && (i === 0 || f.size >= arriving[i - 1]!.size))).toBe(true);
    expect([...new Set(arriving.map((f) => f.name))]).toEqual([NAME]);
    expect(viewer.messages.at(-1)!.files.find((f) => f.name === NAME)).toMatchObject({ kind: 'download', size: PAYLOAD.length });
    const response = await fetch(`${engine.url}/share/${linkId}/files/download?name=${encodeURIComponent(NAME)}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="Bericht M_rz.pdf"; filename*=UTF-8''Bericht%20M%C3%A4rz.pdf`);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(sha(new Uint8Array(await response.arrayBuffer()))).toBe(sha(PAYLOAD));
    viewer.socket.close();
  }, 40_000);

  it('takes an upload through the link: it lands in the uploads folder and in the list', async () => {
    const viewer = follow(linkId);
    const given = randomBytes(300_000);
    const answer = await fetch(`${engine.url}/share/${linkId}/files/upload?name=${encodeURIComponent('photo 1.jpg')}`, { method: 'POST', body: new Uint8Array(given) as unknown as BodyInit });
    expect(await answer.json()).toEqual({ status: 'ok', name: 'photo 1.jpg', size: given.length });
    const listed = await waitFor(() => viewer.messages.at(-1)?.files.find((f) => f.name === 'photo 1.jpg'), Boolean, 5000);
    expect(listed).toMatchObject({ kind: 'upload', size: given.length, state: 'complete' });
    const hostile = await fetch(`${engine.url}/share/${linkId}/files/upload?name=${encodeURIComponent('../../etc/passwd')}`, { method: 'POST', body: 'x' });
    expect(await hostile.json()).toEqual({ status: 'denied', message: 'name: must be one plain file name, without "/" (no folders or paths)' });
    viewer.socket.close();
  });

  it('offers a view-only link nothing and lets it move nothing', async () => {
    expect(await follow(viewLinkId).refused).toBe(403);
    const fetched = await fetch(`${engine.url}/share/${viewLinkId}/files/download?name=${encodeURIComponent(NAME)}`);
    expect(fetched.status).toBe(403);
    expect(await fetched.json()).toEqual({ status: 'denied', message: 'a view-only link moves no files; ask whoever shared it for the share link' });
    const given = await fetch(`${engine.url}/share/${viewLinkId}/files/upload?name=x.txt`, { method: 'POST', body: 'x' });
    expect(given.status).toBe(403);
    expect((await api(`/vm/files?id=${vmId}`)).files.map((f: { name: string }) => f.name)).not.toContain('x.txt');
  });
});
