// What the session service needs of this node's runtime (runtime/runtime.ts): the images it can
// start, start, stop, a running session's display, sound and byte meters, and its events. The service
// depends on this seam, not on the class, so placement, exits and the lifecycle are tested
// without a browser (a fake runtime stands in), as Selenium Grid's Node stands behind an interface.
import type { BrowserImage, Display, ProfileCapture, RuntimeEvent, SessionSandbox, SessionSound, SessionSpec } from '../runtime/index.js';

export type { RuntimeEvent, SessionSpec };

/** A session the runtime runs, as the service sees it. */
export interface RunningSession {
  readonly id: string;
  readonly display: Display;
  /** What the browser plays, for listeners; null without sound. */
  readonly sound: SessionSound | null;
  /** The browser's DevTools address (Chromium family; null for Firefox), for programs (the automation channel). */
  readonly browser?: { readonly devtoolsUrl: string | null };
  /** The engine's DevTools guard (Chromium family): which targets are its own connections, hidden from programs. */
  readonly control?: { isOwnTarget(targetId: string): boolean } | null;
  /** The session's sandbox: its directory as its browser sees it (its downloads folder is in it), where its files program runs. */
  readonly sandbox?: SessionSandbox;
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
  /** Closes a running session's browser cleanly and packs its saved profile (decisions.md 89); absent: profiles are never saved here. */
  captureProfile?(id: string, capture: ProfileCapture): Promise<Buffer>;
  get(id: string): RunningSession | undefined;
  /** Crashes, exits and refusals of the sessions it runs. */
  on(event: 'event', listener: (event: RuntimeEvent) => void): unknown;
}
