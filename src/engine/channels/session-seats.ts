// Seats per session for a channel that has one kind of connection (sound's listeners, automation's
// programs): at most `perSession` at once on this node, each taking `filesPerSeat` of the engine's
// open files above its reserve. (RFB's seats, per link and per address, are viewer/viewer-seats.ts.)
import type { OpenFiles } from '../runtime/open-files.js';
import type { ChannelSeat, SeatRefusal } from './channel.js';

export class SessionSeats {
  private readonly held = new Map<string, number>();

  constructor(
    private readonly perSession: number,
    private readonly filesPerSeat: number,
    private readonly openFiles?: OpenFiles,
  ) {}

  /** A seat for a connection to `sessionId`, or why there is none. */
  take(sessionId: string): ChannelSeat | SeatRefusal {
    const held = this.held.get(sessionId) ?? 0;
    if (held >= this.perSession) return 'full';
    if (this.openFiles && !this.openFiles.take(this.filesPerSeat, 'viewer')) return 'busy';
    this.held.set(sessionId, held + 1);
    let left = false;
    return {
      leave: () => {
        if (left) return;
        left = true;
        this.openFiles?.give(this.filesPerSeat);
        const now = (this.held.get(sessionId) ?? 1) - 1;
        if (now <= 0) this.held.delete(sessionId);
        else this.held.set(sessionId, now);
      },
    };
  }

  clear(): void {
    this.held.clear();
  }
}
