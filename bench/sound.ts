// `npm run bench -- sound`: what a session's sound costs (issue 22). Confined Chromium sessions at
// a page that plays a 440 Hz tone, three ways, interleaved in one run: without sound (`sound:
// false`), with its sound server and no listener, and with one listener (the encoder running):
// memory (PSS of every process of the session) and CPU (per cent of one core, every process of the
// session over a window), plus the listener's first-packet delay and bytes per second.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findMarkedProcesses } from '../src/engine/runtime/sandbox/processes.js';
import { SessionRuntime, type RuntimeSession } from '../src/engine/runtime/runtime.js';
import { percentile, report } from './stats.js';

const TONE_PAGE = `<!doctype html><title>tone</title><script>addEventListener('load', function () {
  var context = new AudioContext({ sampleRate: 48000 }), tone = context.createOscillator(), gain = context.createGain();
  gain.gain.value = 0.5; tone.frequency.value = 440; tone.connect(gain).connect(context.destination); tone.start();
});</script><body>tone</body>`;
const rounds = Number(process.env.RBK_BENCH_SAMPLES ?? 3);
const WINDOW_MS = 10_000;
const TICKS_PER_SECOND = 100;

type Condition = 'no sound' | 'sound, no listener' | 'sound, one listener';

/** What a process of the session is, by its executable (Chromium's type where it has one). */
async function kind(pid: number): Promise<string> {
  const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split(/[\0 ]/);
  const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const type = flag('type');
  const subType = flag('utility-sub-type');
  const executable = (args[0] ?? '?').split('/').pop()!;
  return type ? `${executable} ${type}${subType ? ` ${subType}` : ''}` : executable;
}

/** Every live process of the session: its kind, PSS (MB) and CPU ticks so far. */
async function sample(session: RuntimeSession): Promise<Map<number, { kind: string; mb: number; ticks: number }>> {
  const found = new Map<number, { kind: string; mb: number; ticks: number }>();
  for (const p of await findMarkedProcesses({ dir: session.dir })) {
    if (p.zombie) continue;
    const [rollup, stat] = await Promise.all([readFile(`/proc/${p.pid}/smaps_rollup`, 'utf8').catch(() => ''), readFile(`/proc/${p.pid}/stat`, 'utf8').catch(() => '')]);
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    found.set(p.pid, { kind: await kind(p.pid), mb: Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) / 1024, ticks: Number(fields[11] ?? 0) + Number(fields[12] ?? 0) });
  }
  return found;
}

interface Figures {
  memoryMb: number;
  cpuPercent: number;
  byKind: Map<string, { mb: number; cpuPercent: number }>;
}

/** Memory now and CPU over the window, for the session's processes that lived through it. */
async function measureSession(session: RuntimeSession): Promise<Figures> {
  const before = await sample(session);
  const started = performance.now();
  await new Promise((r) => setTimeout(r, WINDOW_MS));
  const after = await sample(session);
  const seconds = (performance.now() - started) / 1000;
  const byKind = new Map<string, { mb: number; cpuPercent: number }>();
  let memoryMb = 0;
  let cpuPercent = 0;
  for (const [pid, now] of after) {
    const cpu = (100 * (now.ticks - (before.get(pid)?.ticks ?? now.ticks))) / TICKS_PER_SECOND / seconds;
    memoryMb += now.mb;
    cpuPercent += cpu;
    const entry = byKind.get(now.kind) ?? { mb: 0, cpuPercent: 0 };
    byKind.set(now.kind, { mb: entry.mb + now.mb, cpuPercent: entry.cpuPercent + cpu });
  }
  return { memoryMb, cpuPercent, byKind };
}

export async function soundBench(): Promise<void> {
  const site = createServer((request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(TONE_PAGE));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  const root = await mkdtemp(join(tmpdir(), 'rbk-bench-sound-'));
  const egress = { allow: ['127.0.0.1/32'] };
  const { runtime: silent } = await SessionRuntime.open({ root: join(root, 'silent'), egress, sound: false });
  const { runtime: sounding } = await SessionRuntime.open({ root: join(root, 'sound'), egress });
  const spec = { browser: 'chromium', url, language: 'en', layout: 'us' };
  const results = new Map<Condition, Figures[]>();
  const firstPacketMs: number[] = [];
  const bytesPerSecond: number[] = [];
  try {
    // Warm the page cache once, so the first round is not the slow one.
    await sounding.stopSession((await sounding.startSession(spec)).id);
    for (let round = 0; round < rounds; round++) {
      for (const condition of ['no sound', 'sound, no listener', 'sound, one listener'] as Condition[]) {
        const runtime = condition === 'no sound' ? silent : sounding;
        const session = await runtime.startSession(spec);
        await new Promise((r) => setTimeout(r, 2000));
        const stream = condition === 'sound, one listener' ? session.sound!.listen() : null;
        let bytes = 0;
        if (stream) {
          const listened = performance.now();
          await new Promise<void>((resolve) => stream.once('packet', () => resolve()));
          firstPacketMs.push(performance.now() - listened);
          stream.on('packet', (packet) => (bytes += packet.length));
          await new Promise((r) => setTimeout(r, 1000));
          bytes = 0;
        }
        const started = performance.now();
        const figures = await measureSession(session);
        if (stream) bytesPerSecond.push(bytes / ((performance.now() - started) / 1000));
        stream?.close();
        results.set(condition, [...(results.get(condition) ?? []), figures]);
        await runtime.stopSession(session.id);
      }
    }
  } finally {
    await Promise.all([silent.close(), sounding.close()]);
    site.close();
    await rm(root, { recursive: true, force: true });
  }
  for (const [condition, figures] of results) {
    const extra = { condition, samples: figures.length, page: '440 Hz WebAudio tone', window_s: WINDOW_MS / 1000 };
    report('sound', 'memory_mb_per_session', percentile(figures.map((f) => f.memoryMb), 50), 'MB', { ...extra, measure: 'PSS of every process of the session, median' });
    report('sound', 'cpu_percent_per_session', percentile(figures.map((f) => f.cpuPercent), 50), '% of a core', { ...extra, measure: 'every process of the session, median' });
    // Where it goes, process by process (the browser, its audio service, the sound server, the encoder).
    for (const part of new Set(figures.flatMap((f) => [...f.byKind.keys()]))) {
      const mine = figures.map((f) => f.byKind.get(part)).filter((x) => x !== undefined);
      report('sound', 'memory_mb_by_process', percentile(mine.map((m) => m.mb), 50), 'MB', { ...extra, process: part });
      report('sound', 'cpu_percent_by_process', percentile(mine.map((m) => m.cpuPercent), 50), '% of a core', { ...extra, process: part });
    }
  }
  report('sound', 'first_packet_ms_p50', percentile(firstPacketMs, 50), 'ms', { samples: firstPacketMs.length, measure: 'listen() to the first Opus packet (the encoder starts)' });
  report('sound', 'listener_kbit_per_s', (percentile(bytesPerSecond, 50) * 8) / 1000, 'kbit/s', { samples: bytesPerSecond.length, measure: 'Opus packets only (no Ogg, no WebSocket framing)' });
}
