// The runtime's pieces that need no browser: which events end a session and which are notices,
// and a session's parts stopped in the order that ends a confined session at once.
import { describe, expect, it } from 'vitest';
import { ENDS_SESSION, runtimeEvent } from '../../src/engine/runtime/session/runtime-events.js';
import { SessionParts, type SessionPart } from '../../src/engine/runtime/session/session-parts.js';

describe('runtime events', () => {
  it('end the session for exits, crashes, a lost guard and a browser connection gone unreadable; a refusal is a notice', () => {
    expect(Object.entries(ENDS_SESSION).filter(([, ends]) => ends).map(([kind]) => kind).sort()).toEqual(['browser-exited', 'display-exited', 'guard-lost', 'page-crashed', 'unreadable']);
    expect(runtimeEvent('r1', 'refused', 'refused file:///etc')).toEqual({ sessionId: 'r1', kind: 'refused', ends: false, message: 'refused file:///etc' });
    expect(runtimeEvent('r1', 'display-exited', 'Xvnc exited').ends).toBe(true);
  });
});

describe('session parts', () => {
  function part(name: string, log: string[], extra: Partial<SessionPart> = {}): SessionPart {
    return { name: name as never, value: { name } as never, stop: async () => void log.push(`stop ${name}`), ...extra };
  }

  it('release last-first, then the sandbox, then the rest', async () => {
    const log: string[] = [];
    const parts = new SessionParts();
    parts.add(part('sandbox', log, { endsEveryProcess: true }));
    parts.add(part('egress', log));
    parts.add(part('display', log, { pids: () => [11, 12] }));
    parts.add(part('browser', log, { pids: () => [13], release: async () => void log.push('release browser') }));
    expect(parts.names()).toEqual(['sandbox', 'egress', 'display', 'browser']);
    expect(parts.pids()).toEqual([11, 12, 13]);
    await parts.stop();
    expect(log.slice(0, 2)).toEqual(['release browser', 'stop sandbox']);
    expect(log.slice(2).sort()).toEqual(['stop browser', 'stop display', 'stop egress']);
  });

  it('take each part once and name one that is missing', () => {
    const parts = new SessionParts();
    parts.add(part('display', []));
    expect(() => parts.add(part('display', []))).toThrow(/already has its display/);
    expect(() => parts.require('browser')).toThrow(/has no browser/);
    expect(parts.get('browser')).toBeUndefined();
  });
});
