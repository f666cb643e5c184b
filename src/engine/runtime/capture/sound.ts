// The session's sound: a PulseAudio of its own, inside the session's confinement, with one null
// sink that the browser plays into, and an Opus encoder that runs only while someone listens
// (docs/architecture.md, "sound"). The sound server runs as the session uid in its namespaces,
// under the exec guard and within its caps; its socket exists only in the session's own /session.
// Nothing here ends the session: a sound server that dies takes the sound away, not the picture.
// While only recordings listen and nothing plays, the sink is suspended and the encoder rests
// (sound-pause.ts, decisions.md 119).
import { EventEmitter } from 'node:events';
import { lstat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { SessionSandbox } from '../sandbox/confinement.js';
import { Audience } from './audience.js';
import { canPauseSound, SoundPause } from './sound-pause.js';
import { OggOpusReader } from './ogg-opus.js';
import { signalProcess, withTimeout, type SupervisedProcess } from '../sandbox/processes.js';
import type { SoundFormat } from '../../../protocol/sound.js';

export interface SoundSettings {
  /** The Opus encoder's target bit rate (kbit/s); 64 carries speech and music well at 48 kHz stereo. */
  bitrateKbps: number;
  /**
   * While only recordings listen and nothing plays into the sink, it is suspended and the encoder
   * rests until a stream appears or a person listens (sound-pause.ts, decisions.md 119).
   */
  pauseWhenSilent: boolean;
}

export const DEFAULT_SOUND: SoundSettings = { bitrateKbps: 64, pauseWhenSilent: true };

/** What every listener is told first (the sound channel's wire contract, src/protocol/sound.ts), then one packet per message. */
/** 10 ms frames: a sound is in a packet 10 ms sooner than with Opus's usual 20 ms, for about 7 % more bytes (docs/benchmarks.md). */
export const SOUND_FORMAT: Readonly<SoundFormat> = { codec: 'opus', sampleRate: 48000, channels: 2, frameMs: 10 };

/** How long an encoder's end waits to see whether the sound server went too (then that is the reason given). */
const ENCODER_EXIT_GRACE_MS = 250;
const PULSEAUDIO = '/usr/bin/pulseaudio';
const FFMPEG = '/usr/bin/ffmpeg';
/** The sound server's directory in the session (0700, the session uid's; made by PulseAudio itself). */
const SOUND_DIR = '.sound';
/** The null sink the browser plays into; its monitor is what listeners hear. */
const SINK = 'out';
// sun_path is 108 bytes on Linux.
const MAX_SOCKET_PATH = 107;

/** Whether this host has what session sound needs; `missing` names the packages. */
export function probeSound(): { available: boolean; missing: string[] } {
  const missing = [
    [PULSEAUDIO, 'pulseaudio'],
    [FFMPEG, 'ffmpeg'],
  ].filter(([file]) => !existsSync(file!)).map(([, pkg]) => `apt-get install -y ${pkg}`);
  return { available: missing.length === 0, missing };
}

/** One listener's packets, from the moment it listens until it closes or the sound ends. */
export class SoundStream extends EventEmitter<{ packet: [Buffer]; end: [string] }> {
  readonly format: Readonly<SoundFormat> = SOUND_FORMAT;
  private ended = false;

  constructor(
    private readonly leave: (stream: SoundStream) => void,
    /** Whether a recording listens through this stream, not a person (the encoder may rest while nothing plays). */
    readonly forRecording = false,
  ) {
    super();
  }

  /** Stops listening; the last listener to leave stops the encoder. */
  close(): void {
    this.finish('closed by the listener');
  }

  /** @internal Called by the session's sound. */
  deliver(packet: Buffer): void {
    if (!this.ended) this.emit('packet', packet);
  }

  /** @internal Called by the session's sound; `end` is emitted once, with the reason. */
  finish(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.leave(this);
    this.emit('end', reason);
    this.removeAllListeners('packet');
  }

  get closed(): boolean {
    return this.ended;
  }
}

/** A running session's sound: the browser plays into it, listeners hear it as Opus packets. */
export class SessionSound extends EventEmitter<{ lost: [string] }> {
  /** For the browser: where it finds the session's sound server. */
  readonly clientEnv: NodeJS.ProcessEnv;
  /** Who listens: the first starts the encoder, the last one out stops it (audience.ts). */
  private readonly audience = new Audience<SoundStream>({
    start: () => this.startEncoder(),
    stop: () => this.stopEncoder(),
    joined: (stream) => {
      if (stream.forRecording) this.pause?.start();
      // A person hears at once: the sink runs while one listens.
      else this.pause?.wake();
    },
  });
  /** Rests the encoder while only recordings listen and nothing plays (null when the settings keep it running). */
  private readonly pause: SoundPause | null;
  private encoder: SupervisedProcess | null = null;
  /** Whether the encoder in use has put out sound yet: it rests only once it is up (a rest before would hold its start back). */
  private encoderFlowing = false;
  private stopped = false;
  /** Set once the sound server is gone while the session runs: why there is no sound. */
  lostReason: string | null = null;

  constructor(
    private readonly sandbox: SessionSandbox,
    readonly server: SupervisedProcess,
    readonly socketPath: string,
    private readonly settings: SoundSettings,
  ) {
    super();
    // A 10 ms playback buffer for the browser's stream (libpulse reads PULSE_LATENCY_MSEC): its
    // own default held about 52 ms before the encoder could see a sound; 10 ms (with Chromium's
    // 256-frame buffers) measured 22 ms (docs/benchmarks.md, "Sound under 100 ms").
    this.clientEnv = { PULSE_SERVER: `unix:${socketPath}`, PULSE_LATENCY_MSEC: '10' };
    this.pause = settings.pauseWhenSilent && canPauseSound()
      ? new SoundPause(sandbox, SINK, this.clientEnv, () => this.encoderFlowing && [...this.audience].every((stream) => stream.forRecording))
      : null;
    void server.exited.then(({ code, signal }) => {
      if (this.stopped) return;
      this.lostReason = `the sound server exited (${signal ?? `code ${code}`}); the session goes on without sound`;
      this.audience.close(this.lostReason);
      this.emit('lost', this.lostReason);
    });
  }

  /** How many listen now: each gets every packet. */
  get listening(): number {
    return this.audience.size;
  }

  /**
   * Whether the encoder rests now (only recordings listen, nothing plays: the sink is suspended),
   * and how often it rested: the recorder fills each rest with silence.
   */
  get silentPauses(): { paused: boolean; count: number } {
    return { paused: this.pause?.isPaused ?? false, count: this.pause?.pauses ?? 0 };
  }

  /** Whether the encoder rested at any moment after `time` (performance.now()): a hole in its output since is a rest, all silence. */
  restedSince(time: number): boolean {
    return this.pause?.restedSince(time) ?? false;
  }

  /** The encoder process while someone listens, else null (no listener: nothing is encoded). */
  get encoderProcess(): SupervisedProcess | null {
    return this.encoder;
  }

  /**
   * A new listener. The first one starts the encoder; each gets every packet from now on. When
   * the sound is gone (the server died, the session stopped) the stream ends at once, saying why.
   */
  listen(options: { forRecording?: boolean } = {}): SoundStream {
    const leave = (leaving: SoundStream) => {
      this.audience.leave(leaving);
      this.pause?.recheck();
    };
    return this.audience.join(new SoundStream(leave, options.forRecording ?? false));
  }

  /** The session is ending: every listener is told, the encoder stops, no one new may listen. */
  close(): void {
    this.stopped = true;
    this.audience.close('the session has ended');
  }

  /** Ends the listeners and the sound server (the session's sandbox ends every process anyway). */
  async stop(): Promise<void> {
    this.close();
    signalProcess(this.server, 'SIGKILL');
    await this.server.exited;
  }

  private startEncoder(): void {
    const encoder = this.sandbox.spawn('sound-encoder', FFMPEG, encoderArguments(this.settings), {
      env: { ...this.sandbox.env, ...this.clientEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
      mayRun: [],
    });
    this.encoder = encoder;
    this.encoderFlowing = false;
    const reader = new OggOpusReader();
    encoder.child.stdout!.on('data', (chunk: Buffer) => {
      if (this.encoder !== encoder) return;
      let packets: Buffer[];
      try {
        packets = reader.push(chunk);
      } catch (error) {
        this.audience.endAll((error as Error).message);
        return;
      }
      if (packets.length > 0 && !this.encoderFlowing) {
        this.encoderFlowing = true;
        this.pause?.recheck();
      }
      for (const packet of packets) for (const stream of this.audience) stream.deliver(packet);
    });
    encoder.child.once('error', () => undefined);
    void encoder.exited.then(async ({ code, signal }) => {
      // Stopped on purpose (the last listener left), or replaced: nothing to say.
      if (this.encoder !== encoder) return;
      // The sound server dying ends its encoder's input first: its listeners hear that reason (the
      // server's exit may be seen a moment after the encoder's).
      await Promise.race([this.server.exited, delay(ENCODER_EXIT_GRACE_MS)]);
      if (this.encoder !== encoder) return;
      this.encoder = null;
      this.audience.endAll(`the sound encoder exited (${signal ?? `code ${code}`})${encoder.stderrTail() ? `: ${encoder.stderrTail()}` : ''}`);
    });
  }

  private stopEncoder(): void {
    this.pause?.stop();
    const encoder = this.encoder;
    if (!encoder) return;
    this.encoder = null;
    signalProcess(encoder, 'SIGKILL');
  }
}

/**
 * ffmpeg reading the sink's monitor and writing Ogg Opus to its stdout: 48 kHz stereo, 10 ms
 * frames, the low-delay mode (CELT only: about 5 ms less delay than the default's speech modes),
 * a page closed after every packet and flushed at once. The pulse
 * input reads in 5 ms fragments (its default is far larger, which would hold sound back).
 */
function encoderArguments(settings: SoundSettings): string[] {
  return [
    '-hide_banner', '-loglevel', 'error', '-nostdin',
    '-fflags', 'nobuffer', '-probesize', '32', '-analyzeduration', '0',
    '-f', 'pulse', '-sample_rate', String(SOUND_FORMAT.sampleRate), '-channels', String(SOUND_FORMAT.channels),
    '-fragment_size', String((SOUND_FORMAT.sampleRate / 200) * SOUND_FORMAT.channels * 2),
    '-i', `${SINK}.monitor`,
    // Each frame's time counted in samples: the pulse input stamps a frame with the clock less the
    // stream's latency, which runs backwards for a while after the sink was suspended, and the
    // encoder then held its output back (0.6 s) before catching up in a burst (decisions.md 119).
    '-af', 'asetpts=N/SR/TB',
    '-c:a', 'libopus', '-application', 'lowdelay', '-frame_duration', String(SOUND_FORMAT.frameMs), '-b:a', `${settings.bitrateKbps}k`,
    // Constrained VBR keeps a listener's rate near the target; free VBR spent 90 kbit/s on a pure tone.
    '-vbr', 'constrained',
    '-f', 'ogg', '-page_duration', String(SOUND_FORMAT.frameMs * 1000), '-flush_packets', '1',
    'pipe:1',
  ];
}

export interface SoundStart {
  sandbox: SessionSandbox;
  settings: SoundSettings;
  timeoutMs?: number;
}

/**
 * Starts the session's sound server and resolves once its socket is there. PulseAudio runs with
 * no configuration script of its own (`-n`): only the native protocol on the session's socket
 * (anonymous: the socket is reachable only inside the session, in a 0700 directory of its uid)
 * and the null sink; no realtime or D-Bus helpers, no module loading by clients afterwards, no
 * exit on idle. It executes nothing (`mayRun: []`).
 */
export async function startSound(options: SoundStart): Promise<SessionSound> {
  const { sandbox } = options;
  const dir = join(sandbox.dir, SOUND_DIR);
  const socketPath = join(dir, 'native');
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    // Named by the directory all sessions share, so the operator is told once, not once per session.
    throw new Error(`session directories under ${dirname(sandbox.hostDir)} are too long for the sound server's socket: choose a shorter data directory`);
  }
  const server = sandbox.spawn(
    'pulseaudio',
    PULSEAUDIO,
    [
      '--daemonize=no', '--system=no', '-n', '--use-pid-file=no',
      '--exit-idle-time=-1', '--disallow-exit', '--realtime=no', '--high-priority=no',
      '--log-target=stderr', '--log-level=error',
      `--load=module-native-protocol-unix auth-anonymous=1 socket=${socketPath}`,
      `--load=module-null-sink sink_name=${SINK} rate=${SOUND_FORMAT.sampleRate} channels=${SOUND_FORMAT.channels}`,
      '--disallow-module-loading',
    ],
    {
      env: { ...sandbox.env, XDG_RUNTIME_DIR: dir, PULSE_RUNTIME_PATH: dir, PULSE_STATE_PATH: join(dir, 'state') },
      stdio: ['ignore', 'ignore', 'pipe'],
      mayRun: [],
      part: true,
    },
  );
  server.child.once('error', () => undefined);
  let exited = false;
  void server.exited.then(() => (exited = true));
  const ready = async () => {
    // The engine only looks whether the socket is there; it never opens it.
    for (;;) {
      if (exited) throw new Error(`the sound server exited during start: ${server.stderrTail() || 'no output'}`);
      if (await lstat(sandbox.hostPath(socketPath)).then(() => true, () => false)) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  try {
    await withTimeout(ready(), options.timeoutMs ?? 10_000, 'the sound server start');
  } catch (error) {
    signalProcess(server, 'SIGKILL');
    await server.exited;
    throw error;
  }
  return new SessionSound(sandbox, server, socketPath, options.settings);
}

/** Sound servers that could not start, by reason: an operator is told once per reason, not per session. */
const reportedFailures = new Set<string>();

/**
 * The session's sound part, as the runtime starts it after the display: null when the operator
 * turned sound off (no sound process at all), or when it cannot start here; the session then runs
 * without sound (the browser finds no server and plays into nothing), never fails for it.
 */
export async function startSessionSound(
  sandbox: SessionSandbox,
  settings: Partial<SoundSettings> | false | undefined,
  options: { timeoutMs?: number; warn?: (message: string) => void } = {},
): Promise<SessionSound | null> {
  if (settings === false) return null;
  const probe = probeSound();
  if (!probe.available) return null;
  try {
    return await startSound({ sandbox, settings: { ...DEFAULT_SOUND, ...settings }, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) });
  } catch (error) {
    const reason = (error as Error).message;
    if (!reportedFailures.has(reason)) {
      reportedFailures.add(reason);
      (options.warn ?? ((message) => console.warn(`remote-browser-kit: ${message}`)))(`sessions run without sound: ${reason}`);
    }
    return null;
  }
}
