// Recordings on a cluster (issue 35, decisions.md 107): two engine nodes on one Postgres. A
// recorded session runs on one node; the other answers for its recording as if it kept it: the
// description with its timeline, the MP4 (whole and by range, which ffprobe reads), the account's
// meter and the removal. A plan's recording_mb_limit stops a recording on the node that records
// it and denies the next at the other node, which counts what the keeper keeps (decisions.md 131).
// With the keeper gone, the other node says so in the envelope.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/engine/config.js';
import { startClusterNode, type ClusterNode } from '../helpers/cluster-node.js';
import { testDatabase } from '../helpers/postgres.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';

const SECRET = 'recordings-cluster-secret-0123456789abcdef';
const PAGE = '<!doctype html><title>Kept</title><body style="margin:0;background:#00f"><h1 style="color:#fff">kept on one node</h1></body>';
/** A page whose picture changes all over, every frame: its recording reaches a megabyte in seconds. */
const MOVING = `<!doctype html><title>Moving</title><body style="margin:0"><canvas id="c" width="1280" height="720"></canvas><script>
var c = document.getElementById('c').getContext('2d'), n = 0;
setInterval(function () { n++; for (var i = 0; i < 60; i++) { c.fillStyle = 'hsl(' + ((n * 37 + i * 53) % 360) + ',80%,50%)'; c.fillRect((i * 97 + n * 13) % 1200, (i * 61 + n * 7) % 680, 80, 40); } }, 33);
</script></body>`;
const pro = DEFAULT_PLANS.find((plan) => plan.id === 'pro')!;
const nodes = new Map<string, ClusterNode>();
const engines = { get: (id: string) => nodes.get(id)?.engine };
let scratch: string;
let database: string;
let site: Server;
let origin: string;
let key: string;

const api = (id: string) => v8Caller(() => engines.get(id)!.url, () => key);
const media = (id: string, vmId: string, range?: string) =>
  fetch(`${engines.get(id)!.url}/v8/vm/recording/media?id=${vmId}`, { headers: { authorization: `Bearer ${key}`, ...(range ? { range } : {}) } });

