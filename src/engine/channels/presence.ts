// Who is attached to each session on this node, by kind: viewers (RFB) today; sound listeners and
// automation programs are kinds of their own. One count answers both questions asked of it: how
// many viewers the share page shows, and whether the session is attended (the idle sweep ends a
// session nobody is attached to). Each change is written to the store (the viewer count and when
// the session was last attended) and told to followers here and, through the cluster, elsewhere.
import { EventEmitter } from 'node:events';

/** What an attachment is: a viewer of the display, a listener of its sound, a program on its DevTools. */
export type AttachmentKind = 'viewer' | 'listener' | 'program';

export const ATTACHMENT_KINDS: readonly AttachmentKind[] = ['viewer', 'listener', 'program'];

export interface PresenceOptions {
  /** Writes a session's viewer count and the time it was last attended (the store's sessions row). */
  record(sessionId: string, fields: { last_viewer_at: number; viewers: number }): Promise<unknown>;
  now: () => number;
  /** Tells the other nodes of a cluster that a session's attachments changed; absent on one machine. */
  announce?: (sessionId: string) => void;
}

export interface Attachment {
  readonly kind: AttachmentKind;
  /** Ends the attachment (once; later calls do nothing). */
  leave(): void;
}

/** One attachment made or ended on this node, with what it was (a recording's timeline follows them, issue 35). */
export interface AttachmentChange {
  id: string;
  kind: AttachmentKind;
  joined: boolean;
  /** The channel it came through, and what its credential lets it do. */
  channel?: string;
  rights?: 'control' | 'view';
}

export class Presence extends EventEmitter<{ changed: [{ id: string }]; attachment: [AttachmentChange] }> {
  private readonly counts = new Map<string, Map<AttachmentKind, number>>();
  private readonly writes = new Set<Promise<void>>();

  constructor(private readonly options: PresenceOptions) {
    super();
    this.setMaxListeners(0);
  }

  /** Counts one attachment of `kind` to a session this node runs, until its `leave()`. */
  attach(sessionId: string, kind: AttachmentKind, about: { channel?: string; rights?: 'control' | 'view' } = {}): Attachment {
    if (!ATTACHMENT_KINDS.includes(kind)) throw new Error(`unknown attachment kind "${String(kind)}"; expected one of ${ATTACHMENT_KINDS.join(', ')}`);
    const session = this.counts.get(sessionId) ?? new Map<AttachmentKind, number>();
    session.set(kind, (session.get(kind) ?? 0) + 1);
    this.counts.set(sessionId, session);
    this.changed(sessionId);
    this.emit('attachment', { id: sessionId, kind, joined: true, ...about });
    let left = false;
    return {
      kind,
      leave: () => {
        if (left) return;
        left = true;
        const remaining = (session.get(kind) ?? 1) - 1;
        if (remaining > 0) session.set(kind, remaining);
        else session.delete(kind);
        if (session.size === 0 && this.counts.get(sessionId) === session) this.counts.delete(sessionId);
        this.changed(sessionId);
        this.emit('attachment', { id: sessionId, kind, joined: false, ...about });
      },
    };
  }

  /** Attachments to a session on this node: of one kind, or of every kind. */
  count(sessionId: string, kind?: AttachmentKind): number {
    const session = this.counts.get(sessionId);
    if (!session) return 0;
    if (kind) return session.get(kind) ?? 0;
    let total = 0;
    for (const n of session.values()) total += n;
    return total;
  }

  /** Attachments to every session on this node, by kind (the metrics' gauge). */
  totals(): Record<AttachmentKind, number> {
    const totals: Record<AttachmentKind, number> = { viewer: 0, listener: 0, program: 0 };
    for (const session of this.counts.values()) for (const [kind, n] of session) totals[kind] += n;
    return totals;
  }

  /** Whether anything is attached to the session here: an attended session is never idle. */
  attended(sessionId: string): boolean {
    return this.counts.has(sessionId);
  }

  /** Another node's attachments to a session changed (cluster/node-link.ts calls this). */
  changedElsewhere(sessionId: string): void {
    this.emit('changed', { id: sessionId });
  }

  /** Something else the share state shows changed for a session this node runs (who drives, issue 36): followers here and on every node hear it. */
  tell(sessionId: string): void {
    this.emit('changed', { id: sessionId });
    this.options.announce?.(sessionId);
  }

  /** Resolves once every write begun so far has ended (the store may close after). */
  async settled(): Promise<void> {
    while (this.writes.size > 0) await Promise.allSettled([...this.writes]);
  }

  /** Stores the viewer count, then tells followers here and on every node. */
  private changed(sessionId: string): void {
    const write = this.options
      .record(sessionId, { last_viewer_at: this.options.now(), viewers: this.count(sessionId, 'viewer') })
      .then(() => {
        this.emit('changed', { id: sessionId });
        this.options.announce?.(sessionId);
      })
      // A failed write leaves the count in memory right; the sweep writes the time again.
      .catch(() => undefined)
      .finally(() => this.writes.delete(write));
    this.writes.add(write);
  }
}
