// What recordings may take (issue 47, finding 4; decisions.md 131-132), with real parts: a plan's
// `recording_mb_limit` stops a recording of a moving Chromium page once the account's recordings
// keep that much, while the session runs on (the share state no longer says `recording`, the
// timeline names the field), and the next `record: true` create is denied naming it; a plan's
// `recording_minutes_limit` stops one at its length (the engine's clock moved on); and the node's
// free-space floor, on a small file system mounted for the recordings, stops a running recording
// when the disk fills and denies new ones, as does a floor set above the disk's free space.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/engine/config.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';

/** A page whose picture changes all over, every frame: its recording grows by a megabyte in seconds. */
const MOVING = `<!doctype html><title>Moving</title><body style="margin:0"><canvas id="c" width="1280" height="720"></canvas><script>
var c = document.getElementById('c').getContext('2d'), n = 0;
setInterval(function () {
  n++;
  for (var i = 0; i < 60; i++) { c.fillStyle = 'hsl(' + ((n * 37 + i * 53) % 360) + ',80%,' + (30 + (i * 7 + n) % 40) + '%)'; c.fillRect((i * 97 + n * 13) % 1200, (i * 61 + n * 7) % 680, 80, 40); }
}, 33);
</script></body>`;

const pro = DEFAULT_PLANS.find((plan) => plan.id === 'pro')!;
const PLANS = [
  ...DEFAULT_PLANS,
  { ...pro, id: 'capped', name: 'Recorded, 1 MB', recording: true, recording_mb_limit: 1 },
  { ...pro, id: 'short', name: 'Recorded, 1 minute', recording: true, recording_minutes_limit: 1 },
  { ...pro, id: 'recorded', name: 'Recorded', recording: true },
];
type Entry = { type: string; reason?: string };
type Call = ReturnType<typeof v8Caller>;

const site = (request: { url?: string }, response: import('node:http').ServerResponse) => {
  if (request.url !== '/moving') return void response.writeHead(404).end();
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(MOVING);
};

/** A new account of `plan` on the fixture's engine, and its caller. */
async function accountOn(fixture: EngineFixture, plan: string): Promise<Call> {
  const created = await fixture.engine.accounts.create({ contact: `${plan}-${Math.random().toString(36).slice(2)}@example.com`, plans: [plan] });
  return v8Caller(() => fixture.engine.url, () => created.apiKey.key);
}

/** Waits for the recording's `stopped` entry; then the session still runs and the share state no longer says `recording`. */
async function expectStopped(fixture: EngineFixture, call: Call, created: Record<string, any>, reason: string): Promise<Record<string, any>> {
  const id = created.vmId as string;
  const stopped = await waitFor(() => call(`/vm/recording?id=${id}`), (answer) => answer.recording?.timeline.some((entry: Entry) => entry.type === 'stopped') ?? false, 180_000);
  expect(stopped.recording.timeline.filter((entry: Entry) => entry.type === 'stopped')).toEqual([expect.objectContaining({ type: 'stopped', reason })]);
  // The recording is whole (its file closed) while the session runs on.
  const whole = await waitFor(() => call(`/vm/recording?id=${id}`), (answer) => answer.recording?.state === 'ended', 30_000);
  expect(whole.recording.state).toBe('ended');
  expect((await call(`/vm/data?id=${id}`)).data?.[0]?.status).toBe('running');
  const linkId = new URL(created.shareUrl as string).search.slice(1);
  const state = (await (await fetch(`${fixture.engine.url}/share/${linkId}`)).json()) as Record<string, unknown>;
  expect(state.state).toBeDefined();
  expect(state.recording).toBeUndefined();
  return whole;
}

