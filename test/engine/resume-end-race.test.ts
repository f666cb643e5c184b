// An end that lands while a hibernated session is being resumed (issue 53, finding 4), on the fake
// runtime: a vm/remove, or the maximum duration's sweep, stops the browser the resume started, so
// nothing runs that no session counts, and the account's running limit is free again.
import { execFileSync } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/engine/config.js';
import type { SessionSpec } from '../../src/engine/runtime/index.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { waitFor } from '../helpers/session.js';

let fixture: EngineFixture<FakeRuntime>;
/** A Chromium profile folder as GNU tar packs it: what each session hands back as its hibernated state. */
let state: Buffer;
let offset = 0;
/** What each start awaits once its saved state is in (fake-runtime.ts): holdNextResume() sets it. */
let hold: (spec: SessionSpec) => Promise<void> | undefined = () => undefined;

const pro = DEFAULT_PLANS.find((plan) => plan.id === 'pro')!;

beforeAll(async () => {
  const folder = await mkdtemp(join(tmpdir(), 'rbk-resume-end-race-'));
  await mkdir(join(folder, 'Default', 'IndexedDB'), { recursive: true });
  await writeFile(join(folder, 'Default', 'IndexedDB', 'data.bin'), 'kept across the hibernation');
  state = execFileSync('tar', ['-c', '-f', '-', '-C', folder, '--format=gnu', 'Default']);
  await rm(folder, { recursive: true, force: true });
  fixture = await startEngine({
    name: 'resume-end-race',
    runtime: 'fake',
    now: () => Date.now() + offset,
    fake: { profile: async () => state, freezes: true, hold: (spec) => hold(spec) },
    // One running session at a time: a session that is still counted, or a browser left behind, would show at the next create.
    plans: ['one'],
    config: {
      plans: [...DEFAULT_PLANS, { ...pro, id: 'one', name: 'One', running_session_limit: 1 }],
      standby: { afterSeconds: 1, hibernateAfterMinutes: 0.01 },
      profiles: { maxProfileMb: 8 },
      warm: { memoryMb: 0, displays: 0 },
    },
  });
}, 60_000);

afterEach(async () => {
  // A browser a failed test left behind would fail the next one too: each stands on its own.
  hold = () => undefined;
  for (const session of fixture.engine.runtime.list()) await fixture.engine.runtime.stopSession(session.id);
});

afterAll(async () => {
  await fixture?.close();
});

const statusOf = async (id: string) => (await fixture.call(`/vm/data?id=${id}`)).data?.[0];

/** Creates a session and waits until standby has hibernated it (no viewer: it is quiet from the start). */
async function hibernatedSession(): Promise<string> {
  const created = await fixture.call('/vm/create', { browser: 'chromium' });
  expect(created.status, JSON.stringify(created)).toBe('ok');
  expect(await waitFor(async () => (await statusOf(created.vmId))?.status, (s) => s === 'running', 20_000)).toBe('running');
  const asleep = await waitFor(() => statusOf(created.vmId), (row) => row?.hibernated === true || row?.status !== 'running', 30_000);
  expect(asleep).toMatchObject({ status: 'running', hibernated: true });
  expect(fixture.engine.runtime.list()).toHaveLength(0);
  return created.vmId;
}

/** Holds the next resume's start where its browser is coming up; `reached` once it is there. */
function holdNextResume(): { reached: Promise<void>; release: () => void } {
  let reached!: () => void;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const arrived = new Promise<void>((resolve) => (reached = resolve));
  // A resume is the start on a saved state with its files (runs.ts); a new session's start is not held.
  hold = (spec) => {
    if (!spec.profile?.files) return undefined;
    hold = () => undefined;
    reached();
    return gate;
  };
  return { reached: arrived, release };
}

/** The account can start a session again (the ended one no longer fills its running limit), which is then removed. */
async function startsAnother(): Promise<void> {
  const next = await fixture.call('/vm/create', { browser: 'chromium' });
  expect(next.status, JSON.stringify(next)).toBe('ok');
  expect(await waitFor(async () => (await statusOf(next.vmId))?.status, (s) => s === 'running', 20_000)).toBe('running');
  expect(fixture.engine.runtime.list()).toHaveLength(1);
  expect((await fixture.call('/vm/remove', { id: next.vmId })).status).toBe('ok');
  expect(await waitFor(async () => (await statusOf(next.vmId))?.status, (s) => s === 'deleted', 20_000)).toBe('deleted');
}

describe('an end during a resume', () => {
  it('a resume that no end meets runs the session here, and its end stops that browser', async () => {
    const id = await hibernatedSession();
    await fixture.engine.sessions.wake(id);
    const [browser, ...more] = fixture.engine.runtime.list();
    expect(more).toHaveLength(0);
    expect(await fixture.engine.store.session(id)).toMatchObject({ status: 'running', hibernated: false, runtime_id: browser!.id, node_id: fixture.engine.nodeId });
    expect((await fixture.call('/vm/remove', { id })).status).toBe('ok');
    expect(await waitFor(async () => (await statusOf(id))?.status, (s) => s === 'deleted', 20_000)).toBe('deleted');
    expect(fixture.engine.runtime.list()).toHaveLength(0);
  });

  it('vm/remove during a resume deletes the session and stops the browser the resume started', async () => {
    const id = await hibernatedSession();
    const resume = holdNextResume();
    // The door an attachment takes (a viewer, a files or tabs call): it resumes the session here.
    const woken = fixture.engine.sessions.wake(id).then(() => 'woken', (error: Error) => error.message);
    await resume.reached;
    expect((await fixture.call('/vm/remove', { id })).status).toBe('ok');
    resume.release();
    await woken;
    expect(await waitFor(async () => (await statusOf(id))?.status, (s) => s === 'deleted', 20_000)).toBe('deleted');
    // A browser that came up after the end would still be here: given time to, it is not.
    expect(await waitFor(() => fixture.engine.runtime.list().length, (n) => n === 0, 3_000)).toBe(0);
    expect((await fixture.engine.store.session(id))?.runtime_id ?? null).toBeNull();
    await startsAnother();
  });

  it('the maximum duration reached during a resume suspends the session and stops the browser the resume started', async () => {
    const id = await hibernatedSession();
    const resume = holdNextResume();
    const woken = fixture.engine.sessions.wake(id).then(() => 'woken', (error: Error) => error.message);
    await resume.reached;
    // Past the plan's maximum duration: the sweep (every second) ends it while its browser comes up.
    offset += (pro.max_session_minutes + 1) * 60_000;
    expect(await waitFor(async () => (await statusOf(id))?.status, (s) => s !== 'running', 20_000)).toBe('suspended');
    resume.release();
    await woken;
    expect(await waitFor(() => fixture.engine.runtime.list().length, (n) => n === 0, 3_000)).toBe(0);
    expect(await fixture.engine.store.session(id)).toMatchObject({ status: 'suspended', end_reason: 'maximum session duration reached' });
    await startsAnother();
  });
});
