// `npm run bench -- recording` (issue 35): what recording a session costs, through a real engine and
// confined Chromium sessions, for three kinds of page: a still page, ordinary browsing (a new page
// of text every five seconds) and a 1280x720 30 fps clip. Each is run recorded and not recorded
// for the same time: the CPU of the session's processes (and of its video encoder and display
// apart) and of the engine (this process), the recording's bytes per minute, and the time from the
// session's end until its MP4 downloads. Recorded once more, in the same run, by an engine set as
// before a change, for the comparison: `RBK_BENCH_RECORDING_AGAINST=grab-running` (the default) keeps
// the grab running on a still screen (`video.pauseWhenStill: false`, as before decisions.md 118),
// `every-frame` encodes every frame grabbed (`video.dropUnchanged: false`, as before decisions.md 108),
// `sound-running` keeps the sound encoder encoding silence (`sound.pauseWhenSilent: false`, as before
// decisions.md 119), `both-running` both (as before decisions.md 118 and 119).
// `RBK_BENCH_RECORDING=serve-hour` instead times serving a 1-hour recording (recording-hour.ts).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../src/engine/engine.js';
import { DEFAULT_PLANS } from '../src/engine/config.js';
import { DEFAULT_SOUND, DEFAULT_VIDEO } from '../src/engine/runtime/index.js';
import { findMarkedProcesses } from '../src/engine/runtime/sandbox/processes.js';
import { serveHourBench } from './recording-hour.js';
import { report } from './stats.js';

const WINDOW_MS = Number(process.env.RBK_BENCH_RECORDING_SECONDS ?? 30) * 1000;
const AGAINST = (['every-frame', 'sound-running', 'both-running'] as const).find((name) => name === process.env.RBK_BENCH_RECORDING_AGAINST) ?? 'grab-running';
const TICKS = 100; // USER_HZ

const STILL = '<!doctype html><title>Still</title><body style="font:20px sans-serif"><h1>A still page</h1><p>Nothing moves here.</p>';
/** A page of text that goes on to the next one after five seconds, as a person reading would. */
const browsing = (n: number) => `<!doctype html><title>Page ${n}</title><body style="font:18px serif;margin:2em">${`<p>${'Paragraph of ordinary text to read. '.repeat(12)}</p>`.repeat(8)}<script>setTimeout(function(){location.href='/browse/${n + 1}'},5000)</script>`;
const CLIP = '<!doctype html><title>Clip</title><body style="margin:0;background:#000"><video src="/clip.webm" autoplay loop muted style="width:100vw;height:100vh;object-fit:contain"></video>';

type Part = 'video' | 'display' | 'sound' | 'other';

/** CPU seconds of the session's processes so far (those alive now), with the part each is. */
async function sessionCpu(dir: string): Promise<Map<number, { seconds: number; part: Part }>> {
  const cpu = new Map<number, { seconds: number; part: Part }>();
  for (const process of await findMarkedProcesses({ dir })) {
    try {
      const stat = readFileSync(`/proc/${process.pid}/stat`, 'utf8');
      const fields = stat.split(') ')[1]!.split(' ');
      const command = readFileSync(`/proc/${process.pid}/cmdline`, 'utf8');
      const part: Part = command.includes('x11grab') ? 'video' : stat.includes('(Xvnc)') ? 'display' : command.includes('pulse') ? 'sound' : 'other';
      cpu.set(process.pid, { seconds: (Number(fields[11]) + Number(fields[12])) / TICKS, part });
    } catch {
      // Gone meanwhile.
    }
  }
  return cpu;
}

const percent = (seconds: number) => Math.round((seconds / (WINDOW_MS / 1000)) * 1000) / 10;

