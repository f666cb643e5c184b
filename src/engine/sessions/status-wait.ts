// Waiting for a session's next status move without polling (vm/data's `wait`, decisions.md 82):
// the service's `status` events carry every move made here and, in a cluster, every move another
// node announces (cluster/node-link.ts), so a waiter hears the move the moment followers do.

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

/**
 * Listens for the next move of session `id`. Taken before the session is read, so that a move
 * between the read and the wait is not missed.
 */
export function nextMoveOf(events: StatusEvents, id: string, timeoutMs: number, signal?: AbortSignal): StatusWait {
  let end = () => {};
  const moved = new Promise<void>((resolve) => {
    const onStatus = (change: { id: string }) => {
      if (change.id === id) end();
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
