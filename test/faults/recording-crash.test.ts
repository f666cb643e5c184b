// A recording survives the engine's kill -9 mid-session (issue 35, decisions.md 96): the engine (a
// child process, SQLite) records a session on a moving page, is killed while the session runs,
// and starts again; what was recorded up to then plays: the API calls it ended, and the MP4 it
// hands out holds that picture, for about as long as the session ran.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, makeWorkspace, removeWorkspace, startEngine, testConfig, PLANS, type EngineProcess, type Workspace } from '../api/harness.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';

const MOVING = '<!doctype html><title>Moving</title><body style="margin:0"><div id="s" style="position:absolute;width:200px;height:200px;background:#f00"></div><script>var x=0;setInterval(function(){x=(x+9)%900;document.getElementById("s").style.left=x+"px"},33)</script>';

let workspace: Workspace;
let engine: EngineProcess;
let site: Server;
let origin: string;
let key: string;
const api = v8Caller(() => engine.url, () => key);

beforeAll(async () => {
  site = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(MOVING));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const recorded = { ...PLANS.unlimited, id: 'recorded', name: 'Recorded', recording: true };
  workspace = await makeWorkspace(testConfig({ plans: [...Object.values(PLANS), recorded] }));
  engine = await startEngine({ workspace });
  key = (await createAccount(workspace, [recorded])).key;
}, 60_000);

afterAll(async () => {
  await engine?.stop();
  site?.close();
  await removeWorkspace(workspace);
});

describe('kill -9 of the engine while a recorded session runs', () => {
  it('leaves what was recorded up to then playable', async () => {
    const created = await api('/vm/create', { browser: 'chromium', url: `${origin}/`, record: true });
    expect(created.status, JSON.stringify(created)).toBe('ok');
    const id = created.vmId as string;
    await waitFor(async () => (await api(`/vm/data?id=${id}&wait=30000`)).data?.[0]?.status, (status) => status === 'running', 60_000);
    // Several seconds of picture are on disk (a cluster is written about each second).
    const recording = await waitFor(() => api(`/vm/recording?id=${id}`), (answer) => answer.recording?.bytes > 50_000 && answer.recording.duration_ms > 4000, 30_000);
    expect(recording.recording.state).toBe('recording');
    await engine.kill9();
    engine = await startEngine({ workspace });

    // The restart ended the session; the recording is whole once nothing more can come.
    const ended = await waitFor(() => api(`/vm/recording?id=${id}`), (answer) => answer.recording?.state === 'ended', 30_000);
    expect(ended.recording.bytes).toBeGreaterThanOrEqual(recording.recording.bytes);
    const media = await fetch(`${engine.url}/v8/vm/recording/media?id=${id}`, { headers: { authorization: `Bearer ${key}` } });
    expect(media.status).toBe(200);
    const file = join(workspace.dir, 'after-crash.mp4');
    writeFileSync(file, Buffer.from(await media.arrayBuffer()));
    const probe = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_name', '-of', 'json', file], { encoding: 'utf8' })) as { format: { duration: string }; streams: Array<{ codec_name: string }> };
    expect(probe.streams.map((stream) => stream.codec_name)).toContain('h264');
    expect(Number(probe.format.duration)).toBeGreaterThan(3);
    const rgb = execFileSync('ffmpeg', ['-v', 'error', '-ss', '2', '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], { maxBuffer: 16 * 1024 * 1024 });
    let red = 0;
    for (let i = 0; i < rgb.length; i += 3) if (rgb[i]! > 200 && rgb[i + 1]! < 60 && rgb[i + 2]! < 60) red++;
    expect(red).toBeGreaterThan(200 * 200 * 0.8);
  }, 240_000);
});
