// Share links (decisions.md 7) and view-only links (decisions.md 45): the link id is an HMAC of the
// session id under the engine's secret (128 bits, base64url), so the store keeps only its hash
// yet the engine can hand the same link out again (idempotent repeats) without having stored it.
// ShareLinks finds a session by either link for the share API.
import { createHmac } from 'node:crypto';
import { shareLinkPath, type ShareLanguage } from '../../protocol/index.js';
import { hashSecret } from '../accounts/accounts.js';
import type { SessionRow, Store } from '../store/store.js';

/** What a link's holder may do: `control` (the share link) or `view` (the view-only link only watches). */
export type LinkRights = 'control' | 'view';

export function shareLinkId(secret: string, sessionId: string): string {
  return createHmac('sha256', secret).update(`share-link:${sessionId}`).digest().subarray(0, 16).toString('base64url');
}

/** The view-only link's id: another HMAC of the session id, which the share link's id does not reveal. */
export function viewLinkId(secret: string, sessionId: string): string {
  return createHmac('sha256', secret).update(`view-link:${sessionId}`).digest().subarray(0, 16).toString('base64url');
}

export function shareLinkHash(linkId: string): string {
  return hashSecret(`share-link:${linkId}`);
}

/** The full link and its path; `language` null is v7's link without a language segment. */
export function shareLinkFor(secret: string, shareBase: string, sessionId: string, language: ShareLanguage | null): { shareUrl: string; shareUrlPath: string } {
  return shareUrlFor(shareBase, shareLinkId(secret, sessionId), language);
}

/** The full link and its path for a link id. */
export function shareUrlFor(shareBase: string, linkId: string, language: ShareLanguage | null): { shareUrl: string; shareUrlPath: string } {
  const shareUrlPath = shareLinkPath(language, linkId);
  return { shareUrl: `${shareBase.replace(/\/+$/, '')}${shareUrlPath}`, shareUrlPath };
}

/** Finds sessions by their links and hands out view-only links: the share API's look-ups. */
export class ShareLinks {
  constructor(private readonly options: { store: Store; secret: string; shareBase: () => string }) {}

  /**
   * The session a share link or view-only link belongs to, with what the link lets its holder do;
   * undefined for an unknown link.
   */
  async sessionFor(linkId: string): Promise<{ row: SessionRow; rights: LinkRights } | undefined> {
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(linkId)) return undefined;
    const hash = shareLinkHash(linkId);
    const row = await this.options.store.sessionByLinkHash(hash);
    return row && { row, rights: row.link_hash === hash ? 'control' : 'view' };
  }

  /**
   * The session's view-only link (decisions.md 45), in the share link's form and language: the
   * same link on every call, made from the engine's secret; the store keeps only its hash.
   */
  async viewOnly(row: SessionRow): Promise<{ linkId: string; shareUrl: string; shareUrlPath: string }> {
    const linkId = viewLinkId(this.options.secret, row.id);
    if (row.view_link_hash === null) await this.options.store.updateSession(row.id, { view_link_hash: shareLinkHash(linkId) });
    return { linkId, ...shareUrlFor(this.options.shareBase(), linkId, row.share_language as ShareLanguage) };
  }
}