beforeAll(async () => {
  site = createServer((request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(request.url === '/moving' ? MOVING : PAGE));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  database = await testDatabase();
  scratch = await mkdtemp(join(tmpdir(), 'rbk-recordings-cluster-'));
  for (const id of ['node-a', 'node-b']) nodes.set(id, await startClusterNode({ database, id, secret: SECRET, config: { plans: [...DEFAULT_PLANS, { ...pro, id: 'recorded', name: 'Recorded', recording: true }, { ...pro, id: 'capped', name: 'Recorded, 1 MB', recording: true, recording_mb_limit: 1 }] } }));
  key = (await engines.get('node-a')!.accounts.create({ contact: 'cluster-recordings@example.com', plans: ['recorded'] })).apiKey.key;
}, 120_000);

afterAll(async () => {
  for (const node of nodes.values()) await node.close();
  site?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('a recording on a two-node cluster', () => {
  let vmId = '';
  let keeper = '';
  let other = '';

  it('is described, downloaded and counted through the node that did not run it', async () => {
    // node-b takes no sessions: node-a runs it, node-b only answers for it.
    await engines.get('node-a')!.store.setNodeState('node-b', 'draining');
    const created = await api('node-b')('/vm/create', { browser: 'chromium', url: `${origin}/kept`, record: true });
    expect(created.status, JSON.stringify(created)).toBe('ok');
    vmId = created.vmId;
    keeper = (await engines.get('node-a')!.store.session(vmId))!.node_id!;
    other = keeper === 'node-a' ? 'node-b' : 'node-a';
    expect(keeper).toBe('node-a');

    // The page's navigation may be in the timeline while the session is still starting (under
    // load the recording says `starting` a while longer): wait for both.
    const during = await waitFor(() => api(other)(`/vm/recording?id=${vmId}`), (answer) => answer.recording?.state === 'recording' && answer.recording.timeline.some((entry: { url?: string }) => entry.url === `${origin}/kept`), 90_000);
    expect(during.recording.state).toBe('recording');
    // The first page's navigation is there though it came while the session was still starting.
    expect(during.recording.timeline.filter((entry: { type: string }) => entry.type === 'navigation').map((entry: { url: string }) => entry.url)).toEqual([`${origin}/kept`]);
    // Some seconds of picture, then the session ends.
    await waitFor(() => api(other)(`/vm/recording?id=${vmId}`), (answer) => answer.recording?.duration_ms > 3000, 30_000);
    expect((await api(other)('/vm/remove', { id: vmId })).status).toBe('ok');
    const ended = await waitFor(() => api(other)(`/vm/recording?id=${vmId}`), (answer) => answer.recording?.state === 'ended', 30_000);
    expect(ended.recording.timeline.at(-1)).toMatchObject({ type: 'ended', reason: 'removed' });
    expect(ended.recording.bytes).toBeGreaterThan(1000);

    const whole = await media(other, vmId);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/mp4');
    const bytes = Buffer.from(await whole.arrayBuffer());
    expect(Number(whole.headers.get('content-length'))).toBe(bytes.length);
    const file = join(scratch, 'through-other-node.mp4');
    writeFileSync(file, bytes);
    const probe = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name', '-of', 'json', file], { encoding: 'utf8' })) as { streams: Array<{ codec_type: string; codec_name: string }> };
    expect(probe.streams.map((stream) => `${stream.codec_type} ${stream.codec_name}`)).toContain('video h264');

    // A player's range request: the same bytes, the part asked for.
    const part = await media(other, vmId, 'bytes=100-199');
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${bytes.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(bytes.subarray(100, 200));

    // A replay link minted at one node opens the recording at either (decisions.md 110): the
    // token is checked with the secret the nodes share, the media reached through the keeper.
    const link = new URL((await api('node-a')('/vm/recording/link', { id: vmId })).url);
    for (const via of ['node-a', 'node-b']) {
      const described = await (await fetch(`${engines.get(via)!.url}${link.pathname}/recording`)).json();
      expect(described, via).toMatchObject({ status: 'ok', recording: { state: 'ended', bytes: ended.recording.bytes } });
      const linked = await fetch(`${engines.get(via)!.url}${link.pathname}/media`, { headers: { range: 'bytes=100-199' } });
      expect(linked.status, via).toBe(206);
      expect(Buffer.from(await linked.arrayBuffer()), via).toEqual(bytes.subarray(100, 200));
    }

    // The account's meter counts it, whichever node is asked: its media and the MP4 made of it,
    // in megabytes to one decimal (a few seconds of a still page may be under 0.05 MB).
    const keptMb = (ended.recording.bytes + bytes.length) / (1024 * 1024);
    for (const via of ['node-a', 'node-b']) expect(Math.abs((await api(via)('/user/quota')).recording_mb_kept - keptMb), via).toBeLessThanOrEqual(0.1);
  }, 180_000);

  it('is removed through the node that did not run it, and is gone for both', async () => {
    expect(await api(other)('/vm/recording/remove', { id: vmId })).toEqual({ status: 'ok' });
    for (const via of ['node-a', 'node-b']) {
      expect((await api(via)(`/vm/recording?id=${vmId}`)).message, via).toMatch(/removed/);
      expect((await media(via, vmId)).status, via).toBe(404);
      expect((await api(via)('/user/quota')).recording_mb_kept, via).toBe(0);
    }
  }, 60_000);

  it('stops at the plan\'s recording_mb_limit on the node that records, and the other node denies the next one, counting what that node keeps', async () => {
    const capped = (await engines.get('node-a')!.accounts.create({ contact: 'cluster-capped@example.com', plans: ['capped'] })).apiKey.key;
    const call = (id: string) => v8Caller(() => engines.get(id)!.url, () => capped);
    // node-b still takes no sessions: node-a records, node-b answers.
    const created = await call('node-b')('/vm/create', { browser: 'chromium', url: `${origin}/moving`, record: true });
    expect(created.status, JSON.stringify(created)).toBe('ok');
    expect((await engines.get('node-a')!.store.session(created.vmId))!.node_id).toBe('node-a');
    const stopped = await waitFor(() => call('node-b')(`/vm/recording?id=${created.vmId}`), (answer) => answer.recording?.timeline.some((entry: { type: string }) => entry.type === 'stopped') ?? false, 180_000);
    expect(stopped.recording.timeline.find((entry: { type: string }) => entry.type === 'stopped')).toMatchObject({ reason: 'recording_mb_limit' });
    expect((await call('node-b')(`/vm/data?id=${created.vmId}`)).data?.[0]?.status).toBe('running');
    // The share state drops `recording` on the node that does not run the session too.
    const linkId = new URL(created.shareUrl as string).search.slice(1);
    expect(((await (await fetch(`${engines.get('node-b')!.url}/share/${linkId}`)).json()) as Record<string, unknown>).recording).toBeUndefined();
    // node-b keeps nothing of the account: what node-a keeps denies the next recording there.
    const refused = await call('node-b')('/vm/create', { browser: 'chromium', record: true });
    expect(refused.status).toBe('denied');
    expect(refused.message).toMatch(/^record: .*recording_mb_limit/);
    await call('node-b')('/vm/remove', { id: created.vmId });
  }, 300_000);

  it('says so in the envelope when the node that keeps it is gone', async () => {
    const created = await api('node-a')('/vm/create', { browser: 'chromium', url: `${origin}/second`, record: true });
    expect(created.status).toBe('ok');
    await waitFor(() => api('node-b')(`/vm/recording?id=${created.vmId}`), (answer) => answer.recording?.state === 'recording', 60_000);
    await nodes.get('node-a')!.close();
    nodes.delete('node-a');
    // node-b marks node-a lost once its heartbeats stop; the recording is then out of reach.
    const answer = await waitFor(() => api('node-b')(`/vm/recording?id=${created.vmId}`), (reply) => reply.status === 'error', 30_000);
    expect(answer.message).toMatch(/node that keeps this recording is not reachable/);
    const stream = await media('node-b', created.vmId);
    expect(stream.status).toBe(503);
    expect(stream.headers.get('retry-after')).toBe('10');
    expect(await stream.json()).toMatchObject({ status: 'error' });
  }, 120_000);
});
