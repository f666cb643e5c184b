// The id of a message too long or too deep to read (stranger-json.ts refused it), found without
// reading it, so the refusal or the dropped answer still reaches the command it is about.

/** How far into a message its id is looked for: clients and browsers write it among the first fields. */
const HEAD = 4096;

/**
 * The integer id at the top level of `text`, before its first nested array or object (BiDi and
 * DevTools messages name it there), or null. A guess, never a reading: only where the message
 * itself could not be read.
 */
export function leadingId(text: string): number | null {
  const end = Math.min(text.length, HEAD);
  let depth = 0;
  let inString = false;
  let i = 0;
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > 1) break;
    }
  }
  const found = /[{,]\s*"id"\s*:\s*(\d{1,16})\s*[,}]/.exec(text.slice(0, i + 1));
  if (!found) return null;
  const id = Number(found[1]);
  return Number.isSafeInteger(id) ? id : null;
}
