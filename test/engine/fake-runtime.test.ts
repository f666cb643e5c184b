// The fake runtime (test/helpers/fake-runtime.ts) keeps the seam's contract (sessions/node-runtime.ts)
// as SessionRuntime does: the same refusals, checked against the real runtime too (they start no
// browser); a start that takes time, can be cancelled, and is stopped; the events a test raises.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionRuntime, type RuntimeEvent } from '../../src/engine/runtime/index.js';
import type { EngineRuntime } from '../../src/engine/sessions/node-runtime.js';
import { FakeRuntime } from '../helpers/fake-runtime.js';

let root: string;
let real: SessionRuntime;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rbk-fake-runtime-'));
  ({ runtime: real } = await SessionRuntime.open({ root, egress: { allow: [] } }));
});

afterAll(async () => {
  await real?.close();
  await rm(root, { recursive: true, force: true });
});

describe.each([
  ['the real runtime', () => real],
  ['the fake runtime', () => new FakeRuntime()],
] as Array<[string, () => EngineRuntime]>)('%s refuses what it cannot start', (_name, runtime) => {
  it('an unknown browser, an address that is not http(s), a language the browser cannot show', async () => {
    const spec = { browser: 'chromium', language: 'en', layout: 'us' };
    await expect(runtime().startSession({ ...spec, browser: 'netscape' })).rejects.toThrow('unknown browser "netscape"');
    await expect(runtime().startSession({ ...spec, url: 'file:///etc/passwd' })).rejects.toThrow('the first page must be an http or https address');
    await expect(runtime().startSession({ ...spec, language: 'tlh' })).rejects.toThrow('Chromium cannot show its interface in "tlh" on this host');
    expect(runtime().image('chromium')).toMatchObject({ id: 'chromium', family: 'chromium', enabled: true });
    expect(runtime().image('netscape')).toBeUndefined();
  });
});

describe('the fake runtime', () => {
  const spec = { browser: 'chromium', language: 'de', layout: 'de', timeZone: 'Europe/Berlin', url: 'http://127.0.0.1:9/' };

  it('starts after its start time, tells the ends first, reports started, and stops', async () => {
    const fake = new FakeRuntime({ startMs: 100 });
    const events: RuntimeEvent[] = [];
    fake.on('event', (event) => events.push(event));
    let endsTold = false;
    const began = Date.now();
    const session = await fake.startSession({ ...spec, onEnds: () => (endsTold = true) });
    expect(Date.now() - began).toBeGreaterThanOrEqual(90);
    expect(endsTold).toBe(true);
    expect(fake.get(session.id)).toBe(session);
    expect(session.spec).toMatchObject({ timeZone: 'Europe/Berlin', language: 'de' });
    expect(fake.starts.map((s) => s.url)).toEqual([spec.url]);
    expect(events).toEqual([expect.objectContaining({ sessionId: session.id, kind: 'started', ends: false })]);
    const exited = session.ends.display.server.exited;
    await fake.stopSession(session.id);
    expect(fake.get(session.id)).toBeUndefined();
    expect(await exited).toEqual({ code: 0, signal: null });
    await fake.close();
  });

  it('a start cancelled while under way rejects and leaves nothing running', async () => {
    const fake = new FakeRuntime({ startMs: 200 });
    const abort = new AbortController();
    const starting = fake.startSession({ ...spec, signal: abort.signal });
    abort.abort();
    await expect(starting).rejects.toThrow('the start was cancelled');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fake.list()).toEqual([]);
  });

  it('counts the bytes carried, raises the events a test makes happen, and refuses starts on demand', async () => {
    const fake = new FakeRuntime({ startMs: 1 });
    const events: RuntimeEvent[] = [];
    fake.on('event', (event) => events.push(event));
    const session = await fake.startSession(spec);
    session.carry(10, 20);
    session.carry(1, 2);
    expect(session.egress.bytes()).toEqual({ sent: 11, received: 22 });
    fake.raise(session.id, 'browser-exited', 'Chromium exited (SIGKILL)');
    expect(events.at(-1)).toEqual({ sessionId: session.id, kind: 'browser-exited', ends: true, message: 'Chromium exited (SIGKILL)' });
    fake.refuse('chromium', 'no Chromium today');
    await expect(fake.startSession(spec)).rejects.toThrow('no Chromium today');
    fake.refuse('chromium', null);
    await expect(fake.startSession(spec)).resolves.toMatchObject({ start: 'cold' });
    // A display nobody can see: a viewer's connection to it fails at once.
    const connection = session.ends.display.connect();
    expect(await new Promise((resolve) => connection.once('error', (error) => resolve(error.message)))).toBe('the fake runtime has no display');
    await fake.close();
    expect(fake.list()).toEqual([]);
    await expect(fake.startSession(spec)).rejects.toThrow('the runtime is closed');
  });
});
