// The session runtime: turns "start a session" into a confined set of processes in a sandbox of its
// own (its parts, in order: sandbox, egress route, display, browser; session-parts.ts), started and
// stopped as a unit, in the session's interface language and time zone. It checks a session's
// choices and keeps its sessions, its warm pool (warm-pool.ts) and every slot it started; one
// session's start, cold, on a warm display or in a warm browser, is runtime-session.ts's. What an
// earlier run left behind is reaped first (reap.ts); what a running session reports comes out as
// runtime events (runtime-events.ts).
import { EventEmitter } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { discoverImages, type BrowserImage } from './browser/catalog.js';
import { DEFAULT_CONFINEMENT, probeConfinement, type ConfinementSettings, type SessionSandbox } from './sandbox/confinement.js';
import { writeSharedFiles } from './browser/chromium-policies.js';
import { isNavigableUrl } from './browser/page-policy.js';
import type { EgressPolicy } from './egress/address-policy.js';
import type { EgressConnectionLimits } from './egress/egress-gate.js';
import type { EnginePorts } from './egress/engine-ports.js';
import type { OpenFiles } from '../limits/open-files.js';
import { interfaceLocale } from './browser/locales.js';
import { isTimeZone } from './browser/time-zones.js';
import { reapRoot, SHARED_DIR, type ReapReport } from './session/reap.js';
import { ENDS_SESSION, runtimeEvent, startedMessage, watchSession, type RuntimeEvent } from './session/runtime-events.js';
import { SessionSlot, type SlotSettings, type SlotShape } from './session/slot.js';
import { WarmPool, type WarmPoolOptions, type WarmPoolStats } from './pool/warm-pool.js';
import { hostMemoryShort } from './pool/warm-demand.js';
import type { SoundSettings } from './capture/sound.js';
import type { VideoSettings } from './capture/video.js';
import type { SessionSpec } from './session-spec.js';
import { closeAndCapture, measureProfile, type ArchiveConsumer, type ProfileCapture } from './session-profile.js';
import { startRuntimeSession, type RuntimeSession } from './runtime-session.js';

export { reapRoot, rootKey, type ReapReport } from './session/reap.js';
export type { RuntimeEvent, RuntimeNotice, SessionEndingEvent } from './session/runtime-events.js';
export type { WarmPoolOptions, WarmPoolStats } from './pool/warm-pool.js';
export type { RecordingSpec, SessionSpec } from './session-spec.js';
export type { RuntimeSession, StartKind } from './runtime-session.js';

export interface RuntimeOptions {
  /** Directory that holds one sub-directory per session. */
  root: string;
  egress: EgressPolicy;
  /** Connections each session may hold open to its egress route, and how long one may stay silent. */
  egressConnections?: EgressConnectionLimits;
  /** The engine's open files and their reserve, shared with the viewers (open-files.ts). */
  openFiles?: OpenFiles;
  /** The engine's own ports, which no session reaches whatever `egress.allow` says (egress/engine-ports.ts). */
  enginePorts?: EnginePorts;
  /** Installed browsers; discovered when omitted. */
  images?: BrowserImage[];
  warm?: WarmPoolOptions;
  /** Sessions this node runs at once (its `node.capacity`); null or absent: no limit. Warming stops at it. */
  sessionLimit?: number | null;
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
  /** Each display's video encoder (video.ts), run only while someone watches; absent: no video on this node. */
  video?: VideoSettings;
  /** What the operator should know that ends nothing (a sound server that could not start); default console.warn. */
  warn?: (message: string) => void;
}

const DEFAULT_GEOMETRY = { width: 1280, height: 720 };
/** After a session's start, warming waits this long: its first page is still loading. */
const START_QUIET_MS = 1000;

export class SessionRuntime extends EventEmitter<{ event: [RuntimeEvent] }> {
  readonly root: string;
  readonly images: BrowserImage[];
  private readonly sessions = new Map<string, { session: RuntimeSession; slot: SessionSlot; stopping: boolean; saving?: boolean }>();
  private readonly warm: WarmPool;
  private readonly discarding = new Set<Promise<void>>();
  /** Every slot this runtime started and has not stopped yet, whoever holds it. */
  private readonly liveSlots = new Set<SessionSlot>();
  /** Slot starts in progress: close() waits for them, then stops what they started. */
  private readonly slotStarts = new Set<Promise<unknown>>();
  private closed = false;
  /** Session starts under way, and when the last one ended: warming yields to them. */
  private startsWaiting = 0;
  private lastStartEnded = 0;
  private readonly geometry: { width: number; height: number };
  /** The time zone of sessions without an exit location. */
  readonly timeZone: string;
  /** Null: sessions run unconfined (an operator's explicit opt-in). */
  readonly confinement: ConfinementSettings | null;
  private readonly slotSettings: SlotSettings;

