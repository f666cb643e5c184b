// The sound encoder's rest (decisions.md 119), its decisions alone: a sandbox whose `pactl`
// commands the test answers, and whose `pactl subscribe` is a stream the test writes event lines
// into (no process is started). The sink is suspended once nothing plays for a second, only recordings listen and the
// subscriber is known to follow the server (it has told something); a new stream or a person
// wakes it at once; a check overtaken by an event does not suspend; commands run one at a time,
// in order; stopping wakes the sink.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SILENT_MS, SoundPause } from '../../src/engine/runtime/capture/sound-pause.js';
import type { SessionSandbox } from '../../src/engine/runtime/sandbox/confinement.js';
import { PassThrough } from 'node:stream';
import type { SupervisedProcess } from '../../src/engine/runtime/sandbox/processes.js';

interface Pending {
  args: string[];
  answer(output: string): void;
  fail(): void;
}

/** A subscriber that is no process: its output is what the test writes, it ends when the test says. */
interface FakeSubscriber {
  process: SupervisedProcess;
  tell(line: string): void;
  end(): void;
}

function fakeSubscriber(): FakeSubscriber {
  const stdout = new PassThrough();
  let end = () => undefined as void;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => (end = () => resolve({ code: 0, signal: null })));
  // Stated as exited already, so the pause's SIGKILL is never sent to any process group.
  const child = Object.assign(new PassThrough(), { stdout, exitCode: 0, signalCode: null });
  const process = { name: 'sound-events', child, pid: -1, exited, stderrTail: () => '' } as unknown as SupervisedProcess;
  return { process, tell: (line) => stdout.write(`${line}\n`), end };
}

/** A sandbox whose `run` waits for the test's answer, and whose spawned subscriber is the test's. */
function fakeSandbox() {
  const runs: Pending[] = [];
  const subscribers: FakeSubscriber[] = [];
  const sandbox = {
    env: {},
    ended: () => false,
    spawn: () => {
      const subscriber = fakeSubscriber();
      subscribers.push(subscriber);
      return subscriber.process;
    },
    run: (_command: string, args: string[]) =>
      new Promise<string>((resolve, reject) => runs.push({ args, answer: resolve, fail: () => reject(new Error('failed')) })),
  } as unknown as SessionSandbox;
  return { sandbox, runs, subscribers };
}

/** Lets pending I/O and promises settle (timers are the test's). */
async function settle(times = 20): Promise<void> {
  for (let i = 0; i < times; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** The `n`th command asked, once the promises before it settled. */
async function nth(runs: Pending[], n: number): Promise<Pending> {
  await settle();
  expect(runs.length, `command ${n} asked`).toBeGreaterThanOrEqual(n);
  return runs[n - 1]!;
}

const NOTHING = '';
const PLAYING = 'Sink Input #4\n\tDriver: protocol-native.c\n\tCorked: no\n';
const CORKED = 'Sink Input #4\n\tDriver: protocol-native.c\n\tCorked: yes\n';

let fake: ReturnType<typeof fakeSandbox>;
let person = false;
let pause: SoundPause;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  fake = fakeSandbox();
  person = false;
  pause = new SoundPause(fake.sandbox, 'out', {}, () => !person);
});

afterEach(() => {
  pause.stop();
  for (const subscriber of fake.subscribers) subscriber.end();
  vi.useRealTimers();
});

/** The latest subscriber tells a client's coming (as every pactl run makes it do): it is known to follow the server. */
async function speak(): Promise<void> {
  fake.subscribers.at(-1)!.tell("Event 'new' on client #7");
  await settle();
}

/** Starts the rest and lets it suspend the sink: nothing plays for SILENT_MS. */
async function rest(): Promise<void> {
  pause.start();
  await speak();
  await vi.advanceTimersByTimeAsync(SILENT_MS);
  const list = await nth(fake.runs, 1);
  expect(list.args).toEqual(['list', 'sink-inputs']);
  list.answer(NOTHING);
  const suspend = await nth(fake.runs, 2);
  expect(suspend.args).toEqual(['suspend-sink', 'out', '1']);
  expect(pause.isPaused).toBe(true);
  suspend.answer('');
  await settle();
}

