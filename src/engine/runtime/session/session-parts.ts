// A session as an ordered list of parts (sandbox, egress route, display, video, sound, browser), each with
// its stop. Parts are added in the order they start; stopping releases what the
// engine holds of each (its DevTools connection) last-first, then stops the sandbox, which ends
// every process of a confined session at once, then the rest together. What a part started is
// also what a later run must end after a crash: its processes are listed for the runtime record.
import type { BrowserImage } from '../browser/catalog.js';
import type { BrowserProcess } from '../browser/browser.js';
import type { SessionSandbox } from '../sandbox/confinement.js';
import type { BrowserControl } from '../browser/control.js';
import type { SessionTabs } from '../browser/tabs.js';
import type { Display } from '../display/display.js';
import type { EgressRoute } from '../egress/egress.js';
import type { SessionSound } from '../capture/sound.js';
import type { SessionVideo } from '../capture/video.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SessionRecorder, type RecorderParts } from '../capture/recorder.js';
import { RECORDING_MEDIA } from '../capture/recording-layout.js';

/** The browser as a part: its process, its DevTools control (Chromium family), and what it was started with. */
export interface BrowserPart {
  process: BrowserProcess;
  /** Set once DevTools is connected (Chromium family); null before, and for Firefox. */
  control: BrowserControl | null;
  /** Its tabs as the viewer's strip shows them (tabs.ts): set as the session starts; null for a Firefox in a browser window (decisions.md 103). */
  tabs: SessionTabs | null;
  image: BrowserImage;
  language: string;
  timeZone: string;
}

/** Each part's name and what it gives the parts after it. */
export interface PartValues {
  sandbox: SessionSandbox;
  egress: EgressRoute;
  display: Display;
  /** Present where this node offers video: the display's encoder, run while someone watches (video.ts). */
  video: SessionVideo;
  /** Present only when the session has sound (sound.ts): not turned off, and its server started. */
  sound: SessionSound;
  /** Present while the session is recorded (recorder.ts): a member of its encoders' audiences. */
  recorder: SessionRecorder;
  browser: BrowserPart;
}

export type PartName = keyof PartValues;

export interface SessionPart<N extends PartName = PartName> {
  readonly name: N;
  readonly value: PartValues[N];
  /** The part's processes on the host, for the runtime record (reap.ts). */
  pids?(): number[];
  /** Lets go of what the engine holds open in the part, before anything stops. */
  release?(): Promise<void>;
  /** Stopping this part ends every process of the session (the sandbox): it stops before the others. */
  readonly endsEveryProcess?: boolean;
  stop(): Promise<void>;
}

export class SessionParts {
  private readonly list: SessionPart[] = [];

  /** Adds a started part (after those started before it); answers its value. A part is added once. */
  add<N extends PartName>(part: SessionPart<N>): PartValues[N] {
    if (this.list.some((p) => p.name === part.name)) throw new Error(`the session already has its ${part.name}`);
    this.list.push(part as unknown as SessionPart);
    return part.value;
  }

  get<N extends PartName>(name: N): PartValues[N] | undefined {
    return this.list.find((part) => part.name === name)?.value as PartValues[N] | undefined;
  }

  /** A part every started session has; throws, naming it, when it has not started. */
  require<N extends PartName>(name: N): PartValues[N] {
    const value = this.get(name);
    if (value === undefined) throw new Error(`the session has no ${name} (it did not start)`);
    return value;
  }

  /** The parts' names, in the order they started. */
  names(): PartName[] {
    return this.list.map((part) => part.name);
  }

  pids(): number[] {
    return this.list.flatMap((part) => part.pids?.() ?? []).filter(Boolean);
  }

  async stop(): Promise<void> {
    for (const part of [...this.list].reverse()) await part.release?.();
    for (const part of this.list.filter((p) => p.endsEveryProcess)) await part.stop();
    await Promise.all(this.list.filter((p) => !p.endsEveryProcess).map((part) => part.stop()));
  }
}

export function sandboxPart(sandbox: SessionSandbox): SessionPart<'sandbox'> {
  // Confined, stopping it ends every process of the session at once (its pid namespace goes).
  return { name: 'sandbox', value: sandbox, endsEveryProcess: true, stop: () => sandbox.stop() };
}

export function egressPart(egress: EgressRoute): SessionPart<'egress'> {
  return { name: 'egress', value: egress, stop: () => egress.close() };
}

export function displayPart(display: Display): SessionPart<'display'> {
  return { name: 'display', value: display, pids: () => [display.server.pid, display.windowManager.pid], stop: () => display.stop() };
}

export function videoPart(video: SessionVideo): SessionPart<'video'> {
  // Watchers are let go first (told the session ended) and the encoder stops; it is a display client, which goes with the sandbox.
  return { name: 'video', value: video, release: async () => video.close(), stop: async () => undefined };
}

/** Starts recording into `dir` (made if need be, the engine's own): its media (recording-layout.ts). */
export function recorderPart(dir: string, parts: RecorderParts): SessionPart<'recorder'> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const even = (n: number) => n + (n % 2);
  const recorder = new SessionRecorder(join(dir, RECORDING_MEDIA), { ...parts, width: even(parts.width), height: even(parts.height) });
  // Released after the browser (the last picture is of the session), before the encoders it listens to.
  return { name: 'recorder', value: recorder, release: () => recorder.close(), stop: async () => undefined };
}

export function soundPart(sound: SessionSound): SessionPart<'sound'> {
  // Listeners are let go first (told the session ended), then the server stops with the rest.
  return { name: 'sound', value: sound, pids: () => [sound.server.pid], release: async () => sound.close(), stop: () => sound.stop() };
}

export function browserPart(browser: BrowserPart): SessionPart<'browser'> {
  return {
    name: 'browser',
    value: browser,
    pids: () => [browser.process.process.pid],
    release: async () => {
      browser.tabs?.stop();
      await browser.control?.close();
    },
    stop: () => browser.process.stop(),
  };
}
