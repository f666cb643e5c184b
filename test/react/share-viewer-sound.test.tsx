// <ShareViewer>'s sound control against the real engine's share API (its state told `sound` by a
// fetch on top, until the engine says it itself): nothing for a session without sound, the line
// for a browser without WebCodecs (jsdom has none), "Tap to hear" while autoplay is blocked, and
// a muted viewer not listening at all, mute kept across a reload, a dropped connection made
// again. WebCodecs, Web Audio and the sound socket are stand-ins.
import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { SHARE_LANGUAGES, type ShareLanguage } from '../../src/protocol/index.js';
import { resources } from '../../src/react/i18n.js';
import { ShareViewer } from '../../src/react/ShareViewer.js';
import { SOUND_PREFERENCE_KEY } from '../../src/react/viewer/sound-preference.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { insertLinkedSession } from '../helpers/linked-session.js';
import { axeViolations } from './axe.js';

let fixture: EngineFixture<FakeRuntime>;
let engine: Engine<FakeRuntime>;
let owner: { accountId: string; subscriptionId: string };

beforeAll(async () => {
  fixture = await startEngine({ name: 'sound', runtime: 'fake' });
  engine = fixture.engine;
  owner = { accountId: fixture.account.id, subscriptionId: fixture.account.subscriptionId };
});

afterAll(async () => {
  await fixture?.close();
});

/** The engine's share API, its state answer saying `sound` as the test needs (under `channels`, and at the top level as the former engines did: decisions.md 150). */
function shareApiSaying(sound: boolean): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.ok || !/^\/share\/[^/]+$/.test(new URL(String(input)).pathname)) return response;
    const state = (await response.json()) as { channels?: Record<string, true> };
    const { sound: _said, ...channels } = state.channels ?? {};
    return Response.json({ ...state, sound, channels: sound ? { ...channels, sound: true } : channels });
  };
}

// ---------------------------------------------------------------------------------------------
// Stand-ins for what jsdom lacks: WebCodecs, Web Audio, and the engine's sound socket

/** Whether the page had a gesture yet (the browser's sticky activation, which autoplay waits for). */
let activated = false;
/** Whether the page may play sound without a gesture (the browser's autoplay policy). */
let autoplay = false;
const contexts: StandInAudioContext[] = [];
const soundSockets: StandInSocket[] = [];
const RealWebSocket = WebSocket;

class StandInAudioContext extends EventTarget {
  state: AudioContextState = 'suspended';
  currentTime = 0;
  destination = {};
  gain = { value: 1, setTargetAtTime(value: number) { this.value = value; } };
  constructor() {
    super();
    contexts.push(this);
  }
  createGain() {
    return { gain: this.gain, connect() {} };
  }
  async resume() {
    if ((autoplay || activated) && this.state === 'suspended') {
      this.state = 'running';
      this.dispatchEvent(new Event('statechange'));
    }
  }
  async close() {
    this.state = 'closed';
  }
}

class StandInDecoder {
  static isConfigSupported = async () => ({ supported: true });
  state = 'unconfigured';
  decodeQueueSize = 0;
  configure() { this.state = 'configured'; }
  decode() {}
  close() { this.state = 'closed'; }
}

/** The sound socket; any other (noVNC's) is a real one. */
class StandInSocket {
  binaryType = 'blob';
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: (() => void) | null = null;
  closed = false;
  constructor(readonly url: string, protocols?: string | string[]) {
    if (!url.endsWith('/sound')) return new RealWebSocket(url, protocols) as unknown as StandInSocket;
    soundSockets.push(this);
  }
  /** The engine's first message. */
  sendFormat() { this.onmessage?.({ data: '{"codec":"opus","sampleRate":48000,"channels":2,"frameMs":10}' }); }
  /** The engine goes away (a restart, a network change). */
  drop() { this.onclose?.(); }
  close() { this.closed = true; }
}

function standInWebCodecs(): void {
  vi.stubGlobal('AudioContext', StandInAudioContext);
  vi.stubGlobal('AudioDecoder', StandInDecoder);
  vi.stubGlobal('EncodedAudioChunk', class {});
  vi.stubGlobal('WebSocket', StandInSocket);
}

beforeEach(() => {
  activated = false;
  autoplay = false;
  contexts.length = 0;
  soundSockets.length = 0;
  sessionStorage.clear();
  localStorage.clear();
  // A press or key anywhere is a gesture, seen before the page's own handlers (as the browser does).
  for (const type of ['pointerdown', 'keydown', 'click']) window.addEventListener(type, () => (activated = true), { capture: true });
});

afterEach(() => vi.unstubAllGlobals());

const en = resources.en.viewer;

async function runningSession(language: ShareLanguage = 'en'): Promise<string> {
  return insertLinkedSession(engine, owner, { status: 'running', share_language: language });
}

