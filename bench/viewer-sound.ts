// The sound part of `npm run bench -- viewer` (alone: `RBK_BENCH_VIEWER=sound`): a tone started
// by the remote page to the tone heard at the viewer, where the time goes (the engine's first
// packet, the viewer's player), and the sound channel's bytes while the page plays, while the
// viewer is muted, while the page is silent, and with nobody listening.
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Engine } from '../src/engine/engine.js';
import type { BrowserControl } from '../src/engine/runtime/browser/control.js';
import { findMarkedProcesses } from '../src/engine/runtime/sandbox/processes.js';
import { SoundStream } from '../src/engine/runtime/capture/sound.js';
import { percentile, report } from './stats.js';

/** What the viewer bench's `watch` gives the sound figures: a viewer page on a running session. */
export interface SoundWatched {
  page: Page;
  vmId: string;
  runtime: { control: BrowserControl | null; dir: string };
  /** The sound channel's bytes the viewer received so far. */
  soundBytes(): number;
  end(): Promise<void>;
}

export interface SoundBenchContext<W extends SoundWatched> {
  /** Opens a session at the bench site's `path` and its share link in `on`, with `initScript` in the viewer page. */
  watch(path: string, viewport: undefined, on: Browser, initScript: string): Promise<W>;
  engine: Engine;
  samples: number;
}

/**
 * In the viewer page: taps what the page sends to its speakers with an AnalyserNode, and notes
 * where the sound player schedules each frame of decoded sound (AudioBufferSourceNode.start).
 * `__armTone()` then resolves when the tone is first heard: the analyser's last 512 samples
 * (10.7 ms) hold a sample above 0.05, polled every millisecond or so; and the wall time the first
 * loud frame reaches the speakers by the page's own AudioContext clock (getOutputTimestamp).
 */
const HEARING_TAP = `(() => {
  const connect = AudioNode.prototype.connect;
  const start = AudioBufferSourceNode.prototype.start;
  let armed = null;
  window.__taps = [];
  AudioNode.prototype.connect = function (target, ...rest) {
    if (target instanceof AudioDestinationNode) {
      const analyser = this.context.createAnalyser();
      analyser.fftSize = 512;
      connect.call(this, analyser);
      window.__taps.push(analyser);
    }
    return connect.call(this, target, ...rest);
  };
  AudioBufferSourceNode.prototype.start = function (when, ...rest) {
    if (armed && !armed.outputAt && this.buffer && this.buffer.getChannelData(0).some((v) => Math.abs(v) > 0.05)) {
      const stamp = this.context.getOutputTimestamp();
      armed.outputAt = performance.timeOrigin + stamp.performanceTime + ((when ?? 0) - stamp.contextTime) * 1000;
      armed.decodedAt = performance.timeOrigin + performance.now();
      armed.leadMs = ((when ?? 0) - this.context.currentTime) * 1000;
    }
    return start.call(this, when, ...rest);
  };
  window.__armTone = () => new Promise((resolve) => {
    armed = { outputAt: 0, decodedAt: 0, leadMs: 0 };
    const wave = new Float32Array(512);
    const armedAt = performance.now();
    const poll = () => {
      const analyser = window.__taps.at(-1);
      if (analyser) {
        analyser.getFloatTimeDomainData(wave);
        if (wave.some((v) => Math.abs(v) > 0.05)) {
          const heardAt = performance.timeOrigin + performance.now();
          const wait = () => armed.outputAt || performance.now() - armedAt > 10000 ? resolve({ heardAt, outputAt: armed.outputAt, decodedAt: armed.decodedAt, leadMs: armed.leadMs }) : setTimeout(wait, 5);
          return wait();
        }
      }
      if (performance.now() - armedAt > 10000) return resolve({ heardAt: 0, outputAt: 0, decodedAt: 0, leadMs: 0 });
      setTimeout(poll, 1);
    };
    poll();
  });
})()`;

/**
 * The session's sound as a viewer hears it, on the '/tone' page: the tone started by the remote
 * page (its gain turned up through DevTools, the time taken in the remote page) to the tone
 * heard at the viewer (HEARING_TAP), `samples * 2` times, 1.5 s of silence between; then the
 * sound channel's bytes over 5 s each: the page playing, the page silent, the viewer muted
 * (not listening: Mute closes the sound connection), and nobody listening (counted in the engine, at each listener's packets).
 */