describe('the sound encoder\'s rest', () => {
  it('suspends the sink once nothing plays for a second, and a new stream wakes it at once', async () => {
    const before = performance.now();
    await rest();
    expect(pause.restedSince(before)).toBe(true);
    fake.subscribers[0]!.tell("Event 'change' on sink #0\nEvent 'new' on sink-input #4");
    const resume = await nth(fake.runs, 3);
    expect(resume.args).toEqual(['suspend-sink', 'out', '0']);
    resume.answer('');
    await settle();
    expect(pause.isPaused).toBe(false);
    // A packet that came before the resume finished still sees the rest; one after does not.
    expect(pause.restedSince(before)).toBe(true);
    const after = performance.now() + 1;
    expect(pause.restedSince(after)).toBe(false);
  });

  it('keeps the sink running while a stream plays, asking nothing more until the stream changes, and suspends it once the stream is corked', async () => {
    pause.start();
    await speak();
    await vi.advanceTimersByTimeAsync(SILENT_MS);
    (await nth(fake.runs, 1)).answer(PLAYING);
    await settle();
    expect(pause.isPaused).toBe(false);
    // While it plays, no pactl is run (each run is a process in the session).
    await vi.advanceTimersByTimeAsync(5 * SILENT_MS);
    expect(fake.runs).toHaveLength(1);
    // Corked: PulseAudio tells a change.
    fake.subscribers[0]!.tell("Event 'change' on sink-input #4");
    await vi.advanceTimersByTimeAsync(SILENT_MS);
    (await nth(fake.runs, 2)).answer(CORKED);
    expect((await nth(fake.runs, 3)).args).toEqual(['suspend-sink', 'out', '1']);
  });

  it('does not suspend on a check that a new stream overtook', async () => {
    pause.start();
    await vi.advanceTimersByTimeAsync(SILENT_MS);
    const list = await nth(fake.runs, 1);
    fake.subscribers[0]!.tell("Event 'new' on sink-input #4");
    // The event is read before the list's answer comes.
    await settle();
    list.answer(NOTHING);
    await settle();
    expect(fake.runs).toHaveLength(1);
    expect(pause.isPaused).toBe(false);
  });

  it('does not rest before its subscriber has told anything', async () => {
    pause.start();
    await vi.advanceTimersByTimeAsync(SILENT_MS);
    (await nth(fake.runs, 1)).answer(NOTHING);
    await settle();
    expect(fake.runs).toHaveLength(1);
    expect(pause.isPaused).toBe(false);
    // The list's own client made it speak: the next check suspends.
    await speak();
    await vi.advanceTimersByTimeAsync(SILENT_MS);
    (await nth(fake.runs, 2)).answer(NOTHING);
    expect((await nth(fake.runs, 3)).args).toEqual(['suspend-sink', 'out', '1']);
  });

  it('never rests while a person listens, and rests once the person left', async () => {
    person = true;
    pause.start();
    await vi.advanceTimersByTimeAsync(3 * SILENT_MS);
    expect(fake.runs).toHaveLength(0);
    person = false;
    pause.recheck();
    await vi.advanceTimersByTimeAsync(SILENT_MS);
    expect((await nth(fake.runs, 1)).args).toEqual(['list', 'sink-inputs']);
  });

  it('runs its commands one at a time: a wake during a suspend resumes after it', async () => {
    pause.start();
    await speak();
    await vi.advanceTimersByTimeAsync(SILENT_MS);
    (await nth(fake.runs, 1)).answer(NOTHING);
    const suspend = await nth(fake.runs, 2);
    pause.wake();
    await settle();
    expect(fake.runs).toHaveLength(2);
    suspend.answer('');
    const resume = await nth(fake.runs, 3);
    expect(resume.args).toEqual(['suspend-sink', 'out', '0']);
    resume.answer('');
    await settle();
    expect(pause.isPaused).toBe(false);
  });

  it('wakes the sink when it stops, and when its subscriber ends', async () => {
    await rest();
    pause.stop();
    const resume = await nth(fake.runs, 3);
    expect(resume.args).toEqual(['suspend-sink', 'out', '0']);
    resume.answer('');
    fake.subscribers[0]!.end();
    await settle();

    pause.start();
    await speak();
    await vi.advanceTimersByTimeAsync(5 * SILENT_MS);
    // Started again: a new subscriber, and a rest after a second of nothing playing.
    (await nth(fake.runs, 4)).answer(NOTHING);
    (await nth(fake.runs, 5)).answer('');
    await settle();
    expect(pause.isPaused).toBe(true);
    fake.subscribers.at(-1)!.end();
    const woken = await nth(fake.runs, 6);
    expect(woken.args).toEqual(['suspend-sink', 'out', '0']);
  });
});
