// Hearing the remote browser (issue 22), with real parts: confined Chromium and Firefox ESR
// sessions whose pages play a tone through WebAudio, the session's own PulseAudio, the encoder
// started by a listener, the sound channel's WebSocket on loopback, and the packets decoded on the
// host to find the tone's pitch.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { findMarkedProcesses, listProcesses } from '../../src/engine/runtime/sandbox/processes.js';
import { SessionRuntime, type RuntimeEvent, type RuntimeSession } from '../../src/engine/runtime/runtime.js';
import type { SessionSound, SoundStream } from '../../src/engine/runtime/capture/sound.js';
import { serveSoundListener } from '../../src/engine/channels/sound/sound-listener.js';
import { decodeOpus, loudestFrequency, loudness } from '../helpers/sound.js';
import { waitFor } from '../helpers/session.js';

// The page plays the tone its address names as soon as it loads (the engine's autoplay policy), at
// half scale; `tone.frequency.value` changes it.
const TONE_PAGE = `<!doctype html><title>Tone</title><script>
var tone;
function play(f) {
  var context = new AudioContext({ sampleRate: 48000 });
  var gain = context.createGain();
  gain.gain.value = 0.5;
  tone = context.createOscillator();
  tone.frequency.value = f;
  tone.connect(gain).connect(context.destination);
  tone.start();
  document.title = 'Tone ' + context.state;
}
addEventListener('load', function () { play(Number(new URLSearchParams(location.search).get('f'))); });
</script><body>tone</body>`;

let site: Server;
let origin: string;
let dataDir: string;
let runtime: SessionRuntime;
const events: RuntimeEvent[] = [];

/** Packets one listener receives over `ms`, after skipping the first `skipMs` (the encoder's start). */
async function hear(sound: SessionSound, ms: number, skipMs = 400): Promise<Buffer[]> {
  const stream = sound.listen();
  const packets: Buffer[] = [];
  stream.on('packet', (packet) => packets.push(packet));
  await new Promise((r) => setTimeout(r, skipMs + ms));
  stream.close();
  return packets.slice(Math.round(skipMs / 20));
}

async function pitch(packets: Buffer[]): Promise<{ frequency: number; loudness: number }> {
  const samples = await decodeOpus(packets);
  // The last half second: well after the encoder's first frames.
  const tail = samples.subarray(Math.max(0, samples.length - 24_000));
  return { frequency: loudestFrequency(tail), loudness: loudness(tail) };
}

/** The session's live processes whose program is `program` (an absolute path). */
async function running(session: RuntimeSession, program: string): Promise<number[]> {
  return (await findMarkedProcesses({ dir: session.dir })).filter((p) => !p.zombie && p.command.split(' ')[0] === program).map((p) => p.pid);
}

