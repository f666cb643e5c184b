// The framed viewer's message API beyond state, tabs and control (issue 44, decisions.md 152): what
// the page around the viewer hears (people coming and going, a download that arrived, recording,
// sound, the viewer leaving) and what it may ask (focus, mute and volume, full screen, leave),
// through the share page's own hooks (viewer/site/embed.ts) with a stand-in parent window, and the
// element's handle posting those commands to its frame only.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FramedViewer } from '../../src/element/framed-viewer.js';
import { defineRemoteBrowserViewer } from '../../src/element/remote-browser-viewer.js';
import { embedHooks } from '../../src/engine/viewer/site/embed.js';
import { parseEmbedCommand, type EmbedEvent } from '../../src/protocol/embed-messages.js';
import type { FilesChannelMessage } from '../../src/protocol/files.js';
import type { Person } from '../../src/protocol/control.js';
import type { ViewerState } from '../../src/protocol/share.js';
import type { PeopleBinding } from '../../src/react/viewer/usePeople.js';
import type { RemoteSound } from '../../src/react/viewer/useRemoteSound.js';

const APP = 'http://app.localhost:5173';
const LINK = 'http://viewer.localhost:8640/en/s?AbCdEfGhIjKlMnOpQrSt_-';

/** A share page framed by APP: the page's posts are recorded, its messages handed to the viewer's listener. */
function framedPage(href = LINK) {
  const posted: Array<{ message: EmbedEvent; origin: string }> = [];
  const parent = { postMessage: (message: EmbedEvent, origin: string) => posted.push({ message, origin }) };
  let listener: ((event: MessageEvent) => void) | null = null;
  const view = {
    parent,
    document,
    location: { href, ancestorOrigins: [APP] },
    addEventListener: (_type: string, fn: (event: MessageEvent) => void) => (listener = fn),
    removeEventListener: () => undefined,
    focus: () => undefined,
  } as unknown as Window;
  const fromPage = (data: unknown, origin = APP) => listener!({ source: parent, origin, data } as unknown as MessageEvent);
  const events = (type?: string) => posted.filter((p) => type === undefined || p.message.type === type).map((p) => p.message);
  return { view, posted, fromPage, events };
}

function viewerState(change: Partial<ViewerState> = {}): ViewerState {
  return { state: 'running', language: 'en', browserName: 'Chromium', leaveUrl: null, control: true, frameOrigins: [APP], ...change };
}

function peopleBinding(people: Person[], request: PeopleBinding['request'] = () => undefined): PeopleBinding {
  return { snapshot: { picture: { type: 'control', mode: 'one', you: 'p1', viewerKey: 's', people, driver: null }, pointer: null, refused: null }, request };
}

function soundBinding(change: Partial<RemoteSound> = {}): RemoteSound {
  return { available: 'yes', blocked: false, muted: false, volume: 1, playing: true, setMuted: vi.fn(), setVolume: vi.fn(), resume: vi.fn(), ...change };
}

afterEach(() => {
  document.body.innerHTML = '';
});