  private constructor(private readonly options: RuntimeOptions, images: BrowserImage[]) {
    super();
    this.root = resolve(options.root);
    this.images = images;
    this.geometry = options.geometry ?? DEFAULT_GEOMETRY;
    this.timeZone = options.timeZone ?? 'UTC';
    this.confinement = options.confinement === false ? null : { ...DEFAULT_CONFINEMENT, ...options.confinement };
    this.slotSettings = {
      root: this.root,
      sharedDir: join(this.root, SHARED_DIR),
      confinement: this.confinement,
      egress: options.egress,
      ...(options.egressConnections ? { egressConnections: options.egressConnections } : {}),
      ...(options.openFiles ? { openFiles: options.openFiles } : {}),
      ...(options.enginePorts ? { enginePorts: options.enginePorts } : {}),
      ...(options.sound !== undefined ? { sound: options.sound } : {}),
      ...(options.video ? { video: options.video } : {}),
      ...(options.warn ? { warn: options.warn } : {}),
      startTimeoutMs: this.startTimeoutMs,
      onStop: (slot) => this.liveSlots.delete(slot),
    };
    this.warm = new WarmPool(options.warm, {
      geometry: this.geometry,
      timeZone: this.timeZone,
      startTimeoutMs: this.startTimeoutMs,
      image: (id) => this.image(id),
      startSlot: (shape) => this.startSlot(shape),
      discard: (slot) => this.discard(slot),
      busy: () => this.busy(),
      warn: (message) => (this.options.warn ?? console.warn)(message),
    });
  }

  /**
   * Why warming must wait now, or null: a live session's start is under way or has just ended (its
   * page is still loading), the node is at its session limit, or the host is short of memory.
   */
  private busy(): string | null {
    if (this.startsWaiting > 0) return 'a session is starting';
    if (performance.now() - this.lastStartEnded < START_QUIET_MS) return 'a session has just started';
    const limit = this.options.sessionLimit;
    // Sessions in standby do not count (issue 46): they hold no CPU, and the node's capacity counts what is awake.
    if (limit !== undefined && limit !== null && this.awakeCount() >= limit) return `the node runs its limit of ${limit} sessions`;
    return hostMemoryShort();
  }

  /** Sessions running here that are not in standby (their processes not frozen). */
  private awakeCount(): number {
    let awake = 0;
    for (const entry of this.sessions.values()) if (!entry.session.sandbox.frozen?.()) awake++;
    return awake;
  }

  private get startTimeoutMs(): number {
    return this.options.startTimeoutMs ?? 20_000;
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
    if (runtime.confinement) {
      const { chromiumPolicyDir } = await writeSharedFiles(runtime.slotSettings.sharedDir);
      if (chromiumPolicyDir) runtime.slotSettings.chromiumPolicyDir = chromiumPolicyDir;
    }
    runtime.warm.open();
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
    this.warm.noteCreate(image, spec.language, timeZone);
    this.startsWaiting++;
    try {
      const { session, slot } = await startRuntimeSession(spec, { image, locale, url, timeZone }, {
        geometry: this.geometry,
        timeoutMs: this.startTimeoutMs,
        // A warm slot waits frozen (standby on): thawed before anything is handed out; one the kernel does not thaw is let go, and the session starts cold.
        takeWarm: async (...args) => {
          const warm = this.warm.take(...args);
          if (!warm) return undefined;
          return this.warm.awaken(warm.slot).then(() => warm, (error: Error) => {
            (this.options.warn ?? console.warn)(`a warm slot could not be thawed, so the session starts cold: ${error.message}`);
            return undefined;
          });
        },
        startSlot: (shape) => this.startSlot(shape),
        discard: (late) => this.discard(late),
      });
      this.watch(session, slot);
      this.emit('event', runtimeEvent(session.id, 'started', startedMessage(session.start, session.readyMs)));
      return session;
    } finally {
      this.startsWaiting--;
      this.lastStartEnded = performance.now();
    }
  }

