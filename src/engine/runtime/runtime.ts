// The session runtime: turns "start a session" into a confined set of processes (display, browser,
// egress route) in a sandbox of its own, started and stopped as a unit, in the session's interface
// language and time zone, with an optional warm pool of ready displays and browsers, and clean-up
// of whatever an earlier run left behind.
import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { launchBrowser, type BrowserProcess } from './browser.js';
import { discoverImages, type BrowserImage } from './catalog.js';
import { reapSessionCgroups } from './cgroups.js';
import {
  DEFAULT_CONFINEMENT,
  openConfinedSandbox,
  openHostSandbox,
  probeConfinement,
  type ConfinementSettings,
  type SessionSandbox,
} from './confinement.js';
import { reapUidClaims } from './session-uids.js';
import { writeSharedFiles } from './chromium-policies.js';
import { BrowserControl, isNavigableUrl } from './control.js';
import { removeDisplayFiles, startDisplay, type Display } from './display.js';
import type { EgressPolicy } from './address-policy.js';
import { startEgressRoute, type EgressRoute } from './egress.js';
import type { EgressConnectionLimits } from './egress-gate.js';
import type { OpenFiles } from './open-files.js';
import { forgetFirefoxBuilds } from './firefox-launcher.js';
import { interfaceLocale } from './locales.js';
import { isTimeZone } from './time-zones.js';
import { killMarkedProcesses, withTimeout } from './processes.js';
import { startSessionSound, type SessionSound, type SoundSettings } from './sound.js';

export interface SessionSpec {
  /** An image id from the catalog, e.g. `chromium`, `firefox-esr`. */
  browser: string;
  /** First page; http or https. Without it the browser shows a blank page. */
  url?: string;
  /** Browser interface language, e.g. `en`, `de`: one the image can show, exactly or nearly (locales.ts). */
  language: string;
  /** IANA time zone the browser keeps (its exit's); default the runtime's `timeZone`. */
  timeZone?: string;
  /** X keyboard layout, e.g. `us`, `de`. */
  layout: string;
  width?: number;
  height?: number;
  /** Send this session's traffic through an upstream proxy (exit locations, residential). */
  upstreamProxyUrl?: string;
  /** Aborting ends the start at once (the session was removed while starting). */
  signal?: AbortSignal;
  /** Called once the display is up, before the browser is: viewers may connect early. */
  onDisplay?: (display: Display) => void;
}

export interface WarmPoolOptions {
  /** Ready displays (Xvnc + window manager + egress route) kept at the default geometry. */
  displays?: number;
  /** Ready Chromium-family browsers at about:blank, per image and language, in the default time zone. */
  browsers?: Array<{ browser: string; language?: string; count?: number }>;
}

export interface RuntimeOptions {
  /** Directory that holds one sub-directory per session. */
  root: string;
  egress: EgressPolicy;
  /** Connections each session may hold open to its egress route, and how long one may stay silent. */
  egressConnections?: EgressConnectionLimits;
  /** The engine's open files and their reserve, shared with the viewers (open-files.ts). */
  openFiles?: OpenFiles;
  /** Installed browsers; discovered when omitted. */
  images?: BrowserImage[];
  warm?: WarmPoolOptions;
  /** A session that is not ready within this time fails with the reason. Default 20 s. */
  startTimeoutMs?: number;
  /** Default 1280x720. */
  geometry?: { width: number; height: number };
  /** IANA time zone of sessions that name none (no exit location); default `UTC`. */
  timeZone?: string;
  /**
   * How every session is confined (docs/security.md); defaults apply to what is left out. `false`
   * runs sessions as the engine's own user with nothing between a viewer and the host: only for an
   * operator's explicit `insecure.unconfined`.
   */
  confinement?: Partial<ConfinementSettings> | false;
  /** Each session's sound server and encoder settings (sound.ts); `false` runs no sound process at all. */
  sound?: Partial<SoundSettings> | false;
}

/** How a session came to be ready: from nothing, on a warm display, or in a warm browser. */
export type StartKind = 'cold' | 'warm-display' | 'warm-browser';