describe('the framed viewer tells the page around it', () => {
  it('who is there, then each person who comes and goes, once', () => {
    const page = framedPage();
    const hooks = embedHooks(page.view, { close: () => undefined })!;
    hooks.onViewerState(viewerState());
    const ann: Person = { id: 'p1', kind: 'person', guest: 1 };
    const bob: Person = { id: 'p2', kind: 'person', name: 'Bob', asks: true };
    const bot: Person = { id: 'p3', kind: 'program', owner: true };
    hooks.onPeople(peopleBinding([ann, bob]));
    expect(page.events('people')).toEqual([{ rbk: 1, type: 'people', people: [ann, bob], you: 'p1' }]);
    // The starting picture is not news.
    expect(page.events('joined')).toEqual([]);
    hooks.onPeople(peopleBinding([ann, bot]));
    hooks.onPeople(peopleBinding([ann, bot]));
    expect(page.events('joined')).toEqual([{ rbk: 1, type: 'joined', person: bot }]);
    expect(page.events('left')).toEqual([{ rbk: 1, type: 'left', person: bob }]);
    expect(page.events('people')).toHaveLength(2);
    // Every post went to the origin that framed it, and nowhere else.
    expect(new Set(page.posted.map((p) => p.origin))).toEqual(new Set([APP]));
  });

  it('when recording starts and stops, once each', () => {
    const page = framedPage();
    const hooks = embedHooks(page.view, { close: () => undefined })!;
    hooks.onViewerState(viewerState());
    hooks.onViewerState(viewerState({ recording: true }));
    hooks.onViewerState(viewerState({ recording: true }));
    hooks.onViewerState(viewerState({ recording: false }));
    expect(page.events('recording').map((e) => (e as { recording: boolean }).recording)).toEqual([false, true, false]);
  });

  it('each download that finishes while it watches, not those that were there already', () => {
    const page = framedPage();
    let deliver: ((message: FilesChannelMessage) => void) | null = null;
    const stop = vi.fn();
    const followFiles = vi.fn((_base: string, _link: string, onList: (message: FilesChannelMessage) => void) => ((deliver = onList), stop));
    const hooks = embedHooks(page.view, { close: () => undefined, followFiles })!;
    hooks.onViewerState(viewerState());
    hooks.onStateChange('running');
    expect(followFiles).toHaveBeenCalledTimes(1);
    expect(followFiles.mock.calls[0]!.slice(0, 2)).toEqual(['http://viewer.localhost:8640', 'AbCdEfGhIjKlMnOpQrSt_-']);
    const old = { name: 'old.pdf', size: 10, kind: 'download' as const, created: '2026-11-28T12:00:00.000Z', state: 'complete' as const };
    const fresh = { name: 'report.csv', size: 2048, kind: 'download' as const, created: '2026-11-28T12:01:00.000Z', state: 'complete' as const };
    const list = (files: FilesChannelMessage['files']) => ({ type: 'files', files, downloads: true, uploads: true, maxFileBytes: 1e9, maxSessionBytes: 1e9 }) satisfies FilesChannelMessage;
    deliver!(list([old]));
    deliver!(list([old, { ...fresh, size: 100, state: 'downloading' }]));
    expect(page.events('download')).toEqual([]);
    deliver!(list([old, fresh]));
    deliver!(list([old, fresh]));
    expect(page.events('download')).toEqual([{ rbk: 1, type: 'download', name: 'report.csv', size: 2048, created: fresh.created }]);
    hooks.onStateChange('ended');
    expect(stop).toHaveBeenCalled();
  });

  it('nothing of files to a view-only link, which is offered none', () => {
    const page = framedPage(`${LINK}&view-only`);
    const followFiles = vi.fn(() => () => undefined);
    const hooks = embedHooks(page.view, { close: () => undefined, followFiles })!;
    hooks.onViewerState(viewerState());
    hooks.onStateChange('running');
    expect(followFiles).not.toHaveBeenCalled();
  });
});

describe('the page around the viewer may', () => {
  it('mute, unmute and set the volume, and hears the sound as it is', async () => {
    const page = framedPage();
    const hooks = embedHooks(page.view, { close: () => undefined })!;
    hooks.onViewerState(viewerState());
    page.fromPage({ rbk: 1, type: 'sound', muted: true });
    await vi.waitFor(() => expect(page.events('error')).toHaveLength(1));
    expect(page.events('error')[0]).toMatchObject({ command: 'sound', message: expect.stringMatching(/no sound/) });
    const sound = soundBinding();
    hooks.onSound(sound);
    expect(page.events('sound')).toEqual([{ rbk: 1, type: 'sound', available: 'yes', muted: false, volume: 1, blocked: false }]);
    page.fromPage({ rbk: 1, type: 'sound', muted: true });
    page.fromPage({ rbk: 1, type: 'sound', volume: 0.25 });
    await vi.waitFor(() => expect(sound.setVolume).toHaveBeenCalledWith(0.25));
    expect(sound.setMuted).toHaveBeenCalledWith(true);
    // Sound works for a viewer that only watches too: it is the listener's own.
    const watching = framedPage(`${LINK}&view-only`);
    const watchingHooks = embedHooks(watching.view, { close: () => undefined })!;
    watchingHooks.onViewerState(viewerState());
    const watchingSound = soundBinding();
    watchingHooks.onSound(watchingSound);
    watching.fromPage({ rbk: 1, type: 'sound', muted: false });
    await vi.waitFor(() => expect(watchingSound.setMuted).toHaveBeenCalledWith(false));
  });

  it('put the keyboard focus in the remote screen, once it runs', async () => {
    const page = framedPage();
    const hooks = embedHooks(page.view, { close: () => undefined })!;
    hooks.onViewerState(viewerState());
    page.fromPage({ rbk: 1, type: 'focus' });
    await vi.waitFor(() => expect(page.events('error')).toEqual([expect.objectContaining({ command: 'focus', message: expect.stringMatching(/not running/) })]));
    const input = document.createElement('textarea');
    input.className = 'rbk-viewer__keyboard-input';
    document.body.append(input);
    page.fromPage({ rbk: 1, type: 'focus' });
    await vi.waitFor(() => expect(document.activeElement).toBe(input));
  });

  it('leave: the viewer closes and says where its own page would go', async () => {
    const page = framedPage();
    const close = vi.fn();
    const hooks = embedHooks(page.view, { close })!;
    hooks.onViewerState(viewerState({ leaveUrl: 'https://app.example.com/done' }));
    page.fromPage({ rbk: 1, type: 'leave' });
    await vi.waitFor(() => expect(close).toHaveBeenCalledTimes(1));
    expect(page.events('closed')).toEqual([{ rbk: 1, type: 'closed', leaveUrl: 'https://app.example.com/done' }]);
    // Closed, it acts on nothing more; the Leave button afterwards changes nothing either.
    page.fromPage({ rbk: 1, type: 'tab', action: 'open' });
    await vi.waitFor(() => expect(page.events('error')).toEqual([expect.objectContaining({ command: 'tab', message: expect.stringMatching(/has left/) })]));
    hooks.onLeave('https://app.example.com/done');
    expect(close).toHaveBeenCalledTimes(1);
  });

  it('not ask for control from a view-only link, nor act from another origin', async () => {
    const page = framedPage(`${LINK}&view-only`);
    const request = vi.fn();
    const hooks = embedHooks(page.view, { close: () => undefined })!;
    hooks.onViewerState(viewerState());
    hooks.onPeople(peopleBinding([{ id: 'p1', kind: 'person' }], request));
    page.fromPage({ rbk: 1, type: 'control', action: 'ask' });
    await vi.waitFor(() => expect(page.events('error')).toEqual([expect.objectContaining({ command: 'control', message: expect.stringMatching(/view-only/) })]));
    const close = vi.fn();
    const other = framedPage();
    embedHooks(other.view, { close })!.onViewerState(viewerState());
    other.fromPage({ rbk: 1, type: 'leave' }, 'http://evil.localhost:5173');
    other.fromPage({ rbk: 1, type: 'leave' }, 'http://evil.localhost:5173');
    expect(document.documentElement.dataset.embedIgnored).toBe('2');
    expect(close).not.toHaveBeenCalled();
    expect(request).not.toHaveBeenCalled();
  });
});

