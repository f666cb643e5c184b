// A node runtime that starts no browser (the seam is src/engine/sessions/node-runtime.ts): sessions
// start after a short wait, stop, count the bytes a test says went through their route, and end
// with the events a test raises (a crash, a lost display); asked to, it freezes (so sessions
// hibernate) and holds a start where a test lands an end. The service's decisions are tested on it
// without a browser; what a real browser does is tested on SessionRuntime (test/engine/runtime.test.ts).
import { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Duplex, Writable } from 'node:stream';
import { IMAGE_DEFINITIONS, interfaceLocale, type ArchiveConsumer, type ArchiveSource, type BrowserImage, type Display, type ProfileCapture, type RuntimeEvent, type SessionEnds, type SessionSpec } from '../../src/engine/runtime/index.js';
import { isNavigableUrl } from '../../src/engine/runtime/browser/page-policy.js';
import { abortable, type SupervisedProcess } from '../../src/engine/runtime/sandbox/processes.js';
import { runtimeEvent, startedMessage, type RuntimeEventKind } from '../../src/engine/runtime/session/runtime-events.js';
import type { EngineRuntime, RunningSession } from '../../src/engine/sessions/node-runtime.js';

/** A session the fake runs: what it was asked to start with, and its route's byte meter. */
export interface FakeSession extends RunningSession {
  readonly spec: SessionSpec;
  /** Counts bytes as if the browser had sent and received them through its egress route. */
  carry(sent: number, received: number): void;
  /** The archive of its saved profile it started on, as a session's tar would have unpacked it (none: no profile). */
  readonly restored?: Buffer;
}

export interface FakeRuntimeOptions {
  /** How long a start takes (ms); default 30. */
  startMs?: number;
  /** The ids of the browsers this node has; default Chromium and Firefox ESR (Debian's, as on the test machine). */
  browsers?: string[];
  /** What a session's browser hands back as its saved profile at a normal end (a tar archive); absent: profiles are never saved here. */
  profile?: (id: string, capture: ProfileCapture) => Promise<Buffer>;
  /** Its sessions can be put in standby (a freeze that does nothing), so that with `profile` they are hibernated too. */
  freezes?: boolean;
  /** Awaited by each start once its saved profile is in, before its browser is ready: where a test lands an end during a start. */
  hold?: (spec: SessionSpec) => Promise<void> | undefined;
}

/** What an archive source writes, whole. */
async function collected(source: ArchiveSource): Promise<Buffer> {
  const pieces: Buffer[] = [];
  await source(new Writable({ write: (chunk: Buffer, _encoding, done) => done(void pieces.push(chunk)) }));
  return Buffer.concat(pieces);
}

async function* inPieces(archive: Buffer): AsyncGenerator<Buffer> {
  for (let at = 0; at < archive.length; at += 65_536) yield archive.subarray(at, at + 65_536);
}

/** A process that never ran: the fake display's server and window manager, exited when the session stops. */
function noProcess(name: string, stopped: Promise<void>): SupervisedProcess {
  return { name, child: new ChildProcess(), pid: 0, exited: stopped.then(() => ({ code: 0, signal: null })), stderrTail: () => '' };
}

/** A display nobody can see: an RFB connection to it fails at once, as to a display that is gone. */
function absentDisplay(layout: string, stopped: Promise<void>): Display {
  return {
    number: 0,
    rfbSocketPath: '',
    env: {},
    layout,
    connect: () => new Duplex({ read() {}, write(_chunk, _encoding, done) { done(); } }).destroy(new Error('the fake runtime has no display')),
    spawnClient: () => {
      throw new Error('the fake runtime runs no X client');
    },
    server: noProcess('Xvnc', stopped),
    windowManager: noProcess('window manager', stopped),
    async setLayout(next) {
      this.layout = next;
    },
    async stop() {},
  };
}

export class FakeRuntime extends EventEmitter<{ event: [RuntimeEvent] }> implements EngineRuntime {
  readonly images: BrowserImage[];
  /** Every spec the service started, in order (what it chose: time zone, upstream, language...). */
  readonly starts: SessionSpec[] = [];
  private readonly sessions = new Map<string, { session: FakeSession; stop: () => void }>();
  private readonly refusals = new Map<string, string>();
  private readonly startMs: number;
  private closed = false;
  readonly captureProfile?: (id: string, capture: ProfileCapture, consume: ArchiveConsumer) => Promise<void>;
  readonly freeze?: (id: string, frozen: boolean) => Promise<boolean>;
  private readonly hold: FakeRuntimeOptions['hold'];

