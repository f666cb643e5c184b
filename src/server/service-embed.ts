// The service client's calls on framing (issue 44, decisions.md 134): the origins that may frame
// the account's share links, read and set (`/v8/user/embed`), over the client's one checked
// request (service-client.ts): the same key, timeout, retries where safe, and typed errors.
import type { z } from 'zod';
import { embedResponseSchema } from '../protocol/index.js';

type Request = <T>(call: { method: 'GET' | 'POST'; path: string; what: string; schema: z.ZodType<T>; body?: unknown; authenticated: boolean; repeatable: boolean; signal: AbortSignal | undefined }) => Promise<T>;
type Options = { signal?: AbortSignal } | undefined;

export interface EmbedCalls {
  /** GET /v8/user/embed: the origins that may frame the account's share links ([] : none). */
  embedOrigins(options?: Options): Promise<string[]>;
  /**
   * POST /v8/user/embed: replaces the list (`https://host[:port]`, plain http only on loopback, at
   * most 20; [] turns framing off); answers it as the service keeps it. A refused origin throws
   * `denied`, naming it, and nothing changes.
   */
  setEmbedOrigins(origins: readonly string[], options?: Options): Promise<string[]>;
}

export function embedCalls(request: Request): EmbedCalls {
  return {
    embedOrigins: async (options) =>
      (await request({ method: 'GET', path: 'user/embed', what: 'the framing origins', schema: embedResponseSchema, authenticated: true, repeatable: true, signal: options?.signal })).origins,
    // Setting the same whole list again changes nothing: safe to repeat.
    setEmbedOrigins: async (origins, options) =>
      (await request({ method: 'POST', path: 'user/embed', what: 'setting the framing origins', schema: embedResponseSchema, body: { origins }, authenticated: true, repeatable: true, signal: options?.signal })).origins,
  };
}
