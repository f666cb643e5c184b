// The one small protocol between the engine's thread and a session's reader worker
// (browser-reader.ts): what each side may post. The worker's messages are checked by the engine
// with zod before anything reads them (a worker that posts anything else is broken, and its session
// ends); the engine's are checked in the worker by hand, so the worker loads no zod (each session
// has one worker: its memory counts, docs/benchmarks.md).

/** The most lines one reader holds at once (the guard and its re-arms, the BiDi hub's): more is a fault. */
export const LINES_PER_READER = 16;
/** The largest text the engine sends down a line (a program's BiDi command, at most 1 MiB, and the hub's own). */
export const SEND_LIMIT = 16 * 1024 * 1024;

export type ToReader =
  | { type: 'open'; line: number; url: string; maxPayload: number; maxDepth: number; host?: string; bytesPerSecond?: number }
  | { type: 'send'; line: number; text: string }
  | { type: 'close'; line: number }
  | { type: 'ping'; n: number };

/** The engine's message as the worker takes it, or null when it is not one of ToReader. */
export function readToReader(raw: unknown): ToReader | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const message = raw as Record<string, unknown>;
  const whole = (value: unknown, min = 0): value is number => Number.isSafeInteger(value) && (value as number) >= min;
  switch (message.type) {
    case 'open':
      return whole(message.line) && typeof message.url === 'string' && message.url.length <= 4096 && whole(message.maxPayload, 1) && whole(message.maxDepth, 1) && (message.host === undefined || (typeof message.host === 'string' && message.host.length <= 256)) && (message.bytesPerSecond === undefined || whole(message.bytesPerSecond, 1)) ? (message as ToReader) : null;
    case 'send':
      return whole(message.line) && typeof message.text === 'string' && message.text.length <= SEND_LIMIT ? (message as ToReader) : null;
    case 'close':
      return whole(message.line) ? (message as ToReader) : null;
    case 'ping':
      return Number.isSafeInteger(message.n) ? (message as ToReader) : null;
    default:
      return null;
  }
}

/** What the worker posts; checked on arrival in the engine (browser-reader.ts `fromReader`). */
export type FromReader =
  | { type: 'opened'; line: number }
  | { type: 'message'; line: number; value: Record<string, unknown> }
  | { type: 'unreadable'; line: number; why: string; exceeded?: { id: number | null } }
  | { type: 'closed'; line: number; why: string }
  | { type: 'pong'; n: number };
