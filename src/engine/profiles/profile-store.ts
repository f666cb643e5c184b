// Saved profiles in the store (decisions.md 85-88), on SQLite or Postgres: the profiles, their
// saved versions (sealed: sealed-state.ts), the one session each may run at a time, and expiry.
// A session takes its profile inside the create transaction only when no live session holds it,
// so two creates on any nodes never both run on one profile; a save inserts the new version and
// points the profile at it in one transaction, the plan's total checked in it, so a crash keeps the
// earlier version and two saves at once never pass the total. A version's sealed chunks
// (sealed-stream.ts) are written as its save streams, before that transaction; a profile's chunks
// go with it (ON DELETE CASCADE), and those of a save that did not finish with its next save.
import type { SqlConnection } from '../store/database.js';
import type { Store } from '../store/store.js';

export interface ProfileRow {
  id: string;
  account_id: string;
  name: string;
  browser: string;
  family: string;
  created_at: number;
  used_at: number;
  bytes: number;
  stored_bytes: number;
  version_id: string | null;
  session_id: string | null;
  save_error: string | null;
}

/**
 * A profile is free when no session holds it, or the one that did has ended: `error` and `deleted`
 * at once, `suspended` once its save had time to finish (a save that ran that long was cut off).
 */
const FREE = `(p.session_id IS NULL OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = p.session_id AND (s.status IN ('error', 'deleted') OR (s.status = 'suspended' AND s.ended_at < ?))) OR NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = p.session_id))`;

/** The lock every change to an account's profiles takes (their count, their bytes, their removal). */
export function accountLock(accountId: string): string {
  return `rbk-profiles-${accountId}`;
}

export class ProfileStore {
  constructor(private readonly store: Store) {}

  private get sql(): SqlConnection {
    return this.store.sql;
  }

  async insert(row: ProfileRow): Promise<void> {
    const columns = Object.keys(row);
    await this.sql.run(`INSERT INTO profiles (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`, Object.values(row));
  }

  /** The account's profiles, oldest first (the profile itself when `id` is given). */
  list(accountId: string, id?: string): Promise<ProfileRow[]> {
    return id === undefined
      ? this.sql.all<ProfileRow>('SELECT * FROM profiles WHERE account_id = ? ORDER BY created_at, id', [accountId])
      : this.sql.all<ProfileRow>('SELECT * FROM profiles WHERE account_id = ? AND id = ?', [accountId, id]);
  }

  get(id: string): Promise<ProfileRow | undefined> {
    return this.sql.get<ProfileRow>('SELECT * FROM profiles WHERE id = ?', [id]);
  }

  async rename(accountId: string, id: string, name: string): Promise<boolean> {
    return (await this.sql.run('UPDATE profiles SET name = ? WHERE id = ? AND account_id = ?', [name, id, accountId])) > 0;
  }

  /** Removes a free profile with its versions: 'ok', or why not. */
  remove(accountId: string, id: string, now: number, graceMs: number): Promise<'ok' | 'unknown' | 'in-use'> {
    return this.store.atomically(async (tx) => {
      const row = await tx.sql.get<{ free: number | boolean }>(`SELECT ${FREE} AS free FROM profiles p WHERE p.id = ? AND p.account_id = ?`, [now - graceMs, id, accountId]);
      if (!row) return 'unknown';
      if (!row.free) return 'in-use';
      await tx.sql.run('DELETE FROM profile_versions WHERE profile_id = ?', [id]);
      await tx.sql.run('DELETE FROM profiles WHERE id = ?', [id]);
      return 'ok';
    }, accountLock(accountId));
  }

  /**
   * Whether the session holding the profile has ended and may still be writing it back
   * (`stopping` after a remove, `suspended` within the save's grace), rather than running.
   */
  async heldByEndingSession(id: string): Promise<boolean> {
    const row = await this.sql.get<{ id: string }>(`SELECT s.id FROM profiles p JOIN sessions s ON s.id = p.session_id WHERE p.id = ? AND s.status IN ('stopping', 'suspended')`, [id]);
    return row !== undefined;
  }

  /** How many profiles the account has and the bytes they hold (the meters). */
  async usage(accountId: string, tx: SqlConnection = this.sql): Promise<{ count: number; bytes: number }> {
    const row = await tx.get<{ count: number; bytes: number | null }>('SELECT COUNT(*) AS count, SUM(bytes) AS bytes FROM profiles WHERE account_id = ?', [accountId]);
    return { count: Number(row?.count ?? 0), bytes: Number(row?.bytes ?? 0) };
  }

  /**
   * Takes the profile for `sessionId` (inside the create transaction): only when it is free and
   * still at the version the caller read. False when another session holds it, or it moved on.
   */
  async claim(tx: SqlConnection, accountId: string, id: string, sessionId: string, versionId: string | null, now: number, graceMs: number): Promise<boolean> {
    const changed = await tx.run(
      `UPDATE profiles SET session_id = ?, used_at = ? WHERE id IN (SELECT p.id FROM profiles p WHERE p.id = ? AND p.account_id = ? AND COALESCE(p.version_id, '') = ? AND ${FREE})`,
      [sessionId, now, id, accountId, versionId ?? '', now - graceMs],
    );
    return changed > 0;
  }

  /** Lets the profile go, if `sessionId` still holds it. */
  async release(id: string, sessionId: string): Promise<void> {
    await this.sql.run('UPDATE profiles SET session_id = NULL WHERE id = ? AND session_id = ?', [id, sessionId]);
  }

