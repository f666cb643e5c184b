// The proxy route's own answers as the browser reads them: the schemas the route checks them with.
// Their types and the route's paths are plain TypeScript in src/protocol/proxy.ts, which the
// browser-side client (src/core) shares without the schema library.
import { z } from 'zod';
import { createResponseSchema, sessionEntrySchema } from '../protocol/index.js';
import type { ProxyCreateResponse, ProxySession } from '../protocol/proxy.js';

export { IDEMPOTENCY_HEADER, PROXY_INSECURE_REASONS, PROXY_PATHS, type ProxyCreateResponse, type ProxySession } from '../protocol/proxy.js';

/** POST /sessions: the service's create answer with the session's handle instead of its vmId. */
export const proxyCreateResponseSchema = createResponseSchema.omit({ vmId: true }).extend({ handle: z.string() });

/** A session as the browser sees it: the service's entry with the handle in place of the masked id. */
export const proxySessionSchema = sessionEntrySchema.omit({ id: true }).extend({ handle: z.string() });

/** GET /sessions/:handle. */
export const proxySessionResponseSchema = z.object({ status: z.literal('ok'), session: proxySessionSchema });
export type ProxySessionResponse = z.infer<typeof proxySessionResponseSchema>;

/** POST or DELETE /sessions/:handle. */
export const proxyEndResponseSchema = z.object({ status: z.literal('ok') });
export type ProxyEndResponse = z.infer<typeof proxyEndResponseSchema>;

// The schemas check exactly the types the client reads: a change to one side fails to compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameCreate: Same<z.infer<typeof proxyCreateResponseSchema>, ProxyCreateResponse> = true;
const sameSession: Same<z.infer<typeof proxySessionSchema>, ProxySession> = true;
void sameCreate;
void sameSession;