describe('the new commands', () => {
  it('are read as version 1, and refused when malformed', () => {
    for (const command of [{ rbk: 1, type: 'focus' }, { rbk: 1, type: 'sound', muted: true }, { rbk: 1, type: 'sound', volume: 0.5 }, { rbk: 1, type: 'fullscreen', on: true }, { rbk: 1, type: 'leave' }]) {
      expect(parseEmbedCommand(command), JSON.stringify(command)).toEqual({ ok: true, command });
    }
    expect(parseEmbedCommand({ rbk: 1, type: 'sound' })).toMatchObject({ ok: false, command: 'sound', message: expect.stringMatching(/muted: give muted, volume or both/) });
    expect(parseEmbedCommand({ rbk: 1, type: 'sound', volume: 2 })).toMatchObject({ ok: false, message: expect.stringMatching(/^not understood: volume/) });
    expect(parseEmbedCommand({ rbk: 1, type: 'fullscreen' })).toMatchObject({ ok: false, message: expect.stringMatching(/^not understood: on/) });
  });

  it("are what the element's handle posts, to the share link's origin only", () => {
    const host = document.createElement('div');
    document.body.append(host);
    const viewer = new FramedViewer(LINK);
    host.append(viewer.iframe);
    const post = vi.spyOn(viewer.iframe.contentWindow!, 'postMessage').mockImplementation(() => undefined);
    viewer.focus();
    viewer.mute();
    viewer.unmute();
    viewer.setVolume(3);
    viewer.leave();
    expect(post.mock.calls).toEqual([
      [{ rbk: 1, type: 'focus' }, 'http://viewer.localhost:8640'],
      [{ rbk: 1, type: 'sound', muted: true }, 'http://viewer.localhost:8640'],
      [{ rbk: 1, type: 'sound', muted: false }, 'http://viewer.localhost:8640'],
      [{ rbk: 1, type: 'sound', volume: 1 }, 'http://viewer.localhost:8640'],
      [{ rbk: 1, type: 'leave' }, 'http://viewer.localhost:8640'],
    ]);
    viewer.destroy();
  });
});

describe('<remote-browser-viewer>', () => {
  it('frames its link when it was in the page before its script defined it (a deferred module script)', () => {
    document.body.innerHTML = `<rbk-early-viewer src="${LINK}" toolbar="compact"></rbk-early-viewer>`;
    defineRemoteBrowserViewer('rbk-early-viewer');
    const frame = document.querySelector('rbk-early-viewer')!.shadowRoot?.querySelector('iframe');
    expect(frame?.src).toBe(`${LINK}&toolbar=compact`);
  });
});
