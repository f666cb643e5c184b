// A session as the runtime hands it out (RuntimeSession), and its start: on a warm browser, a warm
// display or a slot of its own (warm-pool.ts, session/slot.ts), the session's choices handed out
// to a warm slot, its saved profile restored (session-profile.ts), its browser on the first page
// (session/first-page.ts) and its tabs watched, its recorder added as a part, within one deadline
// and cancelled with the create that asked for it. runtime.ts keeps the sessions this gives it.
import type { BrowserProcess } from './browser/browser.js';
import type { BrowserImage } from './browser/catalog.js';
import type { BrowserControl } from './browser/control.js';
import { watchTabs, type SessionTabs } from './browser/watch-tabs.js';
import type { SessionSound } from './capture/sound.js';
import type { Display } from './display/display.js';
import type { EgressRoute } from './egress/egress.js';
import type { SessionSandbox } from './sandbox/confinement.js';
import { abortable, withTimeout } from './sandbox/processes.js';
import { browserOnFirstPage } from './session/first-page.js';
import { endsOfSlot, type SessionEnds } from './session/session-ends.js';
import { recorderPart } from './session/session-parts.js';
import type { SessionSlot, SlotShape } from './session/slot.js';
import { restoreProfile } from './session-profile.js';
import type { SessionSpec } from './session-spec.js';

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
  /** The browser's tabs (tabs.ts); null for a Firefox in a browser window (decisions.md 103). */
  readonly tabs: SessionTabs | null;
  readonly egress: EgressRoute;
  /** What the browser plays, for listeners; null when sound is off or its server could not start. */
  readonly sound: SessionSound | null;
  /** What the channels open their ends in (session-ends.ts). */
  readonly ends: SessionEnds;
  readonly start: StartKind;
  /** Milliseconds from the start request to ready: the browser's window on the display and its
   *  first navigation begun (the page itself may still be loading, or fail). */
  readonly readyMs: number;
  /** Where readyMs went, in ms: `slot` (taken warm, or started), `handOut` (the session's choices
   *  on a warm slot), `browser` (launched, or a warm one on the first page). The engine's start
   *  trace carries them (sessions/start-trace.ts). */
  readonly startParts: Record<string, number>;
}

/** What a start is given by the runtime: the warm pool's slots, new slots, and its settings. */
export interface SessionStartContext {
  /** The display size of warm slots (and of sessions that name none). */
  geometry: { width: number; height: number };
  timeoutMs: number;
  /** A warm slot that fits, taken from the pool (and thawed, if it waited frozen); `displayOnly`: a warm display, never a warm browser. */
  takeWarm(image: BrowserImage, language: string, timeZone: string, displayOnly: boolean): Promise<{ slot: SessionSlot; kind: 'warm-browser' | 'warm-display' } | undefined>;
  /** Starts a new slot (the runtime tracks it until it stops). */
  startSlot(shape: SlotShape): Promise<SessionSlot>;
  /** Stops a slot that came up after its start was cancelled. */
  discard(slot: SessionSlot): Promise<void>;
}

/** The session's choices as the runtime checked them: its browser, interface locale, first address and time zone. */
export interface ChosenStart {
  image: BrowserImage;
  locale: string;
  url: string | undefined;
  timeZone: string;
}

/**
 * Starts a session: resolves once its browser's window is on the display and its first page has
 * begun to load, with the slot it runs in; rejects with the reason, its slot stopped.
 */
