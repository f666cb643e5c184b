// Saved profiles as the service offers them (decisions.md 85-89, 125): make, list, rename and
// remove an account's profiles within its plans' caps; before a session starts on one, its saved
// state read, opened and checked (a damaged or crafted one refuses the create, and nothing
// changes), and the profile taken for the session in the create transaction; at the session's
// normal end its state checked again, by the rules a restore applies, and written back as the new
// version, or the earlier one kept with the reason. Both ways stream (profile-streams.ts,
// decisions.md 138): no transfer holds a profile whole. Unused profiles are forgotten after the
// operator's days. Answers outcomes in the product's words; api-routes.ts puts them in v8's
// envelope.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SessionProfile } from '../../protocol/index.js';
import type { EngineConfig, Plan } from '../config.js';
import type { SqlConnection } from '../store/database.js';
import type { AccountRow, SessionRow, Store } from '../store/store.js';
import { keepsProfilePath, profileFamily, ProfileTooLarge, type ArchiveConsumer, type ArchiveSource, type BrowserImage, type ProfileCapture, type ProfileFamily } from '../runtime/index.js';
import { ArchiveRefusal, DEFAULT_ARCHIVE_ENTRIES, type ArchiveLimits } from './archive-format.js';
import { resolveProfileKey, type ProfileKey } from './profile-key.js';
import { accountLock, ProfileStore, type ProfileRow } from './profile-store.js';
import { readVersion, writeVersion, type ProfileStreamContext, type WrittenVersion } from './profile-streams.js';
import { ProfileTransfers } from './profile-transfers.js';
import { SealedStateError } from './sealed-state.js';
import { DEFAULT_PROFILES } from '../config.js';

const MB = 1024 * 1024;
/** What an archive holds beyond its files' bytes and may still unpack to: headers, long names, padding. */
const ARCHIVE_OVERHEAD = 16 * MB;
const DAY_MS = 86_400_000;
/** A suspended session's save may run this long before its profile counts as free again. */
const SAVE_GRACE_MS = 120_000;
/**
 * A remove right after its session ended waits this long for that session's last save (which
 * still holds the profile), then removes it (decisions.md 121); a save still under way after
 * that is answered with a wait of LAST_SAVE_RETRY_S.
 */
export const LAST_SAVE_WAIT_MS = 20_000;
export const LAST_SAVE_RETRY_S = 5;
const LAST_SAVE_POLL_MS = 200;
/** Expiry runs at most once a minute (of the engine's clock). */
const EXPIRY_EVERY_MS = 60_000;

/** A refusal; `retryAfter` (seconds) when the same call will likely succeed after that wait. */
export type ProfileRefusal = { status: 'denied' | 'upgrade' | 'error'; message: string; retryAfter?: number };
export type ProfileOutcome<T> = { status: 'ok'; value: T } | ProfileRefusal;

/** What a create with `profile` needs: the checked archive to start on (streamed again into the session), and the claim the create transaction makes. */
export interface SessionStartProfile {
  archive: ArchiveSource | null;
  claim(tx: SqlConnection, sessionId: string, now: number): Promise<boolean>;
}

export interface ProfileMetersValue {
  profile_limit: number | null;
  profiles_used: number;
  profile_mb_limit: number | null;
  profile_mb_used: number;
}

export interface ProfileServiceOptions {
  store: Store;
  settings: EngineConfig['profiles'];
  key: ProfileKey;
  plan(id: string): Plan | undefined;
  image(id: string): BrowserImage | undefined;
  now: () => number;
  /** Why a save did not happen (the operator's log). */
  warn?: (message: string) => void;
  /** How long a remove waits for the last save of the profile's session (LAST_SAVE_WAIT_MS). */
  lastSaveWaitMs?: number;
  /** Saves and restores at once (profile-transfers.ts); default PROFILE_TRANSFERS_AT_ONCE. */
  transfersAtOnce?: number;
}

/** A plan total: the sum over the account's plans, null when any has no cap (decisions.md 11). */
function total(values: Array<number | null>): number | null {
  return values.some((v) => v === null) ? null : values.reduce<number>((sum, v) => sum + (v ?? 0), 0);
}

export class ProfileService {
  readonly rows: ProfileStore;
  /** This engine's saves and restores, a few at once. */
  readonly transfers: ProfileTransfers;
  private lastExpiry = -Infinity;

