// The one way the engine reads JSON that a stranger wrote: a browser (its DevTools or BiDi end,
// which a process in the session can write into), a program, a page. The size and the nesting are
// measured before JSON.parse builds anything, so a 500,000-deep array never becomes an object that
// a later JSON.stringify overflows the stack on, and a message is a plain object before any field
// of it is read. Nothing here throws: the caller gets why, and ends only the attachment that sent it.

/** What a reader allows. */
export interface StrangerJsonLimits {
  /** The largest message, in UTF-16 code units (the string's length). */
  maxLength: number;
  /** The deepest nesting of arrays and objects (1: `{}` or `[]`). */
  maxDepth: number;
}

/** Deep enough for every DevTools and BiDi message seen (a DOM tree or a serialized value a page nests), far below what JSON.stringify's recursion takes. */
export const MESSAGE_DEPTH = 512;

export type StrangerJson = { ok: true; value: Record<string, unknown> } | { ok: false; why: string };

/** The deepest nesting in `text`, or `limit + 1` as soon as it passes `limit` (strings skipped; the text need not be valid JSON). */
export function nestingDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash: the next unit is escaped
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/** Reads `text` as one JSON object within `limits`; never throws. */
export function readStrangerJson(text: string, limits: StrangerJsonLimits): StrangerJson {
  if (text.length > limits.maxLength) return { ok: false, why: `a message of ${text.length} characters, over the ${limits.maxLength} allowed` };
  if (nestingDepth(text, limits.maxDepth) > limits.maxDepth) return { ok: false, why: `a message nested deeper than ${limits.maxDepth} levels` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, why: 'a message that is not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, why: 'a message that is not a JSON object' };
  return { ok: true, value: value as Record<string, unknown> };
}
