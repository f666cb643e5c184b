// The live screen's reconnect policy against a stand-in transport: back-off after drops, quick
// retries behind the waiting screen, a retry at once when shown, and nothing after close.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PRECONNECT_RETRY_MS, ReconnectPolicy } from '../../src/core/reconnect.js';

function transport() {
  const calls: string[] = [];
  return { calls, connect: () => calls.push('connect'), disconnect: () => calls.push('disconnect') };
}

beforeEach(() => vi.useFakeTimers({ now: 0 }));
afterEach(() => vi.useRealTimers());

describe('ReconnectPolicy', () => {
  it('connects on open, and reports its state to subscribers', () => {
    const policy = new ReconnectPolicy();
    const link = transport();
    const seen: string[] = [];
    policy.subscribe(() => seen.push(policy.getState().connection));
    expect(policy.getState()).toEqual({ connection: 'connecting', reconnectAt: null });
    policy.open(link);
    expect(link.calls).toEqual(['connect']);
    policy.connected();
    expect(policy.getState()).toEqual({ connection: 'connected', reconnectAt: null });
    expect(seen).toEqual(['connected']);
  });

  it('retries a dropped connection after 1 s, doubling, and starts over once connected', () => {
    const policy = new ReconnectPolicy();
    const link = transport();
    policy.open(link);
    const waits: number[] = [];
    for (let i = 0; i < 3; i++) {
      policy.dropped();
      expect(policy.getState().connection).toBe('reconnecting');
      const wait = policy.getState().reconnectAt! - Date.now();
      waits.push(wait);
      vi.advanceTimersByTime(wait - 1);
      const before = link.calls.length;
      vi.advanceTimersByTime(1);
      expect(link.calls.slice(before)).toEqual(['disconnect', 'connect']);
    }
    expect(waits).toEqual([1000, 2000, 4000]);
    policy.connected();
    policy.dropped();
    expect(policy.getState().reconnectAt! - Date.now()).toBe(1000);
  });

  it('retries quickly while preconnecting, and at once when shown', () => {
    const policy = new ReconnectPolicy();
    const link = transport();
    policy.setPreconnecting(true);
    policy.open(link);
    policy.dropped();
    expect(policy.getState().reconnectAt).toBe(PRECONNECT_RETRY_MS);
    link.calls.length = 0;
    policy.setPreconnecting(false);
    expect(link.calls).toEqual(['disconnect', 'connect']);
    // The timer that was due does not fire a second try.
    vi.advanceTimersByTime(PRECONNECT_RETRY_MS);
    expect(link.calls).toEqual(['disconnect', 'connect']);
  });

  it('shown while connected or connecting, it does nothing', () => {
    const policy = new ReconnectPolicy();
    const link = transport();
    policy.setPreconnecting(true);
    policy.open(link);
    policy.setPreconnecting(false);
    expect(link.calls).toEqual(['connect']);
  });

  it('after a failed load, it tries again only when shown', () => {
    const policy = new ReconnectPolicy();
    const link = transport();
    policy.setPreconnecting(true);
    policy.open(link);
    policy.failed();
    expect(policy.getState()).toEqual({ connection: 'reconnecting', reconnectAt: null });
    vi.advanceTimersByTime(60_000);
    expect(link.calls).toEqual(['connect']);
    policy.setPreconnecting(false);
    expect(link.calls).toEqual(['connect', 'disconnect', 'connect']);
  });

  it('after close, a drop schedules nothing and a due retry does not fire', () => {
    const policy = new ReconnectPolicy();
    const link = transport();
    policy.open(link);
    policy.dropped();
    policy.close();
    expect(link.calls).toEqual(['connect', 'disconnect']);
    vi.advanceTimersByTime(60_000);
    policy.dropped();
    vi.advanceTimersByTime(60_000);
    expect(link.calls).toEqual(['connect', 'disconnect']);
  });
});
