// Waiting for a session's next status move without polling (vm/data's `wait`, decisions.md 82):
// the service's `status` events carry every move made here and, in a cluster, every move another
// node announces (cluster/node-link.ts), so a waiter hears the move the moment followers do. The
// waiters one move wakes are let go a turn at a time (WakeTurns), so that a thousand long polls on
// one starting session do not hold the event loop while they are all answered (issue 49).

type StatusListener = (change: { id: string; status: string }) => void;

/** What a waiter listens to: the session service's status events. */
export interface StatusEvents {
  on(event: 'status', listener: StatusListener): unknown;
  off(event: 'status', listener: StatusListener): unknown;
}

export interface StatusWait {
  /** Settles at the session's next move, after `timeoutMs`, or when `signal` aborts; never rejects. */
  readonly moved: Promise<void>;
  /** Stops listening (the waiter has its answer). */
  end(): void;
}

/** Waiters let go in one turn of the event loop; the rest wait for the next turns, I/O between. */
export const WAKES_PER_TURN = 32;

/** Lets woken waiters go WAKES_PER_TURN at a time, each turn after the loop has served its I/O. */
export class WakeTurns {
  private readonly queue: Array<() => void> = [];
  private scheduled = false;

  release(wake: () => void): void {
    this.queue.push(wake);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.turn());
  }

  private turn(): void {
    for (const wake of this.queue.splice(0, WAKES_PER_TURN)) wake();
    if (this.queue.length > 0) setImmediate(() => this.turn());
    else this.scheduled = false;
  }
}

/**
 * Listens for the next move of session `id`. Taken before the session is read, so that a move
 * between the read and the wait is not missed.
 */
export function nextMoveOf(events: StatusEvents, id: string, timeoutMs: number, signal?: AbortSignal, turns?: WakeTurns): StatusWait {
  let end = () => {};
  const moved = new Promise<void>((resolve) => {
    const onStatus = (change: { id: string }) => {
      if (change.id !== id) return;
      if (!turns) return end();
      // Heard now (no later move is missed); answered in its turn.
      events.off('status', onStatus);
      turns.release(() => end());
    };
    // The caller's bound on the wait, not a pause in anyone's start.
    const timer = setTimeout(() => end(), timeoutMs);
    end = () => {
      clearTimeout(timer);
      events.off('status', onStatus);
      signal?.removeEventListener('abort', end);
      resolve();
    };
    events.on('status', onStatus);
    if (signal?.aborted) end();
    else signal?.addEventListener('abort', end, { once: true });
  });
  return { moved, end: () => end() };
}
