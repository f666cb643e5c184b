// vm/data's long polls (status-wait.ts, issue 49): a thousand waiters on one starting session are
// all answered when it moves, but a turn at a time, so that what else the engine serves meanwhile
// (another account's call, /healthz) gets its turn between them instead of after all of them.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { nextMoveOf, WakeTurns, WAKES_PER_TURN } from '../../src/engine/sessions/status-wait.js';

describe('waiters for a session\'s next move', () => {
  it('are all answered when it moves, a turn at a time, with other work served between turns', async () => {
    const events = new EventEmitter();
    const turns = new WakeTurns();
    let answered = 0;
    const waits = Array.from({ length: 1000 }, () => nextMoveOf(events, 'session', 60_000, undefined, turns));
    const all = Promise.all(waits.map((wait) => wait.moved.then(() => answered++)));
    events.emit('status', { id: 'other', status: 'running' });
    events.emit('status', { id: 'session', status: 'running' });
    // Another request arrives as the move is heard: it is served before most waiters are answered.
    const seenByOther = await new Promise<number>((resolve) => setImmediate(() => setImmediate(() => resolve(answered))));
    expect(seenByOther).toBeGreaterThan(0);
    expect(seenByOther).toBeLessThanOrEqual(2 * WAKES_PER_TURN);
    await all;
    expect(answered).toBe(1000);
    // Every waiter stopped listening.
    expect(events.listenerCount('status')).toBe(0);
  });

  it('answers at its timeout and on abort without waiting for a turn', async () => {
    const events = new EventEmitter();
    const turns = new WakeTurns();
    const timedOut = nextMoveOf(events, 'session', 10, undefined, turns);
    await timedOut.moved;
    const abort = new AbortController();
    const aborted = nextMoveOf(events, 'session', 60_000, abort.signal, turns);
    abort.abort();
    await aborted.moved;
    expect(events.listenerCount('status')).toBe(0);
  });
});
