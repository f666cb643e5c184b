// Presence without a browser: every kind of attachment counted per session, the viewer count
// written and told to followers here and on other nodes, leaving once, bad kinds refused.
import { describe, expect, it } from 'vitest';
import { Presence } from '../../src/engine/channels/presence.js';

function presence() {
  const records: Array<{ id: string; last_viewer_at: number; viewers: number }> = [];
  const announced: string[] = [];
  const changed: string[] = [];
  let now = 1000;
  const p = new Presence({ record: async (id, fields) => void records.push({ id, ...fields }), now: () => now++, announce: (id) => announced.push(id) });
  p.on('changed', ({ id }) => changed.push(id));
  return { p, records, announced, changed };
}

describe('presence', () => {
  it('counts each kind per session; any attachment keeps a session attended', async () => {
    const { p, records } = presence();
    const viewer = p.attach('s1', 'viewer');
    const program = p.attach('s1', 'program');
    p.attach('s2', 'listener');
    expect(p.count('s1')).toBe(2);
    expect(p.count('s1', 'viewer')).toBe(1);
    expect(p.count('s1', 'listener')).toBe(0);
    expect(p.attended('s2')).toBe(true);
    viewer.leave();
    expect(p.attended('s1')).toBe(true);
    program.leave();
    expect(p.attended('s1')).toBe(false);
    expect(p.count('s1')).toBe(0);
    await p.settled();
    // The store keeps the viewer count (viewers only) and when the session was last attended.
    expect(records.filter((r) => r.id === 's1').map((r) => r.viewers)).toEqual([1, 1, 0, 0]);
    expect(records.every((r) => r.last_viewer_at >= 1000)).toBe(true);
  });

  it('leaves once, however often leave() is called', async () => {
    const { p, records } = presence();
    const a = p.attach('s1', 'viewer');
    p.attach('s1', 'viewer');
    a.leave();
    a.leave();
    expect(p.count('s1', 'viewer')).toBe(1);
    await p.settled();
    expect(records.length).toBe(3);
  });

  it('tells followers here after the write, and the other nodes', async () => {
    const { p, announced, changed } = presence();
    p.attach('s1', 'viewer').leave();
    await p.settled();
    expect(changed).toEqual(['s1', 's1']);
    expect(announced).toEqual(['s1', 's1']);
    p.changedElsewhere('s9');
    expect(changed.at(-1)).toBe('s9');
    expect(announced).toEqual(['s1', 's1']);
  });

  it('keeps counting when the store fails, and tells no one of a write that failed', async () => {
    const changed: string[] = [];
    const p = new Presence({ record: () => Promise.reject(new Error('database is locked')), now: () => 0 });
    p.on('changed', ({ id }) => changed.push(id));
    p.attach('s1', 'viewer');
    await p.settled();
    expect(p.count('s1', 'viewer')).toBe(1);
    expect(changed).toEqual([]);
  });

  it('refuses an unknown kind and changes nothing', () => {
    const { p } = presence();
    expect(() => p.attach('s1', 'ghost' as never)).toThrow(/unknown attachment kind "ghost"/);
    expect(p.attended('s1')).toBe(false);
  });
});
