// Signed, expiring tokens for one session: `<session id>.<expiry ms>.<HMAC-SHA256 of purpose, id
// and expiry>` under a secret the store keeps (so every node of a cluster checks the tokens any
// node made). Nothing is stored per token. The purpose is signed too, so a token made for one use
// (a program's DevTools address, a replay link) is refused for any other.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a token is for: part of what is signed. */
export type TokenPurpose = 'automation' | 'replay';

/** Session ids are base64url or hex; anything else in a token is refused before the HMAC. */
const TOKEN = /^([A-Za-z0-9_-]{1,100})\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/;

function signature(secret: string, purpose: TokenPurpose, sessionId: string, expires: number): string {
  return createHmac('sha256', secret).update(`${purpose}:${sessionId}:${expires}`).digest('base64url');
}

export function sessionToken(secret: string, purpose: TokenPurpose, sessionId: string, expires: number): string {
  return `${sessionId}.${expires}.${signature(secret, purpose, sessionId, expires)}`;
}

export type TokenCheck = { ok: true; sessionId: string; expires: number } | { ok: false; reason: 'malformed' | 'forged' | 'expired' };

/** Checks a token's signature for `purpose`, then its expiry against `now`: an expired token is told apart only once its signature holds. */
export function checkSessionToken(secret: string, purpose: TokenPurpose, token: string, now: number): TokenCheck {
  const match = TOKEN.exec(token);
  if (!match) return { ok: false, reason: 'malformed' };
  const sessionId = match[1]!;
  const expires = Number(match[2]);
  const expected = Buffer.from(signature(secret, purpose, sessionId, expires));
  const given = Buffer.from(match[3]!);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, reason: 'forged' };
  if (expires <= now) return { ok: false, reason: 'expired' };
  return { ok: true, sessionId, expires };
}
