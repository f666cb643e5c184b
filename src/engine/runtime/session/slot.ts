// One session's parts on this host, started in order and stopped as a unit: its sandbox and egress
// route (which starts first depends on confinement: a confined route listens for the sandbox's uid,
// a host sandbox needs the route's address), then its display (with its video encoder, which runs
// only while someone watches) and sound; the browser joins later (a warm
// display waits without one). A slot is a session before it has a session id of the service's.
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { EgressPolicy } from '../egress/address-policy.js';
import { openConfinedSandbox, openHostSandbox, type ConfinementSettings, type SessionSandbox } from '../sandbox/confinement.js';
import { startDisplay, type Display } from '../display/display.js';
import { startEgressRoute, type EgressRoute } from '../egress/egress.js';
import type { EgressConnectionLimits } from '../egress/egress-gate.js';
import { portOfUrl, type EnginePorts } from '../egress/engine-ports.js';
import type { OpenFiles } from '../../limits/open-files.js';
import { killMarkedProcesses } from '../sandbox/processes.js';
import { rootKey, writeRuntimeRecord } from './reap.js';
import { browserPart, displayPart, egressPart, sandboxPart, SessionParts, soundPart, videoPart, type BrowserPart } from './session-parts.js';
import { startSessionSound, type SessionSound, type SoundSettings } from '../capture/sound.js';
import { SessionVideo, type VideoSettings } from '../capture/video.js';

/** What every slot of one runtime is started with. */
export interface SlotSettings {
  root: string;
  /** Files shared read-only with every confined session. */
  sharedDir: string;
  /** Null: unconfined (an operator's explicit opt-in). */
  confinement: ConfinementSettings | null;
  chromiumPolicyDir?: string;
  egress: EgressPolicy;
  egressConnections?: EgressConnectionLimits;
  openFiles?: OpenFiles;
  /** The engine's own ports, which no session reaches (engine-ports.ts); an unconfined slot's route and DevTools join them. */
  enginePorts?: EnginePorts;
  startTimeoutMs: number;
  /** Each session's sound settings; `false` runs no sound process at all (sound.ts). */
  sound?: Partial<SoundSettings> | false;
  /** Each display's video encoder settings (video.ts); absent where this node offers no video. Nothing runs until someone watches. */
  video?: VideoSettings;
  /** What the operator should know that ends nothing (the runtime's `warn`). */
  warn?: (message: string) => void;
  /** Called as a slot begins to stop (the runtime forgets it). */
  onStop?: (slot: SessionSlot) => void;
}

/** What one slot's display is started with. */
export interface SlotShape {
  width: number;
  height: number;
  layout: string;
  language: string;
  upstreamProxyUrl?: string;
}

export class SessionSlot {
  readonly parts = new SessionParts();
  /** Set by the first stop; later stops wait for it (a display number may be reused afterwards). */
  private stopped: Promise<void> | undefined;
  /** Takes the browser's DevTools port out of the engine's ports again (unconfined only). */
  private forgetDevToolsPort: () => void = () => undefined;
  private forgetBiDiPort: () => void = () => undefined;

  private constructor(
    readonly id: string,
    readonly dir: string,
    private readonly settings: SlotSettings,
  ) {}

  get sandbox(): SessionSandbox {
    return this.parts.require('sandbox');
  }

  get egress(): EgressRoute {
    return this.parts.require('egress');
  }

  get display(): Display {
    return this.parts.require('display');
  }

  /** The display's video encoder; null where this node offers no video. */
  get video(): SessionVideo | null {
    return this.parts.get('video') ?? null;
  }

  /** Null when sound is off, or its server could not start: the session runs without sound. */
  get sound(): SessionSound | null {
    return this.parts.get('sound') ?? null;
  }

  get browser(): BrowserPart | undefined {
    return this.parts.get('browser');
  }

