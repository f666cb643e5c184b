// The sound channel through the share API (issue 22): a real engine and a confined Chromium whose
// page plays a tone; listeners on the share link and on a view-only link hear it (the Opus packets
// they receive decode to the tone), the share state says the session has sound, presence counts
// them, and the last listener leaving stops the session's encoder. Sound and video seats are per
// link, as RFB's are: sixteen listeners and sixteen video watchers on a view-only link leave the
// share link its own (issue 32).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEFAULT_PLANS } from '../../src/engine/config.js';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { findMarkedProcesses } from '../../src/engine/runtime/sandbox/processes.js';
import { insertLinkedSession } from '../helpers/linked-session.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';
import { decodeOpus, listenTo, loudestFrequency, TONE_PAGE } from '../helpers/sound.js';
import { watchVideo } from '../helpers/video-client.js';


let fixture: EngineFixture;
let engine: Engine;
let key: string;
let vmId: string;
let shareLinkId: string;

const api = v8Caller(() => engine.url, () => key);

/** Listens on a link's sound channel for `ms`; answers the first message (the format) and the packets. */
async function listen(linkId: string, ms: number): Promise<{ format: string; packets: Buffer[] }> {
  const [format, ...packets] = await listenTo(`${engine.url.replace(/^http/, 'ws')}/share/${linkId}/sound`, ms);
  return { format: format?.toString() ?? '', packets };
}

/** The session's encoder processes (ffmpeg), as the host sees them. */
async function encoders(): Promise<number> {
  const row = (await engine.store.session(vmId))!;
  const session = engine.runtime.get(row.runtime_id!)!;
  return (await findMarkedProcesses({ dir: session.dir })).filter((p) => !p.zombie && /ffmpeg/.test(p.command.split(' ')[0] ?? '')).length;
}