export async function soundFigures<W extends SoundWatched>({ watch, engine, samples }: SoundBenchContext<W>): Promise<void> {
  // A second viewer browser that plays sound (Playwright mutes Chromium by default), without a gesture first.
  const hearing = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    ignoreDefaultArgs: ['--mute-audio'],
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--autoplay-policy=no-user-gesture-required'],
  });
  const tone = await watch('/tone', undefined, hearing, HEARING_TAP);
  const remote = tone.runtime.control!;
  await tone.page.waitForSelector('.rbk-viewer__sound[data-sound="playing"]', { timeout: 15_000 });
  const deadline = Date.now() + 10_000;
  while ((await remote.evaluate('window.level ? level.context.state : "loading"')) !== 'running') {
    if (Date.now() > deadline) throw new Error("the remote page's AudioContext does not run");
    await tone.page.waitForTimeout(100);
  }
  await tone.page.waitForTimeout(1500);

  // In the engine: every listener's packets (bytes, all listeners together), and when the first
  // packet of sound arrives after the tone was turned up (the encoder's packets of silence are a
  // few bytes, the tone's about 160).
  let delivered = 0;
  let loudAt = 0;
  let waitingForLoud = false;
  const deliver = SoundStream.prototype.deliver;
  SoundStream.prototype.deliver = function (this: SoundStream, packet: Buffer) {
    delivered += packet.length;
    if (waitingForLoud && packet.length > 40) {
      waitingForLoud = false;
      loudAt = Date.now();
    }
    return deliver.call(this, packet);
  };
  try {
    const heard: number[] = [];
    const output: number[] = [];
    const atEngine: number[] = [];
    /** To the viewer's player scheduling the first loud frame (decoded), and how far ahead of its clock it scheduled it. */
    const decoded: number[] = [];
    const leads: number[] = [];
    for (let i = 0; i < samples * 2; i++) {
      await tone.page.evaluate('window.__heard = window.__armTone(), undefined');
      [waitingForLoud, loudAt] = [true, 0];
      const startedAt = Number(await remote.evaluate('level.gain.value = 0.5, performance.timeOrigin + performance.now()'));
      const sample = (await tone.page.evaluate('window.__heard')) as { heardAt: number; outputAt: number; decodedAt: number; leadMs: number };
      await remote.evaluate('level.gain.value = 0');
      if (!sample.heardAt) console.log(JSON.stringify({ bench: 'viewer', warning: 'a tone was not heard at the viewer within 10 s (sample left out)' }));
      else {
        heard.push(sample.heardAt - startedAt);
        if (sample.outputAt) output.push(sample.outputAt - startedAt);
        if (loudAt) atEngine.push(loudAt - startedAt);
        if (sample.decodedAt) decoded.push(sample.decodedAt - startedAt);
        if (sample.decodedAt) leads.push(sample.leadMs);
      }
      await tone.page.waitForTimeout(1500);
    }
    const latencies = (expression: string) => tone.page.evaluate(expression).then(Number);
    const viewerOutputMs = await latencies('(() => { const c = window.__taps.at(-1).context; return (c.baseLatency + (c.outputLatency || 0)) * 1000; })()');
    const remoteOutputMs = Number(await remote.evaluate('(level.context.baseLatency + (level.context.outputLatency || 0)) * 1000'));
    const toneFigures = { samples: heard.length, remoteBrowser: 'chromium', measured: "remote page turns its 440 Hz tone up (its clock) -> the viewer's analyser holds the tone (10.7 ms window, polled about every ms)" };
    report('viewer', 'audio_latency_ms_p50', percentile(heard, 50), 'ms', { ...toneFigures, min: Math.round(Math.min(...heard)), max: Math.round(Math.max(...heard)) });
    report('viewer', 'audio_latency_ms_p95', percentile(heard, 95), 'ms', toneFigures);
    report('viewer', 'audio_latency_to_output_ms_p50', percentile(output, 50), 'ms', { samples: output.length, measured: "remote page turns the tone up -> the viewer's first loud frame at its speakers, by the viewer's AudioContext.getOutputTimestamp()" });
    report('viewer', 'audio_latency_to_engine_ms_p50', percentile(atEngine, 50), 'ms', { samples: atEngine.length, measured: "remote page turns the tone up -> the engine hands the first packet of the tone to the listener (the remote browser's output, PulseAudio, the encoder)" });
    console.log(JSON.stringify({ bench: 'viewer', detail: 'audio_latency_samples', heard: heard.map(Math.round), output: output.map(Math.round), atEngine: atEngine.map(Math.round), decoded: decoded.map(Math.round), playerLeadMs: leads.map(Math.round), remoteOutputLatencyMs: Math.round(remoteOutputMs * 10) / 10, viewerOutputLatencyMs: Math.round(viewerOutputMs * 10) / 10 }));

    const window = async (): Promise<{ viewer: number; engine: number }> => {
      await tone.page.waitForTimeout(1000);
      const [viewerBefore, engineBefore] = [tone.soundBytes(), delivered];
      await tone.page.waitForTimeout(5000);
      return { viewer: (tone.soundBytes() - viewerBefore) / 5, engine: (delivered - engineBefore) / 5 };
    };
    await remote.evaluate('level.gain.value = 0.5');
    const playing = await window();
    report('viewer', 'audio_bytes_per_s', playing.viewer, 'B/s', { page: '440 Hz tone playing', listeners: 1, engineSide: playing.engine });
    const mute = tone.page.getByRole('button', { name: 'Mute', exact: true });
    await mute.click();
    const muted = await window();
    report('viewer', 'audio_bytes_per_s', muted.viewer, 'B/s', { page: '440 Hz tone playing, viewer muted (not listening)', listeners: 1, engineSide: muted.engine });
    await mute.click();
    await remote.evaluate('level.gain.value = 0');
    const silent = await window();
    report('viewer', 'audio_bytes_per_s', silent.viewer, 'B/s', { page: 'silent (the tone at gain 0)', listeners: 1, engineSide: silent.engine });

    // Nobody listens: the viewer goes; the page plays its tone on.
    await remote.evaluate('level.gain.value = 0.5');
    await tone.page.close();
    const sound = engine.sessions.endsOf(tone.vmId)!.sound!;
    while (sound.listening > 0) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 1000));
    const before = delivered;
    await new Promise((r) => setTimeout(r, 5000));
    const encoders = (await findMarkedProcesses({ dir: tone.runtime.dir })).filter((p) => !p.zombie && /ffmpeg/.test(p.command.split(' ')[0] ?? '')).length;
    report('viewer', 'audio_bytes_per_s', (delivered - before) / 5, 'B/s', { page: '440 Hz tone playing', listeners: 0, measured: 'in the engine, packets handed to listeners', encoderProcesses: encoders });
  } finally {
    SoundStream.prototype.deliver = deliver;
    await tone.end();
    await hearing.close();
  }
}
