// `RBK_BENCH_RECORDING=serve-hour npm run bench -- recording` (issue 47, "Measured"): the time to
// serve a 1-hour recording's timeline and media through the API, as a customer would. A real engine
// (on the fake runtime: nothing here needs a browser) with a plan that records; a session created
// with `record: true`; in its recording's directory a synthesized hour: a Matroska file (H.264
// 1280x720 30 fps and Opus, a 20 s ffmpeg test picture repeated by stream copy to 3,600 s, so it is
// made in a minute on a loaded machine; `RBK_BENCH_RECORDING_MEDIA=<file.mkv>` uses a file of one's
// own instead), its `.closed` and `.start` marks, and a timeline of a navigation every 5 s with its
// title (720 of each); then the session ends. Timed, 3 runs each: `GET /v8/vm/recording` (the
// timeline) and `GET /v8/vm/recording/media` whole (the first converts to MP4, later ones are served
// from the MP4 made), a Range request for the last 1 MB, and `/healthz` during the first media request.
import { execFile } from 'node:child_process';
import { statSync, utimesSync, writeFileSync } from 'node:fs';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_PLANS } from '../src/engine/config.js';
import { createEngine } from '../src/engine/engine.js';
import { RECORDING_CLOSED, RECORDING_MEDIA, RECORDING_START, RECORDING_TIMELINE } from '../src/engine/runtime/index.js';
import { FakeRuntime } from '../test/helpers/fake-runtime.js';
import { report } from './stats.js';

const HOUR_S = 3600;
const NAVIGATION_EVERY_S = 5;
const RUNS = 3;
const LAST_BYTES = 1024 * 1024;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (value: number) => Math.round(value * 10) / 10;
const run = promisify(execFile);
const load = () => Math.round(loadavg()[0]! * 10) / 10;

/**
 * A 1-hour Matroska file like a recorder's (H.264 and Opus), made by stream-copying a short encoded
 * piece; made while the engine runs, so never blocking its event loop.
 */
async function synthesizeHour(dir: string): Promise<{ path: string; makeMs: number }> {
  const own = process.env.RBK_BENCH_RECORDING_MEDIA;
  const began = performance.now();
  const path = join(dir, 'hour.mkv');
  if (own) {
    await copyFile(own, path);
  } else {
    const piece = join(dir, 'piece.mkv');
    await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=30', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-t', '20', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '60', '-b:v', '400k', '-c:a', 'libopus', '-b:a', '32k', piece]);
    await run('ffmpeg', ['-v', 'error', '-y', '-stream_loop', '-1', '-i', piece, '-map', '0', '-c', 'copy', '-t', String(HOUR_S), path]);
  }
  return { path, makeMs: performance.now() - began };
}

/** An hour's timeline as timeline.ts writes it: a navigation every 5 s, each followed by its title. */
function hourTimeline(startedAt: number): string {
  const lines: string[] = [];
  for (let n = 0; n < HOUR_S / NAVIGATION_EVERY_S; n++) {
    const at = startedAt + n * NAVIGATION_EVERY_S * 1000;
    const url = `https://docs.example.com/guide/section-${n}/page`;
    lines.push(JSON.stringify({ time: new Date(at).toISOString(), type: 'navigation', tab: 't1', url }));
    lines.push(JSON.stringify({ time: new Date(at + 300).toISOString(), type: 'title', tab: 't1', url, title: `Guide, section ${n}: an ordinary page title` }));
  }
  return `${lines.join('\n')}\n`;
}