export interface RuntimeSession {
  readonly id: string;
  /** The engine's directory for the session on the host (runtime record, egress socket). */
  readonly dir: string;
  /** Where the session's processes run: its uid, namespaces and files. */
  readonly sandbox: SessionSandbox;
  readonly image: BrowserImage;
  readonly display: Display;
  readonly browser: BrowserProcess;
  /** Chromium family only. */
  readonly control: BrowserControl | null;
  readonly egress: EgressRoute;
  /** What the browser plays, for listeners; null when sound is off or its server could not start. */
  readonly sound: SessionSound | null;
  readonly start: StartKind;
  /** Milliseconds from the start request to ready: the browser's window on the display and its
   *  first navigation begun (the page itself may still be loading, or fail). */
  readonly readyMs: number;
}

export type RuntimeEvent =
  | { sessionId: string; kind: 'browser-exited'; message: string }
  | { sessionId: string; kind: 'display-exited'; message: string }
  | { sessionId: string; kind: 'page-crashed'; message: string }
  /** Chromium family: the engine's DevTools guard could not be kept (decisions.md 49); the session must end. */
  | { sessionId: string; kind: 'guard-lost'; message: string }
  /** Informational: the sound server is gone; the session goes on without sound. */
  | { sessionId: string; kind: 'sound-lost'; message: string }
  | { sessionId: string; kind: 'refused'; message: string };

export interface ReapReport {
  processes: number;
  directories: number;
}

interface Slot {
  id: string;
  dir: string;
  sandbox: SessionSandbox;
  display: Display;
  egress: EgressRoute;
  sound: SessionSound | null;
  browser?: { process: BrowserProcess; control: BrowserControl | null; image: BrowserImage; language: string; timeZone: string };
  /** Set by the first stop; later stops wait for it (a display number may be reused afterwards). */
  stopped?: Promise<void>;
}

interface RuntimeRecord {
  id: string;
  /** A confined display's files were in its own namespace, never in the host's /tmp. */
  confined: boolean;
  displayNumber: number;
  pids: number[];
}

const DEFAULT_GEOMETRY = { width: 1280, height: 720 };
/** How long after a warm slot is taken the pool starts its replacement. */
const REFILL_DELAY_MS = 1500;

export class SessionRuntime extends EventEmitter<{ event: [RuntimeEvent] }> {
  readonly root: string;
  readonly images: BrowserImage[];
  private readonly sessions = new Map<string, { session: RuntimeSession; slot: Slot; stopping: boolean }>();
  private readonly warmDisplays: Slot[] = [];
  private readonly warmBrowsers: Slot[] = [];
  private refill: Promise<void> = Promise.resolve();
  private readonly discarding = new Set<Promise<void>>();
  /** Every slot this runtime started and has not stopped yet, whoever holds it. */
  private readonly liveSlots = new Set<Slot>();
  /** Slot starts in progress: close() waits for them, then stops what they started. */
  private readonly slotStarts = new Set<Promise<unknown>>();
  private closed = false;
  private readonly geometry: { width: number; height: number };
  /** The time zone of sessions without an exit location. */
  readonly timeZone: string;
  /** Null: sessions run unconfined (an operator's explicit opt-in). */
  readonly confinement: ConfinementSettings | null;
  private readonly sharedDir: string;
  private chromiumPolicyDir: string | undefined;

  private constructor(private readonly options: RuntimeOptions, images: BrowserImage[]) {
    super();
    this.root = resolve(options.root);
    this.images = images;
    this.geometry = options.geometry ?? DEFAULT_GEOMETRY;
    this.timeZone = options.timeZone ?? 'UTC';
    this.confinement = options.confinement === false ? null : { ...DEFAULT_CONFINEMENT, ...options.confinement };
    this.sharedDir = join(this.root, SHARED_DIR);
  }

