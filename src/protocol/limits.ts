// The service's limits in one place, so the engine enforces and the clients check the same numbers.

/** Longest `url` accepted by create, in characters. */
export const URL_MAX = 10_000;
/** Longest `callbackUrl` accepted by create, in characters. */
export const CALLBACK_URL_MAX = 2_000;
export const IDEMPOTENCY_KEY_MIN = 1;
export const IDEMPOTENCY_KEY_MAX = 128;
/** How long a successful create answer is kept for its `idempotencyKey`. */
export const IDEMPOTENCY_TTL_HOURS = 24;
/** Larger request bodies are refused before parsing. */
export const BODY_MAX_BYTES = 64 * 1024;

/** `vm/data` without `id` lists sessions created within this many days, at most SESSION_LIST_MAX. */
export const SESSION_LIST_WINDOW_DAYS = 31;
export const SESSION_LIST_MAX = 1_000;

/**
 * `vm/data?id=&wait=` (decisions.md 82): the longest a read of one starting session waits for its
 * status to change, in ms; a longer wait asked for waits this long.
 */
export const VM_DATA_WAIT_MAX_MS = 30_000;

/** Random bits in a `vmId` and in a share link id: both work like passwords. */
export const SESSION_ID_BITS = 128;
export const SHARE_LINK_ID_BITS = 128;
/**
 * The narrowest a remote browser window goes (Chromium's tab strip and toolbar stop at 500 px, and
 * Firefox ESR's too): a viewer's area narrower than this (a phone in portrait) gets a display this
 * wide with the area's shape, shown scaled to fit; the page still lays out for a phone. The engine
 * sizes displays with it and the viewer asks for it.
 */
export const BROWSER_MIN_WIDTH = 500;

/** A masked session id keeps this many characters visible at each end. */
export const SESSION_ID_MASK_KEEP = 4;

/** v6: a getKey token is valid this long. */
export const V6_TOKEN_TTL_HOURS = 2;
/** v6: a short-URL id resolves this long after it was made. */
export const V6_SHORT_URL_TTL_HOURS = 1;
/** v6: digits after `url_` in a short-URL id. */
export const V6_SHORT_URL_ID_DIGITS = 10;