export async function startRuntimeSession(spec: SessionSpec, chosen: ChosenStart, context: SessionStartContext): Promise<{ session: RuntimeSession; slot: SessionSlot }> {
  const { image, locale, url, timeZone } = chosen;
  const started = performance.now();
  const timeoutMs = context.timeoutMs;
  const width = spec.width ?? context.geometry.width;
  const height = spec.height ?? context.geometry.height;
  const fitsWarm = width === context.geometry.width && height === context.geometry.height;
  // A Firefox app window is a launch of its own (kiosk mode, its remote agent), and so is a Firefox
  // programs may drive: each takes a warm display, never a warm browser (decisions.md 104, 143). A
  // Chromium app window takes a warm browser and makes its window fullscreen (decisions.md 175).
  const ownLaunch = spec.profile !== undefined || (image.family === 'firefox' && (spec.window === 'app' || spec.automation === true));
  const warm = fitsWarm ? await context.takeWarm(image, spec.language, timeZone, ownLaunch) : undefined;
  let slot = warm?.slot;
  const start: StartKind = warm?.kind ?? 'cold';
  // The parts of readyMs: the slot from the start; the hand-out and the browser each from the
  // slot's, since on a warm Chromium they run side by side.
  const parts: Record<string, number> = {};
  let slotReady = started;
  const part = (name: string, since: number) => {
    const now = performance.now();
    parts[name] = Math.round((now - since) * 10) / 10;
    return now;
  };

  try {
    let handedOut: Promise<void> = Promise.resolve();
    if (!slot) {
      const shape: SlotShape = { width, height, layout: spec.layout, language: spec.language, ...(spec.upstreamProxyUrl ? { upstreamProxyUrl: spec.upstreamProxyUrl } : {}) };
      slot = await abortable(withTimeout(context.startSlot(shape), timeoutMs, 'the display start'), spec.signal, (late) => context.discard(late));
      slotReady = part('slot', started);
    } else {
      slotReady = part('slot', started);
      // The session's choices, applied as it takes the warm slot (decisions.md 63). The route's
      // settings are set at once. A Chromium's first page goes by DevTools, so the keyboard
      // layout (a program run in the session) is set beside it: nothing is typed into the
      // session before it is handed out, and the hand-out waits for both. A Firefox's first page
      // is typed into its address bar, so its layout is set first.
      handedOut = slot.handOut({ language: spec.language, layout: spec.layout, upstreamProxyUrl: spec.upstreamProxyUrl }).then(() => void part('handOut', slotReady));
      if (!slot.browser?.control) await handedOut;
    }
    const current = slot;
    if (spec.recording) spec.recording.started?.(current.parts.add(recorderPart(spec.recording.dir, { video: current.video, sound: current.sound, width, height })));
    spec.onEnds?.(endsOfSlot(current), current.id);
    const browserBegan = performance.now();
    // A saved profile is unpacked into the fresh profile directory first (session-profile.ts).
    const restored = spec.profile ? Promise.resolve(spec.profile.archive).then((source) => restoreProfile(current.sandbox, source, timeoutMs, spec.profile?.files === true)).then(() => void part('profile', browserBegan)) : Promise.resolve();
    const browserReady = restored.then(() => browserOnFirstPage(current, { image, url, language: spec.language, locale, timeZone, width, height, timeoutMs, ...(spec.profile?.tabs ? { restoreTabs: true } : {}), ...(spec.window ? { window: spec.window } : {}), ...(spec.automation ? { automation: true } : {}) })).then(() => void part('browser', browserBegan));
    // Both settle before a failure is thrown: a layout still being set must not outlive its slot's stop.
    const both = Promise.allSettled([handedOut, browserReady]).then(async () => {
      await handedOut;
      await browserReady;
    });
    await abortable(withTimeout(both, timeoutMs, `${image.name} starting on the first page`), spec.signal);
    const browser = current.browser!;
    browser.tabs = await watchTabs({ control: browser.control, image, bidi: browser.process.bidi }, spec.window === 'app', timeoutMs);
    const session: RuntimeSession = {
      id: current.id,
      dir: current.dir,
      sandbox: current.sandbox,
      image,
      display: current.display,
      browser: browser.process,
      control: browser.control,
      tabs: browser.tabs,
      egress: current.egress,
      sound: current.sound,
      ends: endsOfSlot(current),
      start,
      readyMs: performance.now() - started,
      startParts: parts,
    };
    return { session, slot: current };
  } catch (error) {
    if (slot) await slot.stop();
    throw error instanceof Error ? error : new Error(String(error));
  }
}