  /**
   * Cleans what an earlier run left behind, finds the browsers, and starts filling the warm pool.
   * Rejects, saying what is missing, when sessions are to be confined and this host cannot.
   */
  static async open(options: RuntimeOptions): Promise<{ runtime: SessionRuntime; reaped: ReapReport }> {
    if (options.confinement !== false) {
      const probe = probeConfinement();
      if (!probe.available) {
        throw new Error(
          `sessions cannot be confined on this host: ${probe.missing.join('; ')}. Fix that (\`remote-browser-kit doctor\` lists it), ` +
            'or set insecure.unconfined to run every session as the engine\'s own user, where anyone with a share link can reach this host.',
        );
      }
    }
    const root = resolve(options.root);
    await mkdir(root, { recursive: true, mode: 0o700 });
    const reaped = await reapRoot(root);
    const images = options.images ?? (await discoverImages());
    const runtime = new SessionRuntime(options, images);
    if (runtime.confinement) ({ chromiumPolicyDir: runtime.chromiumPolicyDir } = await writeSharedFiles(runtime.sharedDir));
    runtime.scheduleRefill();
    return { runtime, reaped };
  }

  image(id: string): BrowserImage | undefined {
    return this.images.find((image) => image.id === id);
  }

  get(id: string): RuntimeSession | undefined {
    return this.sessions.get(id)?.session;
  }

  list(): RuntimeSession[] {
    return [...this.sessions.values()].map((s) => s.session);
  }

  /**
   * Resolves once the browser's window is on the display and its first page has begun to load
   * (whatever the site then does), or rejects with the reason the browser or display could not start.
   */
  async startSession(spec: SessionSpec): Promise<RuntimeSession> {
    if (this.closed) throw new Error('the runtime is closed');
    const image = this.image(spec.browser);
    if (!image) throw new Error(`unknown browser "${spec.browser}"`);
    if (!image.enabled) throw new Error(`${image.name} is not available on this host: ${image.reason}`);
    if (spec.url !== undefined && !isNavigableUrl(spec.url)) throw new Error('the first page must be an http or https address');
    // The browser gets the address as parsed, never the caller's string (spaces, tabs, case).
    const url = spec.url === undefined ? undefined : new URL(spec.url).href;
    const locale = interfaceLocale(spec.language, image.locales);
    if (!locale) throw new Error(`${image.name} cannot show its interface in "${spec.language}" on this host (it has ${image.locales.join(', ')})`);
    const timeZone = spec.timeZone ?? this.timeZone;
    if (!isTimeZone(timeZone)) throw new Error(`unknown time zone "${timeZone}"; an IANA name is expected, for example Europe/Berlin`);
    const started = performance.now();
    const timeoutMs = this.options.startTimeoutMs ?? 20_000;
    const width = spec.width ?? this.geometry.width;
    const height = spec.height ?? this.geometry.height;
    const fitsWarm = width === this.geometry.width && height === this.geometry.height && !spec.upstreamProxyUrl;

    let slot: Slot | undefined;
    let start: StartKind = 'cold';
    if (fitsWarm) {
      // A browser's language and time zone are set when it starts: only a warm one that has both fits.
      const index = this.warmBrowsers.findIndex((s) => s.browser?.image.id === image.id && s.browser.language === spec.language && s.browser.timeZone === timeZone);
      if (index !== -1) {
        slot = this.warmBrowsers.splice(index, 1)[0];
        start = 'warm-browser';
      } else if (this.warmDisplays.length > 0) {
        slot = this.warmDisplays.shift();
        start = 'warm-display';
      }
      // A warm slot whose sandbox ended, or whose browser lost its guard, while it waited is not handed out.
      if (slot?.sandbox.ended() || slot?.browser?.control?.lostReason) {
        void this.discard(slot);
        slot = undefined;
        start = 'cold';
      }
      // Refill a moment later: a new browser starting now would compete for the CPU with this start.
      if (slot) this.scheduleRefill(REFILL_DELAY_MS);
    }

    try {
      if (!slot) {
        slot = await abortable(withTimeout(this.startSlot(width, height, spec.layout, spec.language, spec.upstreamProxyUrl), timeoutMs, 'the display start'), spec.signal, (late) => this.discard(late));
      } else {
        slot.egress.setLanguage(spec.language);
        if (slot.display.layout !== spec.layout) await slot.display.setLayout(spec.layout);
      }
      const current = slot;
      spec.onDisplay?.(current.display);
      const firstUrl = url ?? 'about:blank';
      const ready = async () => {
        if (!current.browser) {
          const process = await launchBrowser({ image, sandbox: current.sandbox, display: current.display, sound: current.sound, width, height, language: spec.language, locale, timeZone, timeoutMs }, firstUrl);
          current.browser = { process, image, language: spec.language, timeZone, control: null };
          await this.record(current);
          const connected = async () => {
            if (!process.devtoolsUrl) return;
            current.browser!.control = await BrowserControl.connect(process.devtoolsUrl, spec.language);
            if (url) await current.browser!.control.firstNavigationStarted();
          };
          await Promise.all([process.windowShown, connected()]);
        } else if (current.browser.control && url) {
          // A warm browser waits on about:blank: it starts on the first page now.
          await current.browser.control.navigate(url);
        }
      };
      await abortable(withTimeout(ready(), timeoutMs, `${image.name} starting on the first page`), spec.signal);
      const browser = current.browser!;
      const session: RuntimeSession = {
        id: current.id,
        dir: current.dir,
        sandbox: current.sandbox,
        image,
        display: current.display,
        browser: browser.process,
        control: browser.control,
        egress: current.egress,
        sound: current.sound,
        start,
        readyMs: performance.now() - started,
      };
      this.watch(session, current);
      return session;
    } catch (error) {
      if (slot) await this.stopSlot(slot);
      throw error instanceof Error ? error : new Error(String(error));
    }
  }

