// What the session service needs of this node's runtime (runtime/runtime.ts): the images it can
// start, start, stop, a running session's ends (what the channels open, passed on unread) and byte
// meters, and its events. The service depends on this seam, not on the class, so placement, exits
// and the lifecycle are tested without a browser: test/helpers/fake-runtime.ts stands in (the
// engine takes it as `runtime`), as Selenium Grid's Node stands behind an interface.
import type { ArchiveConsumer, BrowserImage, ProfileCapture, RuntimeEvent, SessionEnds, SessionSpec } from '../runtime/index.js';

export type { RuntimeEvent, SessionSpec };

/** A session the runtime runs, as the service sees it. */
export interface RunningSession {
  readonly id: string;
  /** What the channels open their ends in (runtime/session/session-ends.ts); the service only passes it on. */
  readonly ends: SessionEnds;
  /** How it started (cold, on a warm display, in a warm browser) and the runtime's own ms to ready, with its parts (start-trace.ts). */
  readonly start?: string;
  readonly readyMs?: number;
  readonly startParts?: Record<string, number>;
  /** Bytes through the session's egress route so far (its meters). */
  readonly egress: { bytes(): { sent: number; received: number } };
}

export interface NodeRuntime {
  /** The image callers name as `browser`, enabled or not; undefined for a browser this node does not know. */
  image(id: string): BrowserImage | undefined;
  /** Resolves once the browser is ready, or rejects with why it could not start. */
  startSession(spec: SessionSpec): Promise<RunningSession>;
  stopSession(id: string): Promise<void>;
  /**
   * Closes a running session's browser cleanly and packs its saved profile (decisions.md 89),
   * handing the archive to `consume` as it streams (decisions.md 138); absent: profiles are never
   * saved here.
   */
  captureProfile?(id: string, capture: ProfileCapture, consume: ArchiveConsumer): Promise<void>;
  /** The bytes a capture of the profile would hand over now, the browser running on; rejects past the cap (hibernation's look before it closes anything); absent: not looked at. */
  measureProfile?(id: string, capture: ProfileCapture): Promise<number>;
  get(id: string): RunningSession | undefined;
  /** Freezes or thaws a running session's processes (standby, decisions.md 141): false where they cannot be frozen; absent: never. */
  freeze?(id: string, frozen: boolean): Promise<boolean>;
  /** Crashes, exits and refusals of the sessions it runs. */
  on(event: 'event', listener: (event: RuntimeEvent) => void): unknown;
}

/**
 * What the engine needs of its node's runtime besides the service's seam: the images it lists and
 * checks, its warm pool's counts (health, metrics, the node's record), and closing it.
 * SessionRuntime is one; the test's fake runtime is another.
 */
export interface EngineRuntime extends NodeRuntime {
  readonly images: BrowserImage[];
  warmCount(): { displays: number; browsers: number };
  warmStats(): { browsers: Array<{ browser: string; language: string }>; memoryMb: number };
  close(): Promise<void>;
}
