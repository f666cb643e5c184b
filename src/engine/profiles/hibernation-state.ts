// A hibernated session's state at rest (issue 46, decisions.md 165, 177): the archive of its browser's
// profile directory with its open tabs and of its downloads and uploads folders, streamed through the very checks, brotli and sealed chunks
// of a saved profile's version (profile-streams.ts), under the profile key and within the same
// caps, each chunk bound to the session and the state's id (a state moved to another session or
// into a profile does not open). Its chunks are in `hibernation_chunks`; the session's row says
// which state is current and how many chunks it has, so any node of a cluster reads it. A session
// on a saved profile that ends while hibernated has its profile written back from it (decisions.md 179).
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { SessionRow, Store } from '../store/store.js';
import { keepsHibernationPath, type ArchiveConsumer, type ArchiveSource, type ProfileCapture, type ProfileFamily } from '../runtime/index.js';
import type { ProfileService } from './profiles.js';
import { readVersion, writeVersion, type ChunkRows, type ProfileStreamContext } from './profile-streams.js';
import { CHUNKED_FORMAT } from './sealed-stream.js';

/** The additional data's owner part: never a profile's id, so a state's chunk never opens as a profile's. */
const owner = (sessionId: string) => `hibernation:${sessionId}`;
const sessionOf = (ownerId: string) => ownerId.slice('hibernation:'.length);

/** A state's chunks, the table's queries. */
class HibernationChunks implements ChunkRows {
  constructor(private readonly store: Store) {}

  async version(stateId: string): Promise<{ data: Buffer; chunks: number } | undefined> {
    const row = await this.store.sql.get<{ hibernation_chunks: number }>('SELECT hibernation_chunks FROM sessions WHERE hibernation_state = ?', [stateId]);
    return row && { data: Buffer.from([CHUNKED_FORMAT]), chunks: Number(row.hibernation_chunks) };
  }

  async writeChunk(ownerId: string, stateId: string, seq: number, data: Buffer): Promise<void> {
    await this.store.sql.run('INSERT INTO hibernation_chunks (state_id, seq, session_id, data) VALUES (?, ?, ?, ?)', [stateId, seq, sessionOf(ownerId), data]);
  }

  async chunk(stateId: string, seq: number): Promise<Buffer | undefined> {
    return (await this.store.sql.get<{ data: Buffer }>('SELECT data FROM hibernation_chunks WHERE state_id = ? AND seq = ?', [stateId, seq]))?.data;
  }

  async dropChunks(stateId: string): Promise<void> {
    await this.store.sql.run('DELETE FROM hibernation_chunks WHERE state_id = ?', [stateId]);
  }
}

/** What a hibernation wrote: the state's id, its chunks and the files' bytes. */
export interface WrittenState {
  stateId: string;
  chunks: number;
  bytes: number;
}

export class HibernationStates {
  private readonly chunks: HibernationChunks;

  constructor(
    private readonly store: Store,
    private readonly profiles: Pick<ProfileService, 'sealing'> | undefined,
  ) {
    this.chunks = new HibernationChunks(store);
  }

  /** Whether states can be sealed here: profiles on, with a key (on Postgres, the operator's). */
  get enabled(): boolean {
    return this.profiles?.sealing() != null;
  }

  /** The cap of one state, in MB (the cap of one profile). */
  get maxMb(): number {
    return this.profiles?.sealing()?.maxProfileMb ?? 0;
  }

  /** The most one state's archive may hold, whole (the profile cap and the archive's headers). */
  get cap(): number {
    return this.profiles?.sealing()?.unpackedCap ?? 0;
  }

  private context(): ProfileStreamContext & { transfers: NonNullable<ReturnType<ProfileService['sealing']>>['transfers'] } {
    const sealing = this.profiles?.sealing();
    if (!sealing) throw new Error('hibernation needs saved profiles on, with a profile key');
    return { rows: this.chunks, key: sealing.key, limits: sealing.limits, unpackedCap: sealing.unpackedCap, transfers: sealing.transfers };
  }

  /**
   * Streams the session's state (`capture` closes its browser and packs its profile with its tabs)
   * into the store as a new state. Throws (a cap passed, an archive a restore would refuse) with
   * nothing of it kept.
   */
  async write(sessionId: string, family: ProfileFamily, capture: (options: ProfileCapture, consume: ArchiveConsumer) => Promise<void>): Promise<WrittenState> {
    const context = this.context();
    const stateId = randomBytes(16).toString('hex');
    return context.transfers.run(async () => {
      let written: WrittenState | undefined;
      try {
        await capture({ tabs: true, files: true, maxBytes: context.unpackedCap }, async (archive) => {
          const version = await writeVersion(context, owner(sessionId), stateId, archive, keepsHibernationPath(family));
          written = { stateId, chunks: version.chunks, bytes: version.bytes };
        });
      } catch (error) {
        await this.chunks.dropChunks(stateId).catch(() => undefined);
        throw error;
      }
      if (!written) throw new Error('the session handed back no archive');
      return written;
    });
  }

  /** Opens and checks the session's state whole, keeping nothing (before a resume starts anything). Throws SealedStateError or ArchiveRefusal. */
  async check(row: Pick<SessionRow, 'id' | 'hibernation_state'>): Promise<void> {
    const context = this.context();
    const stateId = row.hibernation_state;
    if (!stateId) throw new Error('the saved state is missing');
    await context.transfers.run(() => readVersion(context, owner(row.id), stateId, () => true), true);
  }

  /** The session's state as the archive its resume starts on (checked again as it streams into the session). */
  source(row: Pick<SessionRow, 'id' | 'hibernation_state'>, family: ProfileFamily): ArchiveSource {
    const context = this.context();
    const stateId = row.hibernation_state!;
    const keep = keepsHibernationPath(family);
    return (sink) => context.transfers.run(() => readVersion(context, owner(row.id), stateId, keep, sink), true);
  }

  /**
   * Hands the session's state, opened and checked, to `consume` as the archive a running browser's
   * capture would give (decisions.md 179: a session that ends hibernated writes its saved profile
   * back from it). Runs within the caller's transfer (the profile's save holds one): it takes none.
   */
  async capture(row: Pick<SessionRow, 'id' | 'hibernation_state'>, consume: ArchiveConsumer): Promise<void> {
    const context = this.context();
    const stateId = row.hibernation_state;
    if (!stateId) throw new Error('the saved state is missing');
    const archive = new PassThrough();
    const reading = readVersion(context, owner(row.id), stateId, () => true, archive);
    try {
      await consume(archive);
    } catch (error) {
      archive.destroy();
      await reading.catch(() => undefined);
      throw error;
    }
    // What the consumer left unread (the end of the archive) is let through, so the read ends.
    archive.resume();
    await reading;
  }

  /** Forgets every state of the session (it resumed, or ended). */
  async drop(sessionId: string, keep?: string): Promise<void> {
    if (keep) await this.store.sql.run('DELETE FROM hibernation_chunks WHERE session_id = ? AND state_id <> ?', [sessionId, keep]);
    else await this.store.sql.run('DELETE FROM hibernation_chunks WHERE session_id = ?', [sessionId]);
  }

  /**
   * Forgets the states of a session that ended, unless it still holds its saved profile: its end
   * writes the profile back from the state first, then drops it (decisions.md 179). Every node
   * hears of an end; only the one ending it knows when the save is done.
   */
  async dropEnded(sessionId: string): Promise<void> {
    await this.store.sql.run('DELETE FROM hibernation_chunks WHERE session_id = ? AND NOT EXISTS (SELECT 1 FROM profiles WHERE session_id = ?)', [sessionId, sessionId]);
  }
}