  constructor(options: FakeRuntimeOptions = {}) {
    super();
    this.startMs = options.startMs ?? 30;
    const profile = options.profile;
    // The archive is handed on in pieces of 64 KiB, as a pipe from the session's tar would.
    if (profile) this.captureProfile = async (id, capture, consume) => consume(inPieces(await profile(id, capture)));
    if (options.freezes) this.freeze = async () => true;
    this.hold = options.hold;
    const present = new Set(options.browsers ?? ['chromium', 'firefox-esr']);
    this.images = IMAGE_DEFINITIONS.map(({ candidates, packageHint, ...definition }) => ({
      ...definition,
      executable: present.has(definition.id) ? candidates[0]! : null,
      version: present.has(definition.id) ? '1.0' : null,
      enabled: present.has(definition.id),
      reason: present.has(definition.id) ? null : 'not installed (fake runtime)',
      locales: present.has(definition.id) ? ['en', 'en-US', 'de', 'fr', 'es', 'pt-BR', 'ja'] : [],
    }));
  }

  image(id: string): BrowserImage | undefined {
    return this.images.find((image) => image.id === id);
  }

  get(id: string): FakeSession | undefined {
    return this.sessions.get(id)?.session;
  }

  list(): FakeSession[] {
    return [...this.sessions.values()].map((entry) => entry.session);
  }

  /** Starts of `browser` fail with `reason` from now on (null: they start again), as when its executable went missing. */
  refuse(browser: string, reason: string | null): void {
    if (reason === null) this.refusals.delete(browser);
    else this.refusals.set(browser, reason);
  }

  /** Raises an event of a running session, as its parts would (`browser-exited` ends it; a notice does not). */
  raise(id: string, kind: RuntimeEventKind, message: string): void {
    if (!this.sessions.has(id)) throw new Error(`no session ${id} runs on the fake runtime`);
    this.emit('event', runtimeEvent(id, kind, message));
  }

  async startSession(spec: SessionSpec): Promise<FakeSession> {
    if (this.closed) throw new Error('the runtime is closed');
    const image = this.image(spec.browser);
    if (!image) throw new Error(`unknown browser "${spec.browser}"`);
    if (!image.enabled) throw new Error(`${image.name} is not available on this host: ${image.reason}`);
    if (spec.url !== undefined && !isNavigableUrl(spec.url)) throw new Error('the first page must be an http or https address');
    if (!interfaceLocale(spec.language, image.locales)) throw new Error(`${image.name} cannot show its interface in "${spec.language}" on this host`);
    this.starts.push(spec);
    const id = randomBytes(8).toString('hex');
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const bytes = { sent: 0, received: 0 };
    const ends: SessionEnds = { display: absentDisplay(spec.layout, stopped), video: null, sound: null, devtools: null, files: null, tabs: null };
    const began = performance.now();
    const ready = (async () => {
      // The display is up before the browser: viewers may connect early (runtime.ts does the same).
      spec.onEnds?.(ends, id);
      await new Promise((resolve) => setTimeout(resolve, this.startMs));
      const refused = this.refusals.get(spec.browser);
      if (refused) throw new Error(refused);
      // The saved profile streams in as the real runtime's tar takes it; a refusal fails the start.
      const restored = spec.profile ? await collected(await spec.profile.archive) : undefined;
      await this.hold?.(spec);
      const session: FakeSession = {
        id,
        spec,
        ...(restored ? { restored } : {}),
        ends,
        start: 'cold',
        readyMs: performance.now() - began,
        startParts: { slot: 0, browser: performance.now() - began },
        egress: { bytes: () => ({ ...bytes }) },
        carry(sent, received) {
          bytes.sent += sent;
          bytes.received += received;
        },
      };
      return session;
    })();
    // A start cancelled after the session came up ends it, as the real runtime discards a late slot.
    const session = await abortable(ready, spec.signal, async () => stop());
    if (this.closed) {
      stop();
      throw new Error('the runtime is closed');
    }
    this.sessions.set(id, { session, stop });
    this.emit('event', runtimeEvent(id, 'started', startedMessage('cold', session.readyMs!)));
    return session;
  }

  async stopSession(id: string): Promise<void> {
    const entry = this.sessions.get(id);
    if (!entry) return;
    this.sessions.delete(id);
    entry.stop();
  }

  warmCount(): { displays: number; browsers: number } {
    return { displays: 0, browsers: 0 };
  }

  warmStats(): { browsers: Array<{ browser: string; language: string }>; memoryMb: number } {
    return { browsers: [], memoryMb: 0 };
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.sessions.keys()].map((id) => this.stopSession(id)));
  }
}
