// Share links (decisions.md 7) and view-only links (decisions.md 45): the link id is an HMAC of the
// session id under the engine's secret (128 bits, base64url), so the store keeps only its hash
// yet the engine can hand the same link out again (idempotent repeats) without having stored it.
import { createHmac } from 'node:crypto';
import { shareLinkPath, type ShareLanguage } from '../../protocol/index.js';
import { hashSecret } from '../accounts/accounts.js';

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
