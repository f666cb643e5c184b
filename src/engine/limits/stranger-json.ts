// The one way the engine reads JSON that a stranger wrote: a browser (its DevTools or BiDi end,
// which a process in the session can write into), a program, a page. The size, the nesting and the
// number of arrays and objects are measured before JSON.parse builds anything: a 500,000-deep array
// never becomes an object that a later JSON.stringify overflows the stack on, and 12 MB of `[],`
// never becomes 4 million arrays (half a GB of heap, which JSON.parse allocates without a pause
// where any heap limit could stop it: decisions.md 182). A message is a plain object before any
// field of it is read. Nothing here throws: the caller gets why, and ends only what sent it.

/** What a reader allows. */
export interface StrangerJsonLimits {
  /** The largest message, in UTF-16 code units (the string's length). */
  maxLength: number;
  /** The deepest nesting of arrays and objects (1: `{}` or `[]`). */
  maxDepth: number;
  /** The most arrays and objects in the message; default MESSAGE_CONTAINERS. */
  maxContainers?: number;
}

/** Deep enough for every DevTools and BiDi message seen (a DOM tree or a serialized value a page nests), far below what JSON.stringify's recursion takes. */
export const MESSAGE_DEPTH = 512;
/**
 * Arrays and objects in one message: a tab list, a page's serialized value or an accessibility
 * tree holds thousands; a million is some 60 MB of heap once parsed, the most one message may cost.
 */
export const MESSAGE_CONTAINERS = 1_000_000;

/** A reading: the object, or why not (`exceeded`: it passed a limit, so it may be well-formed and only too much). */
export type StrangerJson = { ok: true; value: Record<string, unknown> } | { ok: false; why: string; exceeded?: true };

/** The deepest nesting in `text`, or `limit + 1` as soon as it passes `limit` (strings skipped; the text need not be valid JSON). */
export function nestingDepth(text: string, limit: number): number {
  return measure(text, limit, Number.POSITIVE_INFINITY).depth;
}

/** The nesting and the number of arrays and objects in `text`, measured until either passes its limit. */
function measure(text: string, depthLimit: number, containerLimit: number): { depth: number; containers: number } {
  let depth = 0;
  let deepest = 0;
  let containers = 0;
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
      if (++containers > containerLimit) break;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > depthLimit) break;
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return { depth: deepest, containers };
}

/** Reads `text` as one JSON object within `limits`; never throws. */
export function readStrangerJson(text: string, limits: StrangerJsonLimits): StrangerJson {
  if (text.length > limits.maxLength) return { ok: false, why: `a message of ${text.length} characters, over the ${limits.maxLength} allowed`, exceeded: true };
  const maxContainers = limits.maxContainers ?? MESSAGE_CONTAINERS;
  const measured = measure(text, limits.maxDepth, maxContainers);
  if (measured.depth > limits.maxDepth) return { ok: false, why: `a message nested deeper than ${limits.maxDepth} levels`, exceeded: true };
  if (measured.containers > maxContainers) return { ok: false, why: `a message of more than ${maxContainers} arrays and objects`, exceeded: true };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, why: 'a message that is not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, why: 'a message that is not a JSON object' };
  return { ok: true, value: value as Record<string, unknown> };
}
