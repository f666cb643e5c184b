// What Firefox's agent sends the BiDi hub (bidi-hub.ts), as the hub reads it: an answer to a
// command, an event, or an error nobody's command caused. The message has been read as a plain
// object already (browser-line.ts); here its fields are checked before the hub reads any of them.

export type Answer = { type: 'success'; id: number; result?: Record<string, unknown> } | { type: 'error'; id: number | null; error: string; message: string; stacktrace?: string };

/** A message of the browser's as the hub reads it, its shape checked. */
export type BrowserMessage =
  | { kind: 'answer'; id: number; message: Answer & Record<string, unknown> }
  | { kind: 'event'; method: string; params: Record<string, unknown> }
  | { kind: 'unrouted' };

/** Whether `value` is a plain JSON object (not null, not an array). */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads a message of the browser's into one of the shapes BiDi sends, or why it is none. */
export function shapeOf(value: Record<string, unknown>): BrowserMessage | string {
  const { id, type, method, params, result } = value;
  if (typeof type !== 'string') return 'a message without a type';
  if (params !== undefined && !isObject(params)) return 'a message whose params are not an object';
  if (result !== undefined && !isObject(result)) return 'a message whose result is not an object';
  if (type === 'event') {
    if (typeof method !== 'string') return 'an event without a method';
    return { kind: 'event', method, params: (params as Record<string, unknown> | undefined) ?? {} };
  }
  if (type !== 'success' && type !== 'error') return `a message of type ${type.slice(0, 40)}`;
  // Firefox's answer to a command it could not read has a null id: never one the hub wrote, and nobody's.
  if (type === 'error' && id === null) return { kind: 'unrouted' };
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) return 'an answer whose id is not an integer';
  return { kind: 'answer', id, message: value as Answer & Record<string, unknown> };
}