  /** Ends the session's browser, display and egress route and removes its directory. */
  async stopSession(id: string): Promise<void> {
    const entry = this.sessions.get(id);
    if (!entry || entry.stopping) return;
    entry.stopping = true;
    await this.stopSlot(entry.slot);
    this.sessions.delete(id);
  }

  /** Stops every session and every warm slot. */
  async close(): Promise<void> {
    this.closed = true;
    await this.refill.catch(() => undefined);
    const slots = [...this.warmDisplays.splice(0), ...this.warmBrowsers.splice(0)];
    await Promise.all([...slots.map((slot) => this.stopSlot(slot)), ...[...this.sessions.keys()].map((id) => this.stopSession(id)), ...this.discarding]);
    // Starts still under way (cancelled ones included) finish first; whatever they started ends too.
    await Promise.allSettled([...this.slotStarts]);
    await Promise.all([...this.discarding, ...[...this.liveSlots].map((slot) => this.stopSlot(slot))]);
  }

  /** Stops a slot whose start was cancelled after it came up; close() waits for these. */
  private discard(slot: Slot): Promise<void> {
    const stopping = this.stopSlot(slot).finally(() => this.discarding.delete(stopping));
    this.discarding.add(stopping);
    return stopping;
  }

  /** Number of ready warm slots, for benchmarks and operators. */
  warmCount(): { displays: number; browsers: number } {
    return { displays: this.warmDisplays.length, browsers: this.warmBrowsers.length };
  }

  /** Resolves when the warm pool has been filled to its configured size. */
  async warmed(): Promise<void> {
    let before: Promise<void>;
    do {
      before = this.refill;
      await before;
    } while (before !== this.refill);
  }

  private watch(session: RuntimeSession, slot: Slot): void {
    this.sessions.set(session.id, { session, slot, stopping: false });
    const report = (kind: RuntimeEvent['kind'], message: string) => {
      const entry = this.sessions.get(session.id);
      if (!entry || entry.stopping) return;
      // A process the kernel ended at the session's memory cap says so, not just "crashed".
      const capped = kind !== 'refused' && session.sandbox.oomKills() > 0 && this.confinement;
      const reason = capped ? `the session reached its memory limit (${this.confinement!.memoryMb} MB): ${message}` : message;
      this.emit('event', { sessionId: session.id, kind, message: reason } as RuntimeEvent);
    };
    void session.browser.process.exited.then(({ code, signal }) =>
      report('browser-exited', `${session.image.name} exited (${signal ?? `code ${code}`})`),
    );
    void session.display.server.exited.then(({ code, signal }) => report('display-exited', `Xvnc exited (${signal ?? `code ${code}`})`));
    session.control?.on('page-crashed', ({ status }) => report('page-crashed', `a page crashed (${status})`));
    session.control?.on('refused', ({ url }) => report('refused', `refused ${url.slice(0, 200)}`));
    session.control?.on('guard-lost', ({ reason }) => report('guard-lost', reason));
    // Lost while the session was starting: said now that someone listens.
    if (session.control?.lostReason) report('guard-lost', session.control.lostReason);
    session.egress.on('refused', ({ target, reason }) => report('refused', `refused ${target}: ${reason}`));
    session.sound?.once('lost', (reason) => report('sound-lost', reason));
  }

