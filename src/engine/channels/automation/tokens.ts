// Automation tokens (and which browsers programs drive, said once): what a program's DevTools address carries instead of the API key. A token is
// good for one session until it expires: a session token (sessions/session-tokens.ts) signed for
// `automation` under the engine's automation secret (kept in the store like the share-link secret,
// so every node of a cluster checks the tokens any node made). Nothing is stored per token: a token
// that leaks is worth one session for minutes, and ends with the session (the upgrade checks it is running).
import { speaksDevTools } from '../../runtime/index.js';
import { checkSessionToken, sessionToken, type TokenCheck } from '../../sessions/session-tokens.js';

export type { TokenCheck };

/** The default life of a token: long enough to hand to a program and connect, short enough to be worth little when it leaks. */
export const DEFAULT_TOKEN_SECONDS = 600;

export function automationToken(secret: string, sessionId: string, expires: number): string {
  return sessionToken(secret, 'automation', sessionId, expires);
}

/** Checks a token's signature, then its expiry against `now`. */
export function checkAutomationToken(secret: string, token: string, now: number): TokenCheck {
  return checkSessionToken(secret, 'automation', token, now);
}

/** How programs drive a browser of a family (decisions.md 54, 143): Chromium over DevTools, Firefox over WebDriver BiDi. Said here once, for the address and the channel. */
export type AutomationProtocol = 'devtools' | 'bidi';

/** The protocol programs drive a browser of this family with; undefined when they do not drive it. An unknown family (an image this node does not know) is left to the node that runs it. */
export function automationProtocol(family: string | undefined): AutomationProtocol | undefined {
  if (family === 'firefox') return 'bidi';
  if (speaksDevTools(family)) return 'devtools';
  return undefined;
}

/** Whether programs drive a browser of this family. */
export function drivenByPrograms(family: string | undefined): boolean {
  return automationProtocol(family) !== undefined;
}
