// The one small protocol between the engine's thread and a session's reader worker
// (browser-reader.ts): what each side may post, as zod schemas, checked on arrival. The worker's
// messages are checked by the engine before anything reads them: a worker that posts anything else
// is broken, and its session ends.
import { z } from 'zod';

/** The most lines one reader holds at once (the guard and its re-arms, the BiDi hub's): more is a fault. */
export const LINES_PER_READER = 16;
/** The largest text the engine sends down a line (a program's BiDi command, at most 1 MiB, and the hub's own). */
export const SEND_LIMIT = 16 * 1024 * 1024;

const line = z.number().int().min(0);

export const toReader = z.discriminatedUnion('type', [
  z.object({ type: z.literal('open'), line, url: z.string().max(4096), maxPayload: z.number().int().positive(), maxDepth: z.number().int().positive(), host: z.string().max(256).optional() }),
  z.object({ type: z.literal('send'), line, text: z.string().max(SEND_LIMIT) }),
  z.object({ type: z.literal('close'), line }),
  z.object({ type: z.literal('ping'), n: z.number().int() }),
]);
export type ToReader = z.infer<typeof toReader>;

export const fromReader = z.discriminatedUnion('type', [
  z.object({ type: z.literal('opened'), line }),
  // Only the top level is looked at here: the line read the whole within its limits.
  z.object({ type: z.literal('message'), line, value: z.record(z.string(), z.unknown()) }),
  z.object({ type: z.literal('unreadable'), line, why: z.string().max(500), exceeded: z.object({ id: z.number().int().min(0).nullable() }).optional() }),
  z.object({ type: z.literal('closed'), line, why: z.string().max(500) }),
  z.object({ type: z.literal('pong'), n: z.number().int() }),
]);
export type FromReader = z.infer<typeof fromReader>;