  /** Ends the session's parts (browser, display, egress route, sandbox) and removes its directory. */
  async stopSession(id: string): Promise<void> {
    const entry = this.sessions.get(id);
    if (!entry || entry.stopping) return;
    entry.stopping = true;
    // A session in standby is thawed first: its parts end as they always do (a frozen one ignores even SIGKILL).
    await thaw(entry.session.sandbox);
    await entry.slot.stop();
    this.sessions.delete(id);
  }

  /**
   * Closes a running session's browser the way it writes its state out and packs its saved
   * profile (session-profile.ts); stopSession() then ends the rest. What the browser's exit
   * reports meanwhile ends nothing.
   */
  async captureProfile(id: string, capture: ProfileCapture, consume: ArchiveConsumer): Promise<void> {
    const entry = this.sessions.get(id);
    if (!entry || entry.stopping) throw new Error('the session is not running');
    entry.saving = true;
    await thaw(entry.session.sandbox);
    await closeAndCapture(entry.session, capture, this.startTimeoutMs, consume);
  }

  /** The bytes a capture of the session's profile would hand over now, its browser running on (hibernation.ts); rejects past `capture.maxBytes`. */
  async measureProfile(id: string, capture: ProfileCapture): Promise<number> {
    const entry = this.sessions.get(id);
    if (!entry || entry.stopping) throw new Error('the session is not running');
    return measureProfile(entry.session, capture, this.startTimeoutMs);
  }

  /**
   * Freezes or thaws a running session's processes (standby, decisions.md 141); false where its
   * sandbox cannot be frozen (unconfined, or no freezer on this host). Rejects when the kernel did not.
   */
  async freeze(id: string, frozen: boolean): Promise<boolean> {
    const entry = this.sessions.get(id);
    if (!entry || entry.stopping) throw new Error('the session is not running');
    if (!entry.session.sandbox.freeze) return false;
    await entry.session.sandbox.freeze(frozen);
    return true;
  }

  /** Stops every session and every warm slot. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = await this.warm.close();
    await Promise.all([...slots.map((slot) => slot.stop()), ...[...this.sessions.keys()].map((id) => this.stopSession(id)), ...this.discarding]);
    // Starts still under way (cancelled ones included) finish first; whatever they started ends too.
    await Promise.allSettled([...this.slotStarts]);
    await Promise.all([...this.discarding, ...[...this.liveSlots].map((slot) => slot.stop())]);
  }

  /** Stops a slot whose start was cancelled after it came up, or that can no longer be used; close() waits for these. */
  private discard(slot: SessionSlot): Promise<void> {
    const stopping = slot.stop().finally(() => this.discarding.delete(stopping));
    this.discarding.add(stopping);
    return stopping;
  }

  /** Number of ready warm slots, for benchmarks and operators. */
  warmCount(): { displays: number; browsers: number } {
    return this.warm.count();
  }

  /** What the warm pool holds and wants now (doctor, the health answer, the metrics). */
  warmStats(): WarmPoolStats {
    return this.warm.stats();
  }

  /** Resolves when the warm pool holds what it wants now. */
  async warmed(timeoutMs?: number): Promise<void> {
    await this.warm.filled(timeoutMs);
  }

  /** Reports the running session's events; those of a session being stopped are dropped. */
  private watch(session: RuntimeSession, slot: SessionSlot): void {
    this.sessions.set(session.id, { session, slot, stopping: false });
    watchSession({ ...session, browserName: session.image.name }, (kind, message, detail) => {
      const entry = this.sessions.get(session.id);
      if (!entry || entry.stopping || entry.saving) return;
      // A process the kernel ended at the session's memory cap says so, not just "crashed".
      const capped = ENDS_SESSION[kind] && session.sandbox.oomKills() > 0 && this.confinement;
      const reason = capped ? `the session reached its memory limit (${this.confinement!.memoryMb} MB): ${message}` : message;
      this.emit('event', runtimeEvent(session.id, kind, reason, detail));
    });
  }

  private startSlot(shape: SlotShape): Promise<SessionSlot> {
    const starting = SessionSlot.open(this.slotSettings, shape);
    const tracked = starting.then(
      (slot) => void this.liveSlots.add(slot),
      () => undefined,
    );
    this.slotStarts.add(tracked);
    void tracked.finally(() => this.slotStarts.delete(tracked));
    return starting;
  }
}

/** Thaws a sandbox in standby (nothing where it is not frozen); a failure is left to the stop that follows. */
async function thaw(sandbox: SessionSandbox): Promise<void> {
  if (sandbox.frozen?.()) await sandbox.freeze!(false).catch(() => undefined);
}