describe('the sound control', () => {
  it('shows nothing at all for a session without sound, and opens no sound connection', async () => {
    standInWebCodecs();
    render(<ShareViewer shareUrl={await runningSession()} fetch={shareApiSaying(false)} />);
    await screen.findByRole('toolbar', { name: en.toolbar.label });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(screen.queryByRole('group', { name: en.sound.label })).toBeNull();
    expect(screen.queryByRole('button', { name: en.sound.tapToHear })).toBeNull();
    expect(screen.queryByText(en.sound.unavailable)).toBeNull();
    expect(soundSockets).toEqual([]);
  });

  it.each(SHARE_LANGUAGES)('says sound is unavailable in a browser without WebCodecs audio (%s)', async (language) => {
    // jsdom, like a page on plain http away from localhost, has no AudioDecoder.
    const { container } = render(<ShareViewer shareUrl={await runningSession(language)} fetch={shareApiSaying(true)} />);
    expect(await screen.findByText(resources[language].viewer.sound.unavailable)).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: resources[language].viewer.sound.mute })).toBeNull();
    expect(await axeViolations(container)).toEqual([]);
  });

  it('asks for a tap while the browser blocks autoplay, and plays after it', async () => {
    standInWebCodecs();
    const { container } = render(<ShareViewer shareUrl={await runningSession()} fetch={shareApiSaying(true)} />);
    const tap = await screen.findByRole('button', { name: en.sound.tapToHear });
    await waitFor(() => expect(soundSockets).toHaveLength(1));
    expect(await axeViolations(container)).toEqual([]);
    await userEvent.click(tap);
    expect(await screen.findByRole('button', { name: en.sound.mute })).toHaveAttribute('aria-pressed', 'false');
    expect(screen.queryByRole('button', { name: en.sound.tapToHear })).toBeNull();
    expect(contexts.at(-1)!.state).toBe('running');
  });

  it('mutes with a labelled toggle and sets the volume with a slider that says its value', async () => {
    standInWebCodecs();
    autoplay = true;
    const { container } = render(<ShareViewer shareUrl={await runningSession()} fetch={shareApiSaying(true)} />);
    const slider = await screen.findByRole('slider', { name: en.sound.volume });
    expect(slider).toHaveAttribute('aria-valuetext', '100 %');
    // jsdom does not move a range input with arrow keys (a browser does): set it as they would.
    fireEvent.change(slider, { target: { value: '90' } });
    expect(slider).toHaveAttribute('aria-valuetext', '90 %');
    expect(contexts.at(-1)!.gain.value).toBeCloseTo(0.81, 5);
    await userEvent.click(screen.getByRole('button', { name: en.sound.mute }));
    expect(screen.getByRole('button', { name: en.sound.mute })).toHaveAttribute('aria-pressed', 'true');
    expect(contexts.at(-1)!.gain.value).toBe(0);
    expect(await axeViolations(container)).toEqual([]);
  });

  it('tells a host its sound through onSound, and mutes and sets the volume when the host asks (issue 44)', async () => {
    standInWebCodecs();
    autoplay = true;
    const told: Array<{ available: string; muted: boolean; volume: number; setMuted: (muted: boolean) => void; setVolume: (volume: number) => void }> = [];
    render(<ShareViewer shareUrl={await runningSession()} fetch={shareApiSaying(true)} onSound={(sound) => told.push(sound)} />);
    // The sound player loads with import(): slow on a loaded machine.
    await screen.findByRole('slider', { name: en.sound.volume }, { timeout: 20_000 });
    await waitFor(() => expect(told.at(-1)).toMatchObject({ available: 'yes', muted: false, volume: 1 }));
    act(() => told.at(-1)!.setMuted(true));
    // The toolbar follows what the host asked, as if the person had pressed it.
    await waitFor(() => expect(screen.getByRole('button', { name: en.sound.mute })).toHaveAttribute('aria-pressed', 'true'));
    await waitFor(() => expect(told.at(-1)).toMatchObject({ muted: true }));
    act(() => told.at(-1)!.setVolume(0.5));
    await waitFor(() => expect(screen.getByRole('slider', { name: en.sound.volume })).toHaveAttribute('aria-valuetext', '50 %'));
    expect(told.at(-1)).toMatchObject({ muted: true, volume: 0.5 });
  });

  it('connects again after the engine drops the sound, with the back-off of the picture', async () => {
    standInWebCodecs();
    autoplay = true;
    render(<ShareViewer shareUrl={await runningSession()} fetch={shareApiSaying(true)} />);
    await waitFor(() => expect(soundSockets).toHaveLength(1));
    act(() => soundSockets[0]!.sendFormat());
    expect(await screen.findByRole('button', { name: en.sound.mute })).toHaveAttribute('aria-pressed', 'false');
    // The engine drops the sound connection; the player connects again after its back-off (1 s).
    act(() => soundSockets[0]!.drop());
    await waitFor(() => expect(soundSockets).toHaveLength(2), { timeout: 3000 });
  });

  it('stops listening while muted (no sound connection at all), stays muted across a reload, kept under the viewer\'s own key only', async () => {
    standInWebCodecs();
    autoplay = true;
    const url = await runningSession();
    const first = render(<ShareViewer shareUrl={url} fetch={shareApiSaying(true)} />);
    await waitFor(() => expect(soundSockets).toHaveLength(1));
    act(() => soundSockets[0]!.sendFormat());
    await userEvent.click(await screen.findByRole('button', { name: en.sound.mute }));
    // Muted: the connection closes, and no other opens (a muted viewer costs the engine nothing).
    expect(soundSockets[0]!.closed).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(soundSockets).toHaveLength(1);
    expect(screen.getByRole('button', { name: en.sound.mute })).toHaveAttribute('aria-pressed', 'true');
    expect(contexts.at(-1)!.gain.value).toBe(0);
    first.unmount();

    // Reloaded in the same tab: still muted, from the start, and not listening.
    render(<ShareViewer shareUrl={url} fetch={shareApiSaying(true)} />);
    const mute = await screen.findByRole('button', { name: en.sound.mute });
    expect(mute).toHaveAttribute('aria-pressed', 'true');
    expect(contexts.at(-1)!.gain.value).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(soundSockets).toHaveLength(1);
    expect(Object.keys(sessionStorage)).toEqual([SOUND_PREFERENCE_KEY]);
    expect(Object.keys(localStorage)).toEqual([]);
    // Unmuted: it listens again.
    await userEvent.click(mute);
    await waitFor(() => expect(soundSockets).toHaveLength(2));
    expect(soundSockets[1]!.closed).toBe(false);
  });
});