export async function recordingBench(): Promise<void> {
  if (process.env.RBK_BENCH_RECORDING === 'serve-hour') return serveHourBench();
  const dir = await mkdtemp(join(tmpdir(), 'rbk-bench-recording-'));
  const clip = join(dir, 'clip.webm');
  execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=30', '-t', '20', '-c:v', 'libvpx', '-b:v', '3M', '-deadline', 'realtime', '-cpu-used', '8', clip]);
  const site = createServer((request, response) => {
    const url = request.url ?? '/';
    if (url === '/clip.webm') return void response.writeHead(200, { 'content-type': 'video/webm' }).end(readFileSync(clip));
    const html = url === '/still' ? STILL : url === '/clip' ? CLIP : url.startsWith('/browse/') ? browsing(Number(url.split('/')[2])) : null;
    if (!html) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const pro = DEFAULT_PLANS.find((plan) => plan.id === 'pro')!;
  const start = async (name: string, video: Partial<typeof DEFAULT_VIDEO>, sound: Partial<typeof DEFAULT_SOUND> = {}) => {
    const engine = await createEngine({
      dataDir: join(dir, `data-${name}`),
      port: 0,
      config: {
        egress: { allow: ['127.0.0.1/32'] },
        plans: [...DEFAULT_PLANS, { ...pro, id: 'recorded', name: 'Recorded', recording: true }],
        video: { ...DEFAULT_VIDEO, ...video },
        sound: { ...DEFAULT_SOUND, ...sound },
        log: { level: 'warn' },
      },
    });
    const { apiKey } = await engine.accounts.create({ contact: 'bench@example.com', plans: ['recorded'] });
    const call = async (path: string, body?: unknown) => {
      const response = await fetch(`${engine.url}/v8${path}`, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${apiKey.key}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
      return (await response.json()) as Record<string, any>;
    };
    return { engine, call, key: apiKey.key };
  };
  const against = () => {
    if (AGAINST === 'every-frame') return start(AGAINST, { dropUnchanged: false });
    if (AGAINST === 'sound-running') return start(AGAINST, {}, { pauseWhenSilent: false });
    if (AGAINST === 'both-running') return start(AGAINST, { pauseWhenStill: false }, { pauseWhenSilent: false });
    return start(AGAINST, { pauseWhenStill: false });
  };
  const engines = { current: await start('current', {}), against: await against() };
  try {
    for (const [kind, path] of [['still page', '/still'], ['browsing', '/browse/1'], ['720p30 clip', '/clip']] as const) {
      const figures: Record<string, number> = {};
      // Not recorded, recorded, and recorded as before the change compared against.
      for (const [name, record, { engine, call, key }] of [['plain', false, engines.current], ['recorded', true, engines.current], ['against', true, engines.against]] as const) {
        const created = await call('/vm/create', { browser: 'chromium', url: `${origin}${path}`, ...(record ? { record: true } : {}) });
        const id = created.vmId as string;
        for (let row = await engine.store.session(id); row?.status !== 'running'; row = await engine.store.session(id)) await new Promise((r) => setTimeout(r, 100));
        const session = engine.runtime.get((await engine.store.session(id))!.runtime_id!)!;
        const sessionDir = session.dir;
        await new Promise((r) => setTimeout(r, 2000));
        const before = await sessionCpu(sessionDir);
        const engineBefore = process.cpuUsage();
        await new Promise((r) => setTimeout(r, WINDOW_MS));
        const after = await sessionCpu(sessionDir);
        const engineUsed = process.cpuUsage(engineBefore);
        const used: Record<Part | 'all', number> = { all: 0, video: 0, display: 0, sound: 0, other: 0 };
        for (const [pid, { seconds, part }] of after) {
          const spent = seconds - (before.get(pid)?.seconds ?? 0);
          used.all += spent;
          used[part] += spent;
        }
        figures[`${name}SessionCpuPercent`] = percent(used.all);
        figures[`${name}VideoEncoderCpuPercent`] = percent(used.video);
        figures[`${name}DisplayCpuPercent`] = percent(used.display);
        figures[`${name}SoundCpuPercent`] = percent(used.sound);
        figures[`${name}EngineCpuPercent`] = percent((engineUsed.user + engineUsed.system) / 1e6);
        // How often the grab paused, and Xvnc was asked about changes, since the session started (decisions.md 118).
        if (record) Object.assign(figures, { [`${name}GrabPauses`]: session.ends.video?.grabPauses.pauses ?? 0, [`${name}ChangeAsks`]: session.ends.video?.grabPauses.asks ?? 0 });
        if (record) {
          const info = (await call(`/vm/recording?id=${id}`)).recording as { bytes: number; duration_ms: number };
          figures[name === 'recorded' ? 'bytesPerMinute' : `${name}BytesPerMinute`] = Math.round((info.bytes / info.duration_ms) * 60_000);
        }
        const ended = performance.now();
        await call('/vm/remove', { id });
        if (name === 'recorded') {
          for (;;) {
            const media = await fetch(`${engine.url}/v8/vm/recording/media?id=${id}`, { headers: { authorization: `Bearer ${key}` } });
            if (media.status === 200) {
              await media.arrayBuffer();
              break;
            }
            await media.arrayBuffer();
            await new Promise((r) => setTimeout(r, 100));
          }
          figures.endToDownloadMs = Math.round(performance.now() - ended);
        }
      }
      report('recording', kind, figures.bytesPerMinute!, 'bytes/min', {
        windowSeconds: WINDOW_MS / 1000,
        against: AGAINST,
        load: Math.round(loadavg()[0]! * 10) / 10,
        ...figures,
        mbPerHour: Math.round((figures.bytesPerMinute! * 60) / 1e5) / 10,
        againstMbPerHour: Math.round((figures.againstBytesPerMinute! * 60) / 1e5) / 10,
      });
    }
  } finally {
    await engines.current.engine.close();
    await engines.against.engine.close();
    site.close();
    await rm(dir, { recursive: true, force: true });
  }
}