  private startSlot(width: number, height: number, layout: string, language: string, upstreamProxyUrl?: string): Promise<Slot> {
    const starting = this.openSlot(width, height, layout, language, upstreamProxyUrl);
    const tracked = starting.then(
      (slot) => void this.liveSlots.add(slot),
      () => undefined,
    );
    this.slotStarts.add(tracked);
    void tracked.finally(() => this.slotStarts.delete(tracked));
    return starting;
  }

  private async openSlot(width: number, height: number, layout: string, language: string, upstreamProxyUrl?: string): Promise<Slot> {
    const id = randomBytes(6).toString('hex');
    const dir = join(this.root, id);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const egressOptions = {
      sessionId: id,
      policy: this.options.egress,
      language,
      ...(upstreamProxyUrl ? { upstreamProxyUrl } : {}),
      ...(this.options.egressConnections ? { connections: this.options.egressConnections } : {}),
      ...(this.options.openFiles ? { openFiles: this.options.openFiles } : {}),
    };
    let sandbox: SessionSandbox | undefined;
    let egress: EgressRoute | undefined;
    try {
      if (this.confinement) {
        const egressDir = join(dir, 'egress');
        sandbox = await openConfinedSandbox({
          settings: this.confinement,
          hostDir: dir,
          sharedHostDir: this.sharedDir,
          cgroupName: `${rootKey(this.root)}-${id}`,
          egressHostDir: egressDir,
          ...(this.chromiumPolicyDir ? { chromiumPolicyDir: this.chromiumPolicyDir } : {}),
          timeoutMs: this.options.startTimeoutMs ?? 20_000,
        });
        // The route listens on a socket only the session uid reaches; the sandbox relays to it.
        egress = await startEgressRoute({ ...egressOptions, socketPath: join(egressDir, 'egress.sock'), socketOwner: sandbox.uid! });
      } else {
        egress = await startEgressRoute(egressOptions);
        sandbox = await openHostSandbox(dir, egress.proxyUrl);
      }
      const display = await startDisplay({ sandbox, width, height, layout, startTimeoutMs: this.options.startTimeoutMs });
      // Sound part (sound.ts): after the display, before the browser, which is given its server.
      const sound = await startSessionSound(sandbox, this.options.sound);
      const slot: Slot = { id, dir, sandbox, display, egress, sound };
      await this.record(slot);
      return slot;
    } catch (error) {
      await sandbox?.stop();
      await egress?.close();
      await killMarkedProcesses({ dir });
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }

  private stopSlot(slot: Slot): Promise<void> {
    slot.stopped ??= this.endSlot(slot);
    return slot.stopped;
  }

  private async endSlot(slot: Slot): Promise<void> {
    this.liveSlots.delete(slot);
    await slot.browser?.control?.close();
    await slot.sound?.stop();
    // Confined, this ends every process of the session at once (its pid namespace goes).
    await slot.sandbox.stop();
    await Promise.all([slot.browser?.process.stop(), slot.display.stop(), slot.egress.close()]);
    // Crash handlers and other detached helpers carry the session marker; end them too.
    await killMarkedProcesses({ dir: slot.dir });
    await rm(slot.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  }

  /** Written so that a later run can find this session's display and processes after a crash. */
  private async record(slot: Slot): Promise<void> {
    const record: RuntimeRecord = {
      id: slot.id,
      confined: slot.sandbox.confined,
      displayNumber: slot.display.number,
      pids: [slot.display.server.pid, slot.display.windowManager.pid, slot.browser?.process.process.pid ?? 0].filter(Boolean),
    };
    await writeFile(join(slot.dir, 'runtime.json'), JSON.stringify(record));
  }

  private scheduleRefill(delayMs = 0): void {
    const warm = this.options.warm;
    if (!warm || this.closed) return;
    this.refill = this.refill.then(async () => {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      while (!this.closed && this.warmDisplays.length < (warm.displays ?? 0)) {
        this.warmDisplays.push(await this.startSlot(this.geometry.width, this.geometry.height, 'us', 'en'));
      }
      for (const want of warm.browsers ?? []) {
        const image = this.image(want.browser);
        if (!image?.enabled || image.family !== 'chromium') continue;
        const language = want.language ?? 'en';
        const locale = interfaceLocale(language, image.locales);
        if (!locale) continue;
        const timeZone = this.timeZone;
        const have = () => this.warmBrowsers.filter((s) => s.browser?.image.id === image.id && s.browser.language === language).length;
        while (!this.closed && have() < (want.count ?? 1)) {
          const slot = await this.startSlot(this.geometry.width, this.geometry.height, 'us', language);
          const timeoutMs = this.options.startTimeoutMs ?? 20_000;
          try {
            const process = await launchBrowser({ image, sandbox: slot.sandbox, display: slot.display, sound: slot.sound, ...this.geometry, language, locale, timeZone, timeoutMs }, 'about:blank');
            slot.browser = { process, image, language, timeZone, control: null };
            [slot.browser.control] = await Promise.all([BrowserControl.connect(process.devtoolsUrl!, language), process.windowShown]);
            await this.record(slot);
          } catch (error) {
            await this.stopSlot(slot);
            throw error;
          }
          if (this.closed) await this.stopSlot(slot);
          else this.warmBrowsers.push(slot);
          const waiting = slot;
          // A warm browser that loses its guard while it waits is not kept (decisions.md 49).
          waiting.browser?.control?.once('guard-lost', () => {
            const at = this.warmBrowsers.indexOf(waiting);
            if (at === -1) return;
            this.warmBrowsers.splice(at, 1);
            void this.discard(waiting);
            this.scheduleRefill();
          });
        }
      }
    }).catch(() => {
      /* a warm slot that cannot start leaves the pool short; cold starts still work and report why */
    });
  }
}

/**
 * Rejects as soon as `signal` aborts; what the promise still produces afterwards is handed to
 * `discard` (a display that came up too late is stopped, not leaked).
 */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, discard?: (late: T) => Promise<void>): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) {
    void promise.then((late) => discard?.(late), () => undefined);
    return Promise.reject(new Error('the start was cancelled'));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      void promise.then((late) => discard?.(late), () => undefined);
      reject(new Error('the start was cancelled'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** Files shared read-only with every confined session (browser policies, the Firefox launcher). */
const SHARED_DIR = '.shared';

/** A short name of a runtime root, unique on this host: it prefixes the root's cgroups. */
export function rootKey(root: string): string {
  return `rbk-${createHash('sha256').update(root).digest('hex').slice(0, 10)}`;
}

/** Ends processes and removes directories and X display files an earlier run left in `root`. */
export async function reapRoot(root: string): Promise<ReapReport> {
  const processes = await killMarkedProcesses({ root });
  await reapSessionCgroups(`${rootKey(root)}-`);
  await reapUidClaims();
  forgetFirefoxBuilds(root);
  let directories = 0;
  let entries: string[] = [];
  try {
    entries = await readdir(root);
  } catch {
    return { processes, directories };
  }
  for (const entry of entries) {
    const dir = join(root, entry);
    if (entry === SHARED_DIR) {
      await rm(dir, { recursive: true, force: true });
      continue;
    }
    try {
      const record = JSON.parse(await readFile(join(dir, 'runtime.json'), 'utf8')) as RuntimeRecord;
      if (!record.confined && Number.isInteger(record.displayNumber)) await removeDisplayFiles(record.displayNumber);
    } catch {
      /* no record: the session died before its display started */
    }
    await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    directories++;
  }
  return { processes, directories };
}
