// Automation tokens: what a program's DevTools address carries instead of the API key. A token is
// good for one session until it expires: `<session id>.<expiry ms>.<HMAC-SHA256 of both>` under
// the engine's automation secret (kept in the store like the share-link secret, so every node of a
// cluster checks the tokens any node made). Nothing is stored per token: a token that leaks is
// worth one session for minutes, and ends with the session (the upgrade checks it is running).
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The default life of a token: long enough to hand to a program and connect, short enough to be worth little when it leaks. */
export const DEFAULT_TOKEN_SECONDS = 600;

/** Session ids are base64url or hex; anything else in a token is refused before the HMAC. */
const TOKEN = /^([A-Za-z0-9_-]{1,100})\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/;

function signature(secret: string, sessionId: string, expires: number): string {
  return createHmac('sha256', secret).update(`automation:${sessionId}:${expires}`).digest('base64url');
}

export function automationToken(secret: string, sessionId: string, expires: number): string {
  return `${sessionId}.${expires}.${signature(secret, sessionId, expires)}`;
}

export type TokenCheck = { ok: true; sessionId: string; expires: number } | { ok: false; reason: 'malformed' | 'forged' | 'expired' };

/** Checks a token's signature, then its expiry against `now`. */
export function checkAutomationToken(secret: string, token: string, now: number): TokenCheck {
  const match = TOKEN.exec(token);
  if (!match) return { ok: false, reason: 'malformed' };
  const sessionId = match[1]!;
  const expires = Number(match[2]);
  const expected = Buffer.from(signature(secret, sessionId, expires));
  const given = Buffer.from(match[3]!);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, reason: 'forged' };
  if (expires <= now) return { ok: false, reason: 'expired' };
  return { ok: true, sessionId, expires };
}
