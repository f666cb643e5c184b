// The lifecycle table (sessions/lifecycle.ts) allows exactly the moves of decisions.md 1-6 and 38:
// every pair of statuses is checked, legal and illegal, and what the end of a node does is read
// from the same table. No store, runtime or browser.
import { describe, expect, it } from 'vitest';
import { SESSION_STATUSES, type SessionStatus } from '../../src/protocol/index.js';
import { isLegalMove, movableFrom, nodeGoneMoves, TRANSITIONS, type MoveCause } from '../../src/engine/sessions/lifecycle.js';

const LEGAL: Array<[SessionStatus, SessionStatus, MoveCause]> = [
  ['starting', 'running', 'ready'],
  ['starting', 'error', 'start-failed'],
  ['starting', 'stopping', 'removed'],
  ['starting', 'error', 'node-gone'],
  ['running', 'stopping', 'removed'],
  ['running', 'suspended', 'suspended'],
  ['running', 'suspended', 'node-gone'],
  ['stopping', 'deleted', 'stopped'],
  ['stopping', 'deleted', 'node-gone'],
  ['error', 'deleted', 'removed'],
  ['suspended', 'deleted', 'removed'],
];

describe('the lifecycle table', () => {
  it('lists exactly the legal moves, each with its cause', () => {
    expect(TRANSITIONS.map((t) => [t.from, t.to, t.cause]).sort()).toEqual([...LEGAL].sort());
  });

  it('allows every legal move and refuses every other pair of statuses', () => {
    for (const from of SESSION_STATUSES) {
      for (const to of SESSION_STATUSES) {
        const legal = LEGAL.some(([f, t]) => f === from && t === to);
        expect(isLegalMove(from, to), `${from} -> ${to}`).toBe(legal);
      }
    }
  });

  it('ties each move to its cause', () => {
    expect(isLegalMove('starting', 'error', 'start-failed')).toBe(true);
    expect(isLegalMove('starting', 'error', 'removed')).toBe(false);
    expect(isLegalMove('running', 'stopping', 'suspended')).toBe(false);
    expect(isLegalMove('stopping', 'deleted', 'removed')).toBe(false);
  });

  it('never moves a deleted session, nor back to starting', () => {
    for (const status of SESSION_STATUSES) {
      expect(isLegalMove('deleted', status)).toBe(false);
      expect(isLegalMove(status, 'starting')).toBe(false);
    }
  });

  it('throws on a move the table does not allow instead of writing it', () => {
    expect(movableFrom(['error', 'suspended'], 'deleted', 'removed')).toEqual(['error', 'suspended']);
    expect(() => movableFrom(['running', 'deleted'], 'stopping', 'removed')).toThrow(/deleted to stopping/);
    expect(() => movableFrom(['running'], 'running', 'ready')).toThrow(/running to running/);
  });

  it('ends a gone node\'s sessions as the table says: running suspended, starting error (uncounted), stopping deleted', () => {
    expect(nodeGoneMoves(1000, { running: 'lost while running', starting: 'lost while starting' })).toEqual([
      { from: 'running', to: 'suspended', fields: { ended_at: 1000, end_reason: 'lost while running' } },
      { from: 'starting', to: 'error', fields: { ended_at: 1000, counted: false, end_reason: 'lost while starting' } },
      { from: 'stopping', to: 'deleted', fields: {} },
    ]);
  });
});
