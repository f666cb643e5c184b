// Placement (sessions/placement.ts): on one machine this node unless it drains or is full; in a
// cluster the least loaded live, active node that can start the browser. Plain rows stand in for
// the store; no engine, no browser.
import { describe, expect, it } from 'vitest';
import { leastLoaded, placeSession, type PlacementStore } from '../../src/engine/sessions/placement.js';
import type { NodeWithLoad } from '../../src/engine/store/store.js';

function node(id: string, load: number, capacity: number | null, extra: Partial<NodeWithLoad> = {}): NodeWithLoad {
  return { id, internal_url: '', advertised_url: '', capacity, browsers: '["chromium","firefox-esr"]', warm: '[]', state: 'active', started_at: 0, heartbeat_at: 0, load, ...extra };
}

function storeOf(nodes: NodeWithLoad[]): PlacementStore {
  return { node: async (id) => nodes.find((n) => n.id === id), nodes: async () => nodes };
}

const always = () => true;

describe('placement on one machine', () => {
  it('places on this node without a capacity, whatever its load', async () => {
    expect(await placeSession(storeOf([node('a', 500, null)]), { browser: 'chromium', nodeId: 'a', capacity: null })).toBe('a');
  });

  it('places on this node while it is under its capacity, and nowhere once it is full', async () => {
    expect(await placeSession(storeOf([node('a', 1, 2)]), { browser: 'chromium', nodeId: 'a', capacity: 2 })).toBe('a');
    expect(await placeSession(storeOf([node('a', 2, 2)]), { browser: 'chromium', nodeId: 'a', capacity: 2 })).toBeNull();
  });

  it('places nothing on a draining node', async () => {
    expect(await placeSession(storeOf([node('a', 0, null, { state: 'draining' })]), { browser: 'chromium', nodeId: 'a', capacity: null })).toBeNull();
  });

  it('places on a node not registered yet (no row: no load)', async () => {
    expect(await placeSession(storeOf([]), { browser: 'chromium', nodeId: 'a', capacity: 1 })).toBe('a');
  });
});

describe('placement in a cluster', () => {
  it('prefers a node with a warm browser of the session\'s browser and language, among those with room', async () => {
    const warmDe = (id: string, load: number, capacity: number | null) => node(id, load, capacity, { warm: '["chromium de","chromium en"]' });
    const nodes = [node('a', 0, 10), warmDe('b', 5, 10), warmDe('full', 10, 10)];
    expect(leastLoaded(nodes, 'chromium', always, 'de')?.id).toBe('b');
    // No warm browser of that kind anywhere (or no language given): the most free room, as before.
    expect(leastLoaded(nodes, 'chromium', always, 'ja')?.id).toBe('a');
    expect(leastLoaded(nodes, 'firefox-esr', always, 'de')?.id).toBe('a');
    expect(leastLoaded(nodes, 'chromium', always)?.id).toBe('a');
    expect(await placeSession(storeOf(nodes), { browser: 'chromium', language: 'en', nodeId: 'a', capacity: null, alive: always })).toBe('b');
  });

  it('counts what is awake, and prefers a node that keeps room to wake one of its sessions in standby (issue 46)', async () => {
    // One machine: two sessions in standby do not fill a capacity of 2.
    expect(await placeSession(storeOf([node('a', 0, 2, { standby: 2 })]), { browser: 'chromium', nodeId: 'a', capacity: 2 })).toBe('a');
    // A node's sessions in standby are not its load: b, with three of them, has the most free room.
    expect(leastLoaded([node('a', 2, 5, { standby: 1 }), node('b', 0, 4, { standby: 3 })], 'chromium', always)?.id).toBe('b');
    // b has more free room (half), but a new session there leaves none to wake its sleeper; a keeps room for both.
    const tight = [node('a', 3, 5, { standby: 1 }), node('b', 1, 2, { standby: 1 })];
    expect(leastLoaded(tight, 'chromium', always)?.id).toBe('a');
    expect(leastLoaded([node('a', 3, 5), node('b', 1, 2)], 'chromium', always)?.id).toBe('b');
    // Before a warm browser: a warm node without room to wake one comes after one with room.
    const warmTight = node('w', 3, 4, { standby: 1, warm: '["chromium en"]' });
    expect(leastLoaded([warmTight, node('a', 3, 5, { standby: 1 })], 'chromium', always, 'en')?.id).toBe('a');
  });

  it('takes the node with the most free room for its capacity, then the fewest sessions, then the id', () => {
    expect(leastLoaded([node('a', 3, 4), node('b', 2, 4), node('c', 4, 10)], 'chromium', always)?.id).toBe('c');
    // Half free each: the fewer sessions win.
    expect(leastLoaded([node('a', 3, 4), node('c', 5, 10), node('b', 2, 4)], 'chromium', always)?.id).toBe('b');
    expect(leastLoaded([node('b', 1, null), node('a', 1, null)], 'chromium', always)?.id).toBe('a');
    expect(leastLoaded([node('a', 3, null), node('b', 1, null)], 'chromium', always)?.id).toBe('b');
  });

  it('skips nodes that are full, draining, lost, silent, or cannot start the browser', async () => {
    const nodes = [
      node('full', 2, 2),
      node('draining', 0, 5, { state: 'draining' }),
      node('lost', 0, 5, { state: 'lost' }),
      node('silent', 0, 5),
      node('firefox-only', 0, 5, { browsers: '["firefox-esr"]' }),
      node('ok', 4, 5),
    ];
    const alive = (n: NodeWithLoad) => n.id !== 'silent';
    expect(await placeSession(storeOf(nodes), { browser: 'chromium', nodeId: 'full', capacity: 2, alive })).toBe('ok');
    expect(await placeSession(storeOf(nodes.filter((n) => n.id !== 'ok')), { browser: 'chromium', nodeId: 'full', capacity: 2, alive })).toBeNull();
  });

  it('may place on another node than this one', async () => {
    expect(await placeSession(storeOf([node('here', 3, 4), node('there', 0, 4)]), { browser: 'chromium', nodeId: 'here', capacity: 4, alive: always })).toBe('there');
  });
});