beforeAll(async () => {
  // A plan that turns sound off, beside the defaults.
  const plans = [...DEFAULT_PLANS, { ...DEFAULT_PLANS.find((plan) => plan.id === 'pro')!, id: 'quiet', name: 'Quiet', sound: false }];
  fixture = await startEngine({ name: 'sound-channel', site: TONE_PAGE, config: { plans } });
  ({ engine, account: { key } } = fixture);
  const created = await api('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/` });
  expect(created.status).toBe('ok');
  vmId = created.vmId;
  shareLinkId = new URL(created.shareUrl).search.slice(1);
  expect(await waitFor(async () => (await api(`/vm/data?id=${vmId}`)).data?.[0]?.status, (status) => status === 'running', 30_000)).toBe('running');
}, 90_000);

afterAll(async () => {
  await fixture?.close();
});

describe('the sound channel on a share link', () => {
  it('the share state says the session has sound', async () => {
    const state = await (await fetch(`${engine.url}/share/${shareLinkId}`)).json();
    // Under `channels`, and at the top level too for the former viewers, for one version (decisions.md 150).
    expect(state).toMatchObject({ status: 'ok', state: 'running', channels: { sound: true }, sound: true });
  });

  it('is heard on the share link: the format first, then Opus packets that decode to the page\'s 440 Hz tone', async () => {
    expect(await encoders()).toBe(0);
    const heard = await listen(shareLinkId, 2500);
    expect(JSON.parse(heard.format)).toEqual({ codec: 'opus', sampleRate: 48000, channels: 2, frameMs: 10 });
    // At least half a second of sound (the encoder starts with this listener).
    expect(heard.packets.length).toBeGreaterThan(25);
    expect(Math.abs(loudestFrequency(await decodeOpus(heard.packets)) - 440)).toBeLessThan(15);
    // The last listener left: the encoder stops.
    expect(await waitFor(encoders, (n) => n === 0, 15_000)).toBe(0);
  }, 60_000);

  it('is heard on a view-only link too, and counts as someone attending the session', async () => {
    const made = await fetch(`${engine.url}/share/${shareLinkId}/view-only`, { method: 'POST' });
    const viewLink = ((await made.json()) as { linkId: string }).linkId;
    const before = (await engine.store.session(vmId))!.last_viewer_at ?? 0;
    const listening = listen(viewLink, 2500);
    // Attending is written as the session's last sight of someone (what the idle sweep reads).
    const seen = await waitFor(async () => (await engine.store.session(vmId))!.last_viewer_at ?? 0, (at) => at > before, 5000);
    expect(seen).toBeGreaterThan(before);
    const heard = await listening;
    expect(Math.abs(loudestFrequency(await decodeOpus(heard.packets)) - 440)).toBeLessThan(15);
  }, 60_000);

  it('answers a plain GET of the sound route with a pointer to the WebSocket, not the state', async () => {
    const answer = await fetch(`${engine.url}/share/${shareLinkId}/sound`);
    expect(answer.status).toBe(405);
    expect(((await answer.json()) as { message: string }).message).toMatch(/WebSocket for \/sound/);
  });

  it('is not offered for a session whose plan turns sound off: the state says nothing of sound, and a listener is refused', async () => {
    const quiet = await engine.accounts.create({ contact: 'quiet@example.com', plans: ['quiet'] });
    const link = await insertLinkedSession(engine, { accountId: quiet.account.id, subscriptionId: quiet.account.subscriptions[0]!.id }, { status: 'running' });
    const linkId = new URL(link).search.slice(1);
    const state = await (await fetch(`${engine.url}/share/${linkId}`)).json();
    expect(state).toMatchObject({ status: 'ok', state: 'running' });
    expect(state).not.toHaveProperty('sound');
    expect(state.channels).not.toHaveProperty('sound');
    const refused = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`${engine.url.replace(/^http/, 'ws')}/share/${linkId}/sound`);
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.on('open', () => resolve(101));
      socket.on('error', () => undefined);
    });
    expect(refused).toBe(403);
  });

  it('keeps the share link its own seats for sound and video, however many listen and watch on a view-only link', async () => {
    const made = await fetch(`${engine.url}/share/${shareLinkId}/view-only`, { method: 'POST' });
    const viewLink = ((await made.json()) as { linkId: string }).linkId;
    const ws = engine.url.replace(/^http/, 'ws');
    /** Opens a channel: resolves with the socket once its first message came, or with its close code. */
    const open = (url: string) =>
      new Promise<{ socket: WebSocket; first: Buffer } | { closed: number }>((resolve) => {
        const socket = new WebSocket(url);
        socket.once('message', (data: Buffer) => resolve({ socket, first: data }));
        socket.once('close', (code) => resolve({ closed: code }));
        socket.on('error', () => undefined);
      });
    const held: WebSocket[] = [];
    try {
      for (const channel of ['sound', 'video']) {
        const watchers = await Promise.all(Array.from({ length: 16 }, () => open(`${ws}/share/${viewLink}/${channel}`)));
        for (const watcher of watchers) {
          expect('socket' in watcher, `a view-only ${channel} watcher within the link's 16 seats`).toBe(true);
          if ('socket' in watcher) held.push(watcher.socket);
        }
        // The view-only link's seats are all taken: the seventeenth is told so.
        expect(await open(`${ws}/share/${viewLink}/${channel}`)).toEqual({ closed: 4002 });
      }
      // The share link still hears the tone and gets the picture.
      const heard = await listen(shareLinkId, 2500);
      expect(JSON.parse(heard.format)).toMatchObject({ codec: 'opus' });
      expect(Math.abs(loudestFrequency(await decodeOpus(heard.packets)) - 440)).toBeLessThan(15);
      const video = await watchVideo(`${ws}/share/${shareLinkId}/video`);
      expect(await waitFor(async () => video.frames.filter((frame) => frame.key).length, (keys) => keys > 0, 20_000)).toBeGreaterThan(0);
      expect(video.formats.length).toBeGreaterThan(0);
      video.close();
    } finally {
      for (const socket of held) socket.close();
    }
  }, 90_000);
});