  constructor(private readonly options: ProfileServiceOptions) {
    this.rows = new ProfileStore(options.store);
    this.transfers = new ProfileTransfers(options.transfersAtOnce);
  }

  private get maxBytes(): number {
    return this.options.settings.maxProfileMb * MB;
  }

  private get limits(): ArchiveLimits {
    return { maxBytes: this.maxBytes, maxEntries: DEFAULT_ARCHIVE_ENTRIES };
  }

  /** The most a kept archive may unpack to, whole. */
  private get unpackedCap(): number {
    return this.maxBytes + ARCHIVE_OVERHEAD;
  }

  /**
   * What the streams need (profile-streams.ts). Every kept version passes one set of rules, at a
   * restore and at a save before it is kept (decisions.md 129, 138), so a version a save keeps
   * always restores: the whole archive within the unpacked cap, only plain files and folders,
   * within the caps.
   */
  private get streams(): ProfileStreamContext {
    return { rows: this.rows, key: this.key, limits: this.limits, unpackedCap: this.unpackedCap };
  }

  /**
   * What a hibernated session's state is sealed and checked with (decisions.md 165): the profile
   * key, the same caps, the same transfers at once; null where profiles are off or have no key.
   */
  sealing(): { key: Buffer; limits: ArchiveLimits; unpackedCap: number; maxProfileMb: number; transfers: ProfileTransfers } | null {
    if (!this.options.settings.enabled || 'missing' in this.options.key) return null;
    return { key: this.key, limits: this.limits, unpackedCap: this.unpackedCap, maxProfileMb: this.options.settings.maxProfileMb, transfers: this.transfers };
  }

  /** The account's profile caps, or why it has no profiles. */
  private async caps(account: AccountRow): Promise<ProfileOutcome<{ count: number | null; bytes: number | null }>> {
    if (!this.options.settings.enabled) return { status: 'denied', message: 'saved profiles are not offered by this service' };
    if ('missing' in this.options.key) return { status: 'error', message: this.options.key.missing };
    const plans = (await this.options.store.subscriptions(account.id)).map((s) => this.options.plan(s.plan_id)).filter((p): p is Plan => p !== undefined && p.profiles !== false);
    if (plans.length === 0) return { status: 'upgrade', message: 'saved profiles are not included in your plan' };
    const count = total(plans.map((p) => (p.profile_limit === undefined ? DEFAULT_PROFILES.planProfiles : p.profile_limit)));
    const mb = total(plans.map((p) => (p.profile_mb_limit === undefined ? DEFAULT_PROFILES.planMb : p.profile_mb_limit)));
    return { status: 'ok', value: { count, bytes: mb === null ? null : mb * MB } };
  }

  private get key(): Buffer {
    return (this.options.key as { key: Buffer }).key;
  }

  /** Forgets profiles unused for the operator's days (at most once a minute of the engine's clock). */
  async expire(force = false): Promise<number> {
    const days = this.options.settings.expireDays;
    const now = this.options.now();
    if (days === null || (!force && now - this.lastExpiry < EXPIRY_EVERY_MS)) return 0;
    this.lastExpiry = now;
    return this.rows.forgetUnusedBefore(now - days * DAY_MS, now, SAVE_GRACE_MS);
  }

  async create(account: AccountRow, name: string, browser: string): Promise<ProfileOutcome<ProfileRow>> {
    const caps = await this.caps(account);
    if (caps.status !== 'ok') return caps;
    const image = this.options.image(browser);
    if (!image) return { status: 'denied', message: `browser: unknown browser "${browser.slice(0, 50)}"; GET /v8/image lists the browsers` };
    await this.expire();
    const now = this.options.now();
    const row: ProfileRow = {
      id: randomBytes(16).toString('hex'),
      account_id: account.id,
      name,
      browser: image.id,
      family: profileFamily(image),
      created_at: now,
      used_at: now,
      bytes: 0,
      stored_bytes: 0,
      version_id: null,
      session_id: null,
      save_error: null,
    };
    // The count cap and the insert in one transaction: two creates never both take the last place.
    return this.options.store.atomically(async (tx) => {
      const { count } = await this.rows.usage(account.id, tx.sql);
      if (caps.value.count !== null && count >= caps.value.count) {
        return { status: 'upgrade' as const, message: `profile limit reached (${count} of ${caps.value.count}); remove a profile or upgrade your plan` };
      }
      await new ProfileStore(tx).insert(row);
      return { status: 'ok' as const, value: row };
    }, accountLock(account.id));
  }