function status(pid: number, field: string): string {
  return new RegExp(`^${field}:\\s*(.*)$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '';
}

/** Every live process that runs as `uid`, on the whole host. */
async function processesOfUid(uid: number): Promise<number[]> {
  const pids = (await listProcesses()).filter((p) => !p.zombie).map((p) => p.pid);
  return pids.filter((pid) => {
    try {
      return status(pid, 'Uid').split(/\s+/)[0] === String(uid);
    } catch {
      return false;
    }
  });
}

beforeAll(async () => {
  site = createServer((request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(TONE_PAGE));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  dataDir = await mkdtemp(join(tmpdir(), 'rbk-sound-'));
  ({ runtime } = await SessionRuntime.open({ root: join(dataDir, 'sessions'), egress: { allow: ['127.0.0.1/32'] }, confinement: { memoryMb: 1024, diskMb: 96 } }));
  runtime.on('event', (event) => events.push(event));
});

afterAll(async () => {
  await runtime?.close();
  await new Promise((resolve) => site?.close(resolve));
  await rm(dataDir, { recursive: true, force: true });
});

describe('a confined Chromium session playing a tone', () => {
  let session: RuntimeSession;

  beforeAll(async () => {
    session = await runtime.startSession({ browser: 'chromium', url: `${origin}/tone?f=440`, language: 'en', layout: 'us' });
    // Playing without a gesture first: the engine's autoplay policy.
    await waitFor(() => session.control!.evaluate('document.title').catch(() => ''), (title) => title === 'Tone running');
  });

  it('runs its sound server as the session uid, in its cgroup, with no new privileges; no encoder while no one listens', async () => {
    expect(session.sound).not.toBeNull();
    const [server] = await running(session, '/usr/bin/pulseaudio');
    expect(server).toBeGreaterThan(0);
    expect(status(server!, 'Uid').split(/\s+/)).toEqual(Array(4).fill(String(session.sandbox.uid)));
    expect(status(server!, 'NoNewPrivs')).toBe('1');
    // The same cgroups (caps) as the browser.
    expect(readFileSync(`/proc/${server}/cgroup`, 'utf8')).toBe(readFileSync(`/proc/${session.browser.process.pid}/cgroup`, 'utf8'));
    // Its socket is inside the session only: another local user reaches nothing there.
    expect(session.sound!.socketPath).toBe('/session/.sound/native');
    expect((await session.sandbox.run('stat', ['-c', '%a %u', '/session/.sound'], session.sandbox.env)).trim()).toBe(`700 ${session.sandbox.uid}`);
    const outsider = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', 'pactl', '-s', `unix:/proc/${server}/root/session/.sound/native`, 'info'], { encoding: 'utf8', timeout: 5000, env: { PATH: process.env.PATH } });
    expect(outsider.status).not.toBe(0);
    // Inside, the server answers, and no client can load a module into it (a pipe sink writing files, a network protocol).
    const env = { ...session.sandbox.env, ...session.sound!.clientEnv };
    // (pactl may answer an empty list while a loaded machine's server is still settling: asked again.)
    expect(await waitFor(() => session.sandbox.run('pactl', ['list', 'short', 'sinks'], env), (sinks) => /^\d+\s+out\s/m.test(sinks), 10_000)).toMatch(/^\d+\s+out\s/m);
    // (A second null sink loads without --disallow-module-loading; the native protocol words the refusal as a failed initialization.)
    await expect(session.sandbox.run('pactl', ['load-module', 'module-null-sink', 'sink_name=second'], env)).rejects.toThrow(/Module initialization failed/);
    expect(await session.sandbox.run('pactl', ['list', 'short', 'sinks'], env)).not.toMatch(/second/);
    // The tone plays, and nothing encodes it.
    await new Promise((r) => setTimeout(r, 500));
    expect(await running(session, '/usr/bin/ffmpeg')).toEqual([]);
    expect(session.sound!.encoderProcess).toBeNull();
  });

  it('sends a listener on the sound channel the format, then Opus packets that play 440 Hz, then 1 kHz', async () => {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    server.on('connection', (socket) => serveSoundListener(socket, session.sound));
    await new Promise((resolve) => server.once('listening', resolve));
    const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const texts: string[] = [];
    let packets: Buffer[] = [];
    client.on('message', (data, binary) => (binary ? packets.push(data as Buffer) : texts.push(data.toString())));
    await new Promise((resolve) => client.once('open', resolve));
    try {
      // 10 ms a packet, about 100 a second once the encoder runs (it takes about a second to start).
      await waitFor(() => packets.length, (count) => count >= 60, 10_000);
      expect(texts).toEqual(['{"codec":"opus","sampleRate":48000,"channels":2,"frameMs":10}']);
      expect(await running(session, '/usr/bin/ffmpeg')).toHaveLength(1);
      const first = await pitch(packets);
      expect(first.loudness).toBeGreaterThan(3000);
      expect(Math.abs(first.frequency - 440)).toBeLessThanOrEqual(5);

      await session.control!.evaluate('tone.frequency.value = 1000');
      await new Promise((r) => setTimeout(r, 300));
      packets = [];
      await waitFor(() => packets.length, (count) => count >= 40, 10_000);
      const second = await pitch(packets);
      expect(second.loudness).toBeGreaterThan(3000);
      expect(Math.abs(second.frequency - 1000)).toBeLessThanOrEqual(5);
    } finally {
      client.close();
      await new Promise((resolve) => client.once('close', resolve));
      server.close();
    }
    // The only listener left: the encoder stops.
    expect(await waitFor(() => running(session, '/usr/bin/ffmpeg'), (pids) => pids.length === 0, 3000)).toEqual([]);
  });

  it('keeps one encoder for several listeners, and stops it when the last one leaves', async () => {
    const a = session.sound!.listen();
    const b = session.sound!.listen();
    const heard = { a: 0, b: 0 };
    a.on('packet', () => heard.a++);
    b.on('packet', () => heard.b++);
    await waitFor(() => heard.a, (count) => count > 10, 10_000);
    expect(await running(session, '/usr/bin/ffmpeg')).toHaveLength(1);
    expect(heard.a).toBeGreaterThan(10);
    expect(heard.b).toBe(heard.a);
    a.close();
    const before = heard.b;
    await new Promise((r) => setTimeout(r, 600));
    expect(heard.b).toBeGreaterThan(before + 10);
    expect(await running(session, '/usr/bin/ffmpeg')).toHaveLength(1);
    b.close();
    expect(await waitFor(() => running(session, '/usr/bin/ffmpeg'), (pids) => pids.length === 0, 3000)).toEqual([]);
    const after = heard.b;
    await new Promise((r) => setTimeout(r, 300));
    expect(heard.b).toBe(after);
  });

  it('goes on without sound when its sound server is killed: the browser and display stay, the listener is told', async () => {
    const stream: SoundStream = session.sound!.listen();
    const ended = new Promise<string>((resolve) => stream.once('end', resolve));
    await new Promise((r) => setTimeout(r, 300));
    const [server] = await running(session, '/usr/bin/pulseaudio');
    process.kill(server!, 'SIGKILL');
    expect(await ended).toMatch(/sound server exited/);
    expect(await waitFor(() => running(session, '/usr/bin/ffmpeg'), (pids) => pids.length === 0, 3000)).toEqual([]);
    await new Promise((r) => setTimeout(r, 1000));
    // The start and what its tabs did (a recording's timeline) are told too; they are not about sound.
    const mine = events.filter((e) => e.sessionId === session.id && e.kind !== 'started' && e.kind !== 'page');
    // A notice, never an end: the service suspends sessions only on events that end them.
    expect(mine.map((e) => [e.kind, e.ends])).toEqual([['sound-lost', false]]);
    expect(runtime.get(session.id)).toBe(session);
    expect(await session.control!.evaluate('document.title')).toBe('Tone running');
    expect(session.browser.process.child.exitCode).toBeNull();
    expect(session.display.server.child.exitCode).toBeNull();
    // A later listener hears at once that there is no sound.
    const late = session.sound!.listen();
    expect(await new Promise<string>((resolve) => late.once('end', resolve))).toMatch(/sound server exited/);
  });

  it('leaves no process behind when the session stops', async () => {
    const uid = session.sandbox.uid!;
    await runtime.stopSession(session.id);
    expect(await findMarkedProcesses({ dir: session.dir })).toEqual([]);
    expect(await processesOfUid(uid)).toEqual([]);
  });
});

describe('a confined Firefox ESR session playing a tone', () => {
  it('is heard by a listener at 440 Hz, and leaves no process when it stops', async () => {
    const session = await runtime.startSession({ browser: 'firefox-esr', url: `${origin}/tone?f=440`, language: 'en', layout: 'us' });
    try {
      expect(session.sound).not.toBeNull();
      // Firefox has no DevTools connection here: listen until the page's tone is there.
      const packets = await waitFor(() => hear(session.sound!, 1000), (heard) => heard.length > 30, 15_000);
      const heard = await pitch(packets);
      expect(heard.loudness).toBeGreaterThan(3000);
      expect(Math.abs(heard.frequency - 440)).toBeLessThanOrEqual(5);
    } finally {
      const uid = session.sandbox.uid!;
      await runtime.stopSession(session.id);
      expect(await processesOfUid(uid)).toEqual([]);
    }
  });
});

describe('sound turned off', () => {
  it('runs no sound process at all, and tells a listener there is none', async () => {
    const { runtime: silent } = await SessionRuntime.open({ root: join(dataDir, 'silent'), egress: { allow: ['127.0.0.1/32'] }, confinement: { memoryMb: 1024, diskMb: 96 }, sound: false });
    try {
      const session = await silent.startSession({ browser: 'chromium', url: `${origin}/tone?f=440`, language: 'en', layout: 'us' });
      expect(session.sound).toBeNull();
      await waitFor(() => session.control!.evaluate('document.title').catch(() => ''), (title) => String(title).startsWith('Tone'));
      expect(await running(session, '/usr/bin/pulseaudio')).toEqual([]);
      expect(await running(session, '/usr/bin/ffmpeg')).toEqual([]);
      // A listener on the sound channel is told at once that there is none.
      const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
      server.on('connection', (socket) => serveSoundListener(socket, session.sound));
      await new Promise((resolve) => server.once('listening', resolve));
      const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
      const messages: unknown[] = [];
      client.on('message', (data) => messages.push(data));
      const [code, reason] = await new Promise<[number, string]>((resolve) => client.once('close', (c, r) => resolve([c, r.toString()])));
      server.close();
      expect([code, reason, messages]).toEqual([1011, 'this session has no sound', []]);
    } finally {
      await silent.close();
    }
  });
});
