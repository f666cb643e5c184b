// A session's lifecycle (decisions.md 1-6, 38): the one table of the status moves that may happen
// and why. The service checks each move it makes against it; the store reads from it what ending
// a gone node's sessions does. Plain data, no store and no runtime, so it is tested on its own.
import type { SessionStatus, WebhookEventType } from '../../protocol/index.js';

export type { SessionStatus };

/** Why a session moves. */
export type MoveCause =
  /** Its browser is ready (the runtime started it). */
  | 'ready'
  /** Its runtime could not start. */
  | 'start-failed'
  /** Its account removed it (vm/remove, or v6's launch ending the client's earlier session). */
  | 'removed'
  /** Its runtime has ended after a removal. */
  | 'stopped'
  /** The service ended it: a limit (duration, idle, plan), a crash of its browser or display. */
  | 'suspended'
  /** The node that ran it restarted or was declared lost: its runtime is gone. */
  | 'node-gone';

export interface Transition {
  from: SessionStatus;
  to: SessionStatus;
  cause: MoveCause;
}

/** Every legal move; anything not listed here never happens (`deleted` is final). */
export const TRANSITIONS: readonly Transition[] = [
  { from: 'starting', to: 'running', cause: 'ready' },
  { from: 'starting', to: 'error', cause: 'start-failed' },
  { from: 'starting', to: 'stopping', cause: 'removed' },
  { from: 'starting', to: 'error', cause: 'node-gone' },
  { from: 'running', to: 'stopping', cause: 'removed' },
  { from: 'running', to: 'suspended', cause: 'suspended' },
  { from: 'running', to: 'suspended', cause: 'node-gone' },
  { from: 'stopping', to: 'deleted', cause: 'stopped' },
  { from: 'stopping', to: 'deleted', cause: 'node-gone' },
  { from: 'error', to: 'deleted', cause: 'removed' },
  { from: 'suspended', to: 'deleted', cause: 'removed' },
];

/** Whether a session may move from `from` to `to` (for any cause, or for `cause`). */
export function isLegalMove(from: SessionStatus, to: SessionStatus, cause?: MoveCause): boolean {
  return TRANSITIONS.some((t) => t.from === from && t.to === to && (cause === undefined || t.cause === cause));
}

/**
 * The statuses a move for `cause` to `to` may start from, of those the caller names. A move the
 * table does not allow is a mistake in the engine, not a race: it throws instead of writing.
 */
export function movableFrom(from: readonly SessionStatus[], to: SessionStatus, cause: MoveCause): SessionStatus[] {
  for (const status of from) {
    if (!isLegalMove(status, to, cause)) throw new Error(`a session cannot move from ${status} to ${to} (${cause})`);
  }
  return [...from];
}

/** What a move that ends a session writes besides its status. */
export interface EndingFields {
  ended_at?: number;
  end_reason?: string;
  /** An error before the session was ever ready does not count against the cycle (decisions.md 5). */
  counted?: boolean;
}

/**
 * What the end of a node (lost or restarted) does to each of its sessions, read from the table:
 * a running one is suspended, a starting one errs (uncounted), a stopping one is deleted.
 */
export function nodeGoneMoves(now: number, reasons: { running: string; starting: string }): Array<{ from: SessionStatus; to: SessionStatus; fields: EndingFields }> {
  return TRANSITIONS.filter((t) => t.cause === 'node-gone')
    // Running sessions first: the order in which followers have always heard of them.
    .sort((a, b) => NODE_GONE_ORDER.indexOf(a.from) - NODE_GONE_ORDER.indexOf(b.from))
    .map(({ from, to }) => ({ from, to, fields: endingFields(to, now, reasons[from as 'running' | 'starting']) }));
}

const NODE_GONE_ORDER: readonly SessionStatus[] = ['running', 'starting', 'stopping'];

function endingFields(to: SessionStatus, now: number, reason: string | undefined): EndingFields {
  switch (to) {
    case 'suspended':
      return { ended_at: now, end_reason: reason! };
    case 'error':
      return { ended_at: now, counted: false, end_reason: reason! };
    default:
      // A stopping session already carries its end.
      return {};
  }
}

/**
 * The event a session's move to `to` makes for whoever follows its account (webhooks: the session
 * became running, failed to start, or ended; one of the last two per session, never both), or
 * null (moves on to deleted, and stopping after an end, make none).
 */
export function eventTypeOf(to: string, cause: string): WebhookEventType | null {
  if (to === 'running') return 'session.running';
  if (to === 'error') return 'session.error';
  // Removal ends the session when it is asked for (stopping); the service's own ends suspend it.
  if (to === 'suspended' || (to === 'stopping' && cause === 'removed')) return 'session.ended';
  return null;
}