  async list(account: AccountRow, id?: string): Promise<ProfileOutcome<ProfileRow[]>> {
    const caps = await this.caps(account);
    if (caps.status !== 'ok') return caps;
    await this.expire();
    return { status: 'ok', value: await this.rows.list(account.id, id?.slice(0, 200)) };
  }

  async rename(account: AccountRow, id: string, name: string): Promise<ProfileOutcome<ProfileRow>> {
    const caps = await this.caps(account);
    if (caps.status !== 'ok') return caps;
    if (!(await this.rows.rename(account.id, id.slice(0, 200), name))) return { status: 'denied', message: 'id: unknown profile' };
    return { status: 'ok', value: (await this.rows.list(account.id, id))[0]! };
  }

  async remove(account: AccountRow, id: string): Promise<ProfileOutcome<null>> {
    const caps = await this.caps(account);
    if (caps.status !== 'ok') return caps;
    const profileId = id.slice(0, 200);
    // The session on it was removed (or suspended) a moment ago and is writing it back: the
    // caller sees that session gone, so the remove waits for its save, on any node, then removes.
    const until = Date.now() + (this.options.lastSaveWaitMs ?? LAST_SAVE_WAIT_MS);
    for (;;) {
      const outcome = await this.rows.remove(account.id, profileId, this.options.now(), SAVE_GRACE_MS);
      if (outcome === 'unknown') return { status: 'denied', message: 'id: unknown profile' };
      if (outcome === 'ok') return { status: 'ok', value: null };
      if (!(await this.rows.heldByEndingSession(profileId))) return { status: 'denied', message: 'id: a session runs on this profile; remove it after the session ends' };
      if (Date.now() >= until) {
        return { status: 'denied', message: `id: the last save of the session that ran on this profile is still under way; try again in ${LAST_SAVE_RETRY_S} s`, retryAfter: LAST_SAVE_RETRY_S };
      }
      await sleep(LAST_SAVE_POLL_MS);
    }
  }

  async meters(account: AccountRow): Promise<ProfileMetersValue | null> {
    const caps = await this.caps(account);
    if (caps.status !== 'ok') return null;
    const { count, bytes } = await this.rows.usage(account.id);
    return { profile_limit: caps.value.count, profiles_used: count, profile_mb_limit: caps.value.bytes === null ? null : caps.value.bytes / MB, profile_mb_used: Math.round((bytes / MB) * 10) / 10 };
  }

  /**
   * The stream of a profile's current version into a session (null: never saved), opened and
   * checked as it goes; it runs as one of the engine's few transfers at once. Its refusal
   * (SealedStateError, ArchiveRefusal) fails the session's start.
   */
  private sourceOf(row: Pick<ProfileRow, 'id' | 'version_id' | 'family'>, tabs: boolean): ArchiveSource | null {
    const versionId = row.version_id;
    if (!versionId) return null;
    const keep = keepsProfilePath(row.family as ProfileFamily, tabs);
    return (sink) => this.transfers.run(() => readVersion(this.streams, row.id, versionId, keep, sink), true);
  }

  /** Opens and checks a profile's current version whole, keeping nothing of it (before a create). Throws ArchiveRefusal or SealedStateError. */
  private async check(row: Pick<ProfileRow, 'id' | 'version_id'>): Promise<void> {
    const versionId = row.version_id;
    if (versionId) await this.transfers.run(() => readVersion(this.streams, row.id, versionId, () => true), true);
  }

  /**
   * Before a create: the profile must be the account's, of the browser's family, free, and its
   * saved state must open and pass the checks. Nothing is written here; `claim` takes it in the
   * create transaction.
   */
  async prepareSession(account: AccountRow, wanted: SessionProfile, image: BrowserImage): Promise<ProfileOutcome<SessionStartProfile>> {
    const caps = await this.caps(account);
    if (caps.status !== 'ok') return { status: caps.status, message: `profile: ${caps.message}` };
    await this.expire();
    const row = /^[0-9a-f]{32}$/.test(wanted.id) ? await this.rows.get(wanted.id) : undefined;
    if (!row || row.account_id !== account.id) return { status: 'denied', message: 'profile.id: unknown profile' };
    const family = profileFamily(image);
    if (row.family !== family) return { status: 'denied', message: `profile.id: the profile "${row.name}" is for ${row.family === 'chromium' ? 'Chromium' : 'Firefox'}-family browsers; ${image.name} cannot use it` };
    try {
      await this.check(row);
    } catch (error) {
      if (error instanceof ArchiveRefusal || error instanceof SealedStateError) {
        return { status: 'denied', message: `profile.id: the saved state of "${row.name}" was refused (${error.message}); nothing was started; remove the profile or start without it` };
      }
      throw error;
    }
    const versionId = row.version_id;
    // The claim takes the profile only at this version, the one checked.
    return {
      status: 'ok',
      value: { archive: this.sourceOf(row, wanted.tabs), claim: (tx, sessionId, now) => this.rows.claim(tx, account.id, row.id, sessionId, versionId, now, SAVE_GRACE_MS) },
    };
  }