export async function serveHourBench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'rbk-bench-recording-hour-'));
  const loads = [load()];
  const pro = DEFAULT_PLANS.find((plan) => plan.id === 'pro')!;
  const engine = await createEngine({
    dataDir: join(dir, 'data'),
    port: 0,
    runtime: new FakeRuntime(),
    config: { plans: [...DEFAULT_PLANS, { ...pro, id: 'recorded', name: 'Recorded', recording: true }], log: { level: 'warn' } },
  });
  try {
    const { apiKey } = await engine.accounts.create({ contact: 'bench@example.com', plans: ['recorded'] });
    const headers = { authorization: `Bearer ${apiKey.key}`, 'content-type': 'application/json' };
    const call = async (path: string, body?: unknown) => {
      const response = await fetch(`${engine.url}/v8${path}`, { method: body ? 'POST' : 'GET', headers, ...(body ? { body: JSON.stringify(body) } : {}) });
      return (await response.json()) as Record<string, any>;
    };
    const created = await call('/vm/create', { browser: 'chromium', url: 'https://docs.example.com/', record: true });
    if (created.status !== 'ok') throw new Error(`the session was not created: ${JSON.stringify(created)}`);
    const id = created.vmId as string;
    for (let row = await engine.store.session(id); row?.status !== 'running'; row = await engine.store.session(id)) await new Promise((r) => setTimeout(r, 50));

    // The hour, placed where the runtime's recorder and the timeline would have written it.
    const recording = engine.recordings.dirOf(id);
    const made = await synthesizeHour(dir);
    const media = join(recording, RECORDING_MEDIA);
    await copyFile(made.path, media);
    const startedAt = Date.now() - HOUR_S * 1000;
    writeFileSync(join(recording, RECORDING_START), new Date(startedAt).toISOString());
    writeFileSync(join(recording, RECORDING_TIMELINE), hourTimeline(startedAt), { mode: 0o600 });
    utimesSync(media, new Date(), new Date());
    writeFileSync(join(recording, RECORDING_CLOSED), '');
    const ended = await call('/vm/remove', { id });
    if (ended.status !== 'ok') throw new Error(`the session did not end: ${JSON.stringify(ended)}`);
    for (let info = await call(`/vm/recording?id=${id}`); info.recording?.state !== 'ended'; info = await call(`/vm/recording?id=${id}`)) await new Promise((r) => setTimeout(r, 50));
    loads.push(load());

    // The timeline, as a customer reads it.
    const timelineMs: number[] = [];
    let timelineBytes = 0;
    let entries = 0;
    for (let run = 0; run < RUNS; run++) {
      const began = performance.now();
      const response = await fetch(`${engine.url}/v8/vm/recording?id=${id}`, { headers });
      const body = await response.text();
      timelineMs.push(performance.now() - began);
      timelineBytes = Buffer.byteLength(body);
      entries = (JSON.parse(body) as { recording: { timeline: unknown[] } }).recording.timeline.length;
    }

    // The media whole: the first request converts; /healthz is timed meanwhile.
    const mediaMs: number[] = [];
    let mp4Bytes = 0;
    const healthMs: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const began = performance.now();
      const download = (async () => {
        const response = await fetch(`${engine.url}/v8/vm/recording/media?id=${id}`, { headers: { authorization: headers.authorization } });
        if (response.status !== 200) throw new Error(`the media answered ${response.status}: ${await response.text()}`);
        const firstByteMs = performance.now() - began;
        let bytes = 0;
        for await (const chunk of response.body!) bytes += (chunk as Uint8Array).byteLength;
        return { bytes, firstByteMs };
      })();
      let downloading = true;
      void download.finally(() => (downloading = false)).catch(() => undefined);
      if (run === 0) {
        while (downloading) {
          const asked = performance.now();
          const health = await fetch(`${engine.url}/healthz`);
          await health.arrayBuffer();
          healthMs.push(performance.now() - asked);
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      const { bytes, firstByteMs } = await download;
      mediaMs.push(performance.now() - began);
      mp4Bytes = bytes;
      if (run === 0) report('recording', 'serve-hour first media byte', firstByteMs, 'ms', { note: 'the conversion to MP4 is done before the first byte' });
    }
    loads.push(load());

    // The last 1 MB, as a player seeking to the end asks.
    const rangeMs: number[] = [];
    let rangeBytes = 0;
    for (let run = 0; run < RUNS; run++) {
      const began = performance.now();
      const response = await fetch(`${engine.url}/v8/vm/recording/media?id=${id}`, { headers: { authorization: headers.authorization, range: `bytes=-${LAST_BYTES}` } });
      if (response.status !== 206) throw new Error(`the range answered ${response.status}`);
      rangeBytes = (await response.arrayBuffer()).byteLength;
      rangeMs.push(performance.now() - began);
    }
    loads.push(load());

    const common = { load: loads, mkvBytes: statSync(media).size, mkvMadeMs: Math.round(made.makeMs) };
    report('recording', 'serve-hour timeline median', median(timelineMs), 'ms', { runsMs: timelineMs.map(ms), responseBytes: timelineBytes, entries, ...common });
    report('recording', 'serve-hour media whole, first (converts)', mediaMs[0]!, 'ms', { mp4Bytes, ...common });
    report('recording', 'serve-hour media whole median', median(mediaMs), 'ms', { runsMs: mediaMs.map(ms), mp4Bytes, ...common });
    report('recording', 'serve-hour media whole from the MP4 made (runs 2 on)', median(mediaMs.slice(1)), 'ms', { runsMs: mediaMs.slice(1).map(ms), mp4Bytes });
    report('recording', 'serve-hour media last 1 MB median', median(rangeMs), 'ms', { runsMs: rangeMs.map(ms), bytes: rangeBytes, ...common });
    report('recording', 'serve-hour healthz during the first media request median', healthMs.length ? median(healthMs) : Number.NaN, 'ms', { samples: healthMs.length, maxMs: ms(Math.max(...healthMs)) });
  } finally {
    await engine.close();
    await rm(dir, { recursive: true, force: true });
  }
}