  /** Starts a slot's sandbox, egress route and display; stops what started if one fails. */
  static async open(settings: SlotSettings, shape: SlotShape): Promise<SessionSlot> {
    const id = randomBytes(6).toString('hex');
    const dir = join(settings.root, id);
    const slot = new SessionSlot(id, dir, settings);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const egressOptions = {
      sessionId: slot.id,
      policy: settings.egress,
      language: shape.language,
      ...(shape.upstreamProxyUrl ? { upstreamProxyUrl: shape.upstreamProxyUrl } : {}),
      ...(settings.egressConnections ? { connections: settings.egressConnections } : {}),
      ...(settings.openFiles ? { openFiles: settings.openFiles } : {}),
      ...(settings.enginePorts ? { enginePorts: settings.enginePorts } : {}),
    };
    const { parts } = slot;
    try {
      if (settings.confinement) {
        const egressDir = join(dir, 'egress');
        const sandbox = parts.add(sandboxPart(await openConfinedSandbox({
          settings: settings.confinement,
          hostDir: dir,
          sharedHostDir: settings.sharedDir,
          cgroupName: `${rootKey(settings.root)}-${slot.id}`,
          egressHostDir: egressDir,
          ...(settings.chromiumPolicyDir ? { chromiumPolicyDir: settings.chromiumPolicyDir } : {}),
          timeoutMs: settings.startTimeoutMs,
        })));
        // The route listens on a socket only the session uid reaches; the sandbox relays to it.
        parts.add(egressPart(await startEgressRoute({ ...egressOptions, socketPath: join(egressDir, 'egress.sock'), socketOwner: sandbox.uid! })));
      } else {
        const egress = parts.add(egressPart(await startEgressRoute(egressOptions)));
        parts.add(sandboxPart(await openHostSandbox(dir, egress.proxyUrl)));
      }
      const display = parts.add(displayPart(await startDisplay({ sandbox: slot.sandbox, width: shape.width, height: shape.height, layout: shape.layout, startTimeoutMs: settings.startTimeoutMs })));
      if (settings.video) parts.add(videoPart(new SessionVideo(display, settings.video)));
      // Sound after the display, before the browser (which is given its server); never fails the slot.
      const sound = await startSessionSound(slot.sandbox, settings.sound, { timeoutMs: settings.startTimeoutMs, ...(settings.warn ? { warn: settings.warn } : {}) });
      if (sound) parts.add(soundPart(sound));
      await slot.record();
      return slot;
    } catch (error) {
      await parts.stop();
      await killMarkedProcesses({ dir });
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * A warm slot taken by a session: its route's refusals in the session's language, its traffic
   * through the session's exit (or straight out), its display in the session's keyboard layout.
   */
  async handOut(choices: { language: string; layout: string; upstreamProxyUrl: string | undefined }): Promise<void> {
    this.egress.setLanguage(choices.language);
    this.egress.setUpstream(choices.upstreamProxyUrl);
    if (this.display.layout !== choices.layout) await this.display.setLayout(choices.layout);
  }

  /** Adds the browser once its process runs (its DevTools control follows), and records it. */
  async addBrowser(browser: BrowserPart): Promise<BrowserPart> {
    const value = this.parts.add(browserPart(browser));
    // Unconfined, DevTools listens on the host's own loopback, where another session's page could
    // read its tabs: one of the engine's ports until the slot stops. Confined, it is the session's
    // loopback (a unix socket on the host), which no route reaches.
    const url = browser.process.devtoolsUrl;
    const devtools = url?.startsWith('ws://') ? portOfUrl(url) : undefined;
    if (devtools !== undefined) this.forgetDevToolsPort = this.settings.enginePorts?.add(devtools) ?? this.forgetDevToolsPort;
    // Firefox's remote agent likewise (decisions.md 143).
    const bidi = browser.process.bidi?.url.startsWith('ws://') ? portOfUrl(browser.process.bidi.url) : undefined;
    if (bidi !== undefined) this.forgetBiDiPort = this.settings.enginePorts?.add(bidi) ?? this.forgetBiDiPort;
    await this.record();
    return value;
  }

  stop(): Promise<void> {
    this.stopped ??= this.end();
    return this.stopped;
  }

  private async end(): Promise<void> {
    this.settings.onStop?.(this);
    await this.parts.stop();
    this.forgetDevToolsPort();
    this.forgetBiDiPort();
    // Crash handlers and other detached helpers carry the session marker; end them too.
    await killMarkedProcesses({ dir: this.dir });
    await rm(this.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  }

  /** Written so that a later run can find this session's display and processes after a crash. */
  private async record(): Promise<void> {
    await writeRuntimeRecord(this.dir, { id: this.id, confined: this.sandbox.confined, displayNumber: this.display.number, pids: this.parts.pids() });
  }
}