  /** The archive a session placed on this node starts on (another node checked it at the create; checked again as it streams in). */
  async archiveForSession(session: SessionRow): Promise<ArchiveSource | null> {
    const row = session.profile_id ? await this.rows.get(session.profile_id) : undefined;
    if (!row || row.session_id !== session.id) throw new Error('the session\'s profile is gone');
    return this.sourceOf(row, session.profile_tabs === true);
  }

  /** Lets a session's profile go (its session ended, saved or not). */
  async release(session: Pick<SessionRow, 'id' | 'profile_id'>): Promise<void> {
    if (session.profile_id) await this.rows.release(session.profile_id, session.id);
  }

  /**
   * Writes a session's state back as its profile's new version: `capture` closes the browser and
   * packs its profile. Over a cap or the plan's total, not packed whole, or not what a restore
   * would take: the earlier version stays, the reason is kept on the profile (its `save_error`)
   * and logged. Runs as one of the engine's few transfers at once. Never throws.
   */
  async save(session: SessionRow, capture: (options: ProfileCapture, consume: ArchiveConsumer) => Promise<void>): Promise<void> {
    const profileId = session.profile_id;
    if (!profileId) return;
    const failed = async (why: string) => {
      const reason = `${why}; the previous version stays`;
      this.options.warn?.(`profile ${profileId} of session ${session.id} was not saved: ${reason}`);
      await this.rows.saveFailed(profileId, session.id, reason).catch(() => undefined);
    };
    try {
      const row = await this.rows.get(profileId);
      if (!row || row.session_id !== session.id) return;
      const tabs = session.profile_tabs === true;
      const account = await this.options.store.account(row.account_id);
      const caps = account ? await this.caps(account) : undefined;
      const planBytes = caps?.status === 'ok' ? caps.value.bytes : null;
      const saved = await this.transfers.run(async () => {
        const versionId = randomBytes(16).toString('hex');
        let written: WrittenVersion | undefined;
        // The archive streams through the checks into the database as the session's tar packs it.
        await capture({ tabs, maxBytes: this.unpackedCap }, async (archive) => {
          written = await writeVersion(this.streams, profileId, versionId, archive, keepsProfilePath(row.family as ProfileFamily, tabs));
        });
        if (!written) throw new Error('the session handed back no archive');
        const outcome = await this.rows.saveVersion(profileId, session.id, written, this.options.now(), planBytes).catch(async (error: unknown) => {
          await this.rows.dropChunks(versionId).catch(() => undefined);
          throw error;
        });
        if (outcome !== 'saved') await this.rows.dropChunks(versionId);
        return { bytes: written.bytes, outcome };
      });
      if (typeof saved.outcome === 'object') {
        await failed(`the plan's profiles may hold ${planBytes! / MB} MB together; this save (${(saved.bytes / MB).toFixed(1)} MB) would pass it`);
      }
    } catch (error) {
      const tooLarge = error instanceof ProfileTooLarge || (error instanceof ArchiveRefusal && /more than \d+ bytes/.test(error.message));
      await failed(tooLarge ? `the profile is larger than ${this.options.settings.maxProfileMb} MB, the cap of one profile` : (error as Error).message);
    }
  }
}

/** The engine's profile service: its key resolved (profile-key.ts) from the configuration, the environment or the data directory. */
export function openProfileService(options: Omit<ProfileServiceOptions, 'key' | 'settings'> & { config: EngineConfig; dataDir: string }): ProfileService {
  const { config, dataDir, ...rest } = options;
  const key = config.profiles.enabled ? resolveProfileKey(config.profiles.key, dataDir, options.store.dialect) : { missing: 'saved profiles are not offered by this service' };
  return new ProfileService({ ...rest, settings: config.profiles, key });
}