describe('a plan\'s recording caps', () => {
  let fixture: EngineFixture;
  let clockAhead = 0;

  beforeAll(async () => {
    fixture = await startEngine({ name: 'recording-caps', now: () => Date.now() + clockAhead, plans: ['recorded'], config: { plans: PLANS }, site });
  }, 120_000);

  afterAll(async () => {
    await fixture?.close();
  });

  it('stops a recording once the account keeps recording_mb_limit, the session running on, and denies the next record: true naming the field', async () => {
    const call = await accountOn(fixture, 'capped');
    const created = await call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/moving`, record: true });
    expect(created.status).toBe('ok');
    const id = created.vmId as string;
    const linkId = new URL(created.shareUrl as string).search.slice(1);
    expect(await (await fetch(`${fixture.engine.url}/share/${linkId}`)).json()).toMatchObject({ recording: true });

    const whole = await expectStopped(fixture, call, created, 'recording_mb_limit');
    expect(whole.recording.bytes).toBeGreaterThanOrEqual(1024 * 1024 - 64 * 1024);
    expect(await call('/user/quota')).toMatchObject({ recording_mb_limit: 1, recording_mb_kept: expect.any(Number) });
    expect((await call('/user/quota')).recording_mb_kept).toBeGreaterThanOrEqual(1);

    const refused = await call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/moving`, record: true });
    expect(refused.status).toBe('denied');
    expect(refused.message).toMatch(/^record: .*recording_mb_limit/);

    // Removing its recordings makes room again.
    expect((await call('/vm/remove', { id })).status).toBe('ok');
    await waitFor(() => call(`/vm/data?id=${id}`), (answer) => answer.data?.[0]?.status === 'deleted', 60_000);
    // Nothing was noted after the stop, not even the session's end: it was no longer recorded.
    expect((await call(`/vm/recording?id=${id}`)).recording.timeline.at(-1)).toMatchObject({ type: 'stopped', reason: 'recording_mb_limit' });
    expect((await call('/vm/recording/remove', { id })).status).toBe('ok');
    expect((await call('/user/quota')).recording_mb_kept).toBe(0);
    const again = await call('/vm/create', { browser: 'chromium', record: true });
    expect(again.status).toBe('ok');
    await call('/vm/remove', { id: again.vmId });
  }, 300_000);

  it('stops a recording at recording_minutes_limit, the session running on', async () => {
    const call = await accountOn(fixture, 'short');
    const created = await call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/moving`, record: true });
    expect(created.status).toBe('ok');
    const id = created.vmId as string;
    // Recording: its media has bytes. Then the engine's clock passes the plan's minute.
    await waitFor(() => call(`/vm/recording?id=${id}`), (answer) => (answer.recording?.bytes ?? 0) > 0, 90_000);
    clockAhead += 61_000;
    await expectStopped(fixture, call, created, 'recording_minutes_limit');
    await call('/vm/remove', { id });
  }, 300_000);
});

describe('the node\'s free-space floor', () => {
  /** A 96 MB file system for the recordings, under a 64 MB floor once 40 MB of it are taken. */
  const FS_MB = 96;
  const FLOOR_MB = 64;
  let fixture: EngineFixture;
  let mounted: string | null = null;

  beforeAll(async () => {
    fixture = await startEngine({ name: 'recording-floor', plans: ['recorded'], config: { plans: PLANS, recordings: { retentionDays: 30, timelineKb: 4096, freeSpaceFloorMb: FLOOR_MB } }, site });
    // The engine made its recordings' directory at start; a small file system takes its place.
    mounted = fixture.engine.recordings.dirOf('');
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${FS_MB}m,mode=0700`, 'tmpfs', mounted]);
  }, 120_000);

  afterAll(async () => {
    if (mounted) execFileSync('umount', ['-l', mounted]);
    await fixture?.close();
  });

  it('stops a running recording when the disk goes under the floor, the session running on, and denies new ones until there is room', async () => {
    const { call } = fixture;
    const created = await call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/moving`, record: true });
    expect(created.status).toBe('ok');
    const id = created.vmId as string;
    await waitFor(() => call(`/vm/recording?id=${id}`), (answer) => (answer.recording?.bytes ?? 0) > 0, 90_000);

    // Something else fills the disk.
    const filler = join(mounted!, 'filler');
    writeFileSync(filler, Buffer.alloc((FS_MB - FLOOR_MB + 8) * 1024 * 1024));
    await expectStopped(fixture, call, created, 'free_space_floor');
    const refused = await call('/vm/create', { browser: 'chromium', record: true });
    expect(refused.status).toBe('denied');
    expect(refused.message).toMatch(/^record: .*free-space floor/);

    // With room again, a session is recorded again.
    rmSync(filler);
    await call('/vm/remove', { id });
    const again = await call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/moving`, record: true });
    expect(again.status).toBe('ok');
    await call('/vm/remove', { id: again.vmId });
  }, 300_000);

  it('denies record: true when the floor is set above the disk\'s free space, and creates without record', async () => {
    const high = await startEngine({ name: 'recording-floor-high', runtime: 'fake', plans: ['recorded'], config: { plans: PLANS, recordings: { retentionDays: 30, timelineKb: 4096, freeSpaceFloorMb: 1_000_000_000 } } });
    try {
      const refused = await high.call('/vm/create', { browser: 'chromium', record: true });
      expect(refused).toMatchObject({ status: 'denied' });
      expect(refused.message).toMatch(/^record: .*free-space floor/);
      expect((await high.call('/vm/create', { browser: 'chromium' })).status).toBe('ok');
    } finally {
      await high.close();
    }
  }, 60_000);
});
