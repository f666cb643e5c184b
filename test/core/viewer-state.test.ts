// Following a share link's viewer state against a stand-in share API: polling through a given
// fetch, server-sent events otherwise, back-off while unreachable, and gone links.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { retryDelay, STATE_POLL_MS, ViewerStateFollower } from '../../src/core/viewer-state.js';
import type { ViewerState } from '../../src/protocol/index.js';

const state = (name: ViewerState['state'], extra: Partial<ViewerState> = {}): ViewerState => ({ state: name, language: 'en', browserName: 'Chromium', leaveUrl: null, ...extra });
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** A fetch that answers with the next of `answers` (the last one repeats), recording each address. */
function shareApi(...answers: Array<() => Response>) {
  const urls: string[] = [];
  const fetch = vi.fn(async (url: string | URL | Request) => {
    urls.push(String(url));
    return (answers.length > 1 ? answers.shift()! : answers[0]!)();
  }) as unknown as typeof globalThis.fetch;
  return { urls, fetch };
}

const flush = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => vi.useFakeTimers({ now: 0 }));
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('ViewerStateFollower', () => {
  it('is gone without a share base or a link id', () => {
    const follower = new ViewerStateFollower();
    follower.follow({ shareBase: null, linkId: 'abc' });
    expect(follower.getState()).toEqual({ state: null, screen: 'gone', retryAt: null });
  });

  it('reads the state and polls it through a given fetch', async () => {
    const api = shareApi(() => json({ status: 'ok', ...state('waiting') }), () => json({ status: 'ok', ...state('running', { viewers: 2 }) }));
    const follower = new ViewerStateFollower();
    const seen: string[] = [];
    follower.subscribe(() => seen.push(follower.getState().screen));
    follower.follow({ shareBase: 'https://view.example.com', linkId: 'abc', fetch: api.fetch });
    expect(follower.getState().screen).toBe('loading');
    await flush();
    expect(follower.getState().screen).toBe('waiting');
    await vi.advanceTimersByTimeAsync(STATE_POLL_MS);
    expect(follower.getState()).toMatchObject({ screen: 'running', state: { viewers: 2 }, retryAt: null });
    expect(api.urls).toEqual(['https://view.example.com/share/abc', 'https://view.example.com/share/abc']);
    expect(seen).toEqual(['waiting', 'running']);
    follower.stop();
    await vi.advanceTimersByTimeAsync(STATE_POLL_MS * 3);
    expect(api.urls).toHaveLength(2);
  });

  it('shows unreachable, retries with back-off, and recovers', async () => {
    let failures = 2;
    const api = shareApi(() => (failures-- > 0 ? json({ status: 'error' }, 503) : json({ status: 'ok', ...state('running') })));
    const follower = new ViewerStateFollower();
    follower.follow({ shareBase: 'https://view.example.com', linkId: 'abc', fetch: api.fetch });
    await flush();
    expect(follower.getState()).toEqual({ state: null, screen: 'unreachable', retryAt: retryDelay(0) });
    await vi.advanceTimersByTimeAsync(retryDelay(0));
    expect(follower.getState().retryAt).toBe(retryDelay(0) + retryDelay(1));
    await vi.advanceTimersByTimeAsync(retryDelay(1));
    expect(follower.getState()).toMatchObject({ screen: 'running', retryAt: null });
    follower.stop();
  });

  it('keeps the last screen when a later read fails, and goes gone on a 404', async () => {
    const api = shareApi(() => json({ status: 'ok', ...state('running') }), () => { throw new TypeError('offline'); }, () => json({ status: 'denied' }, 404));
    const follower = new ViewerStateFollower();
    follower.follow({ shareBase: 'https://view.example.com', linkId: 'abc', fetch: api.fetch });
    await flush();
    await vi.advanceTimersByTimeAsync(STATE_POLL_MS);
    expect(follower.getState()).toMatchObject({ screen: 'running', retryAt: STATE_POLL_MS + retryDelay(0) });
    await vi.advanceTimersByTimeAsync(retryDelay(0));
    expect(follower.getState().screen).toBe('gone');
    const reads = api.urls.length;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(api.urls).toHaveLength(reads);
  });

  it('refuses an answer of another shape', async () => {
    const api = shareApi(() => json({ status: 'ok', state: 'running' }));
    const follower = new ViewerStateFollower();
    follower.follow({ shareBase: 'https://view.example.com', linkId: 'abc', fetch: api.fetch });
    await flush();
    expect(follower.getState().screen).toBe('unreachable');
    follower.stop();
  });

  it('follows server-sent events after the first read, and reads again when the stream closes', async () => {
    const streams: FakeEventSource[] = [];
    class FakeEventSource {
      static readonly CLOSED = 2;
      readyState = 1;
      onerror: (() => void) | null = null;
      readonly listeners = new Map<string, (event: { data: string }) => void>();
      constructor(readonly url: string) {
        streams.push(this);
      }
      addEventListener(type: string, listener: (event: { data: string }) => void) {
        this.listeners.set(type, listener);
      }
      close() {
        this.readyState = FakeEventSource.CLOSED;
      }
    }
    vi.stubGlobal('EventSource', FakeEventSource);
    vi.stubGlobal('fetch', vi.fn(async () => json({ status: 'ok', ...state('waiting') })));
    const follower = new ViewerStateFollower();
    follower.follow({ shareBase: 'https://view.example.com', linkId: 'abc' });
    await flush();
    expect(streams.map((s) => s.url)).toEqual(['https://view.example.com/share/abc/events']);
    streams[0]!.listeners.get('state')!({ data: JSON.stringify(state('running')) });
    expect(follower.getState().screen).toBe('running');
    streams[0]!.readyState = FakeEventSource.CLOSED;
    streams[0]!.onerror!();
    expect(follower.getState().retryAt).toBe(retryDelay(0));
    await vi.advanceTimersByTimeAsync(retryDelay(0));
    expect(streams).toHaveLength(2);
    follower.stop();
    expect(streams[1]!.readyState).toBe(FakeEventSource.CLOSED);
  });
});
