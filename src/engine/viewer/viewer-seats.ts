// Seats for the viewers of the sessions on this node: the share link's holders and the view-only
// link's watchers each have seats of their own, so watchers never lock out the holder; one client
// address holds at most so many viewers; and a viewer's files come from the engine's open files
// above half its reserve (decisions.md 47, 48).
import type { OpenFiles } from '../runtime/open-files.js';
import type { ViewerRights } from './viewer-room.js';

export interface ViewerSeatLimits {
  /** Viewers on a session's share link (they may control) at once. */
  controlling: number;
  /** Viewers on a session's view-only link at once: never taken from the share link's seats. */
  watching: number;
  /** Viewers one client address holds at once, over every session of this node. */
  perAddress: number;
}

export const DEFAULT_VIEWER_SEATS: ViewerSeatLimits = { controlling: 8, watching: 8, perAddress: 64 };

/** Files a viewer makes the engine hold: its WebSocket and its relay's three pipes into the session. */
export const FILES_PER_VIEWER = 4;

/** Why a viewer got no seat: its link's seats are taken, its address holds its share, or the engine is at its reserve. */
export type SeatRefusal = 'full' | 'address' | 'busy';

export interface ViewerSeat {
  /** Gives the seat back (once; later calls do nothing). */
  leave(): void;
}

export class ViewerSeats {
  private readonly taken = new Map<string, { control: number; view: number }>();
  private readonly byAddress = new Map<string, number>();

  constructor(
    private readonly limits: ViewerSeatLimits = DEFAULT_VIEWER_SEATS,
    private readonly openFiles?: OpenFiles,
  ) {}

  /**
   * A seat for a viewer of `sessionId` with `rights`, reached from `address` (null: carried by
   * another node, which counted the address there), or why there is none.
   */
  take(sessionId: string, rights: ViewerRights, address: string | null): ViewerSeat | SeatRefusal {
    const session = this.taken.get(sessionId) ?? { control: 0, view: 0 };
    if (session[rights] >= (rights === 'control' ? this.limits.controlling : this.limits.watching)) return 'full';
    if (address !== null && (this.byAddress.get(address) ?? 0) >= this.limits.perAddress) return 'address';
    if (this.openFiles && !this.openFiles.take(FILES_PER_VIEWER, 'viewer')) return 'busy';
    session[rights] += 1;
    this.taken.set(sessionId, session);
    if (address !== null) this.byAddress.set(address, (this.byAddress.get(address) ?? 0) + 1);
    let left = false;
    return {
      leave: () => {
        if (left) return;
        left = true;
        this.openFiles?.give(FILES_PER_VIEWER);
        session[rights] -= 1;
        if (session.control === 0 && session.view === 0 && this.taken.get(sessionId) === session) this.taken.delete(sessionId);
        if (address === null) return;
        const count = (this.byAddress.get(address) ?? 1) - 1;
        if (count === 0) this.byAddress.delete(address);
        else this.byAddress.set(address, count);
      },
    };
  }
}