  /** After a restart: the profiles this node's ended sessions held are free (nothing of theirs runs, no save is under way). */
  async releaseEndedOnNode(nodeId: string): Promise<void> {
    await this.sql.run(`UPDATE profiles SET session_id = NULL WHERE session_id IN (SELECT id FROM sessions WHERE node_id = ? AND status IN ('suspended', 'error', 'deleted'))`, [nodeId]);
  }

  /** A version as stored: its own bytes (a whole sealed blob of format 1, or the format byte of chunked ones) and its chunks' count. */
  async version(versionId: string): Promise<{ data: Buffer; chunks: number } | undefined> {
    const row = await this.sql.get<{ data: Buffer; chunks: number }>('SELECT data, chunks FROM profile_versions WHERE id = ?', [versionId]);
    return row && { data: row.data, chunks: Number(row.chunks) };
  }

  /** Writes one sealed chunk of a version a save is writing (before its version row: decisions.md 138). */
  async writeChunk(profileId: string, versionId: string, seq: number, data: Buffer): Promise<void> {
    await this.sql.run('INSERT INTO profile_chunks (version_id, seq, profile_id, data) VALUES (?, ?, ?, ?)', [versionId, seq, profileId, data]);
  }

  /** One sealed chunk of a version, or undefined when it is missing. */
  async chunk(versionId: string, seq: number): Promise<Buffer | undefined> {
    return (await this.sql.get<{ data: Buffer }>('SELECT data FROM profile_chunks WHERE version_id = ? AND seq = ?', [versionId, seq]))?.data;
  }

  /** Drops the chunks of a version that was not kept (a save that failed or was refused). */
  async dropChunks(versionId: string): Promise<void> {
    await this.sql.run('DELETE FROM profile_chunks WHERE version_id = ?', [versionId]);
  }

  /**
   * Makes a version whose chunks are written current, dropping the earlier one (its row and its
   * chunks, and those of any save cut off before), in one transaction; only while `sessionId`
   * holds the profile (a removed profile, or one another session took, is left alone: 'gone'),
   * and only if the account's profiles stay within `planBytes` together (null: no cap), else the
   * bytes the others hold. The total is read in the same transaction, under the account's lock,
   * so two saves at once never both pass it (decisions.md 129). A refused or 'gone' version's
   * chunks are the caller's to drop.
   */
  saveVersion(id: string, sessionId: string, version: { id: string; data: Buffer; chunks: number; stored: number; bytes: number }, now: number, planBytes: number | null = null): Promise<'saved' | 'gone' | { others: number }> {
    return this.withAccountOf(id, async (tx, accountId) => {
      const row = await tx.sql.get<{ version_id: string | null }>('SELECT version_id FROM profiles WHERE id = ? AND session_id = ?', [id, sessionId]);
      if (!row) return 'gone';
      if (planBytes !== null) {
        const others = await tx.sql.get<{ bytes: number | null }>('SELECT SUM(bytes) AS bytes FROM profiles WHERE account_id = ? AND id <> ?', [accountId, id]);
        const othersBytes = Number(others?.bytes ?? 0);
        if (othersBytes + version.bytes > planBytes) return { others: othersBytes };
      }
      await tx.sql.run('INSERT INTO profile_versions (id, profile_id, created_at, bytes, data, chunks) VALUES (?, ?, ?, ?, ?, ?)', [version.id, id, now, version.bytes, version.data, version.chunks]);
      await tx.sql.run('UPDATE profiles SET version_id = ?, bytes = ?, stored_bytes = ?, used_at = ?, save_error = NULL WHERE id = ?', [version.id, version.bytes, version.stored, now, id]);
      await tx.sql.run('DELETE FROM profile_versions WHERE profile_id = ? AND id <> ?', [id, version.id]);
      await tx.sql.run('DELETE FROM profile_chunks WHERE profile_id = ? AND version_id <> ?', [id, version.id]);
      return 'saved' as const;
    });
  }

  /**
   * Runs `work` in a transaction under the lock of the profile's account (the one its creates and
   * removes take too: every change to what the account's profiles hold waits for the others);
   * 'gone' when the profile is.
   */
  private async withAccountOf<T>(id: string, work: (tx: Store, accountId: string) => Promise<T>): Promise<T | 'gone'> {
    const owner = await this.sql.get<{ account_id: string }>('SELECT account_id FROM profiles WHERE id = ?', [id]);
    if (!owner) return 'gone';
    return this.store.atomically((tx) => work(tx, owner.account_id), accountLock(owner.account_id));
  }

  /** Notes why the last save did not happen (the earlier version stays). */
  async saveFailed(id: string, sessionId: string, reason: string): Promise<void> {
    await this.sql.run('UPDATE profiles SET save_error = ? WHERE id = ? AND session_id = ?', [reason.slice(0, 500), id, sessionId]);
  }

  /** Forgets free profiles unused since `cutoff`; answers how many. */
  forgetUnusedBefore(cutoff: number, now: number, graceMs: number): Promise<number> {
    return this.store.atomically(async (tx) => {
      const stale = await tx.sql.all<{ id: string }>(`SELECT p.id FROM profiles p WHERE p.used_at < ? AND ${FREE}`, [cutoff, now - graceMs]);
      for (const { id } of stale) {
        await tx.sql.run('DELETE FROM profile_versions WHERE profile_id = ?', [id]);
        await tx.sql.run('DELETE FROM profiles WHERE id = ?', [id]);
      }
      return stale.length;
    }, 'rbk-profiles-expiry');
  }
}
