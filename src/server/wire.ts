// The proxy route's own answers as the browser reads them: schemas and types. Pure (zod and the
// protocol only), so the browser-side client can import it too.
import { z } from 'zod';
import { createResponseSchema, sessionEntrySchema } from '../protocol/index.js';

export { IDEMPOTENCY_HEADER, PROXY_INSECURE_REASONS, PROXY_PATHS } from './paths.js';

/** POST /sessions: the service's create answer with the session's handle instead of its vmId. */
export const proxyCreateResponseSchema = createResponseSchema.omit({ vmId: true }).extend({ handle: z.string() });
export type ProxyCreateResponse = z.infer<typeof proxyCreateResponseSchema>;

/** A session as the browser sees it: the service's entry with the handle in place of the masked id. */
export const proxySessionSchema = sessionEntrySchema.omit({ id: true }).extend({ handle: z.string() });
export type ProxySession = z.infer<typeof proxySessionSchema>;

/** GET /sessions/:handle. */
export const proxySessionResponseSchema = z.object({ status: z.literal('ok'), session: proxySessionSchema });
export type ProxySessionResponse = z.infer<typeof proxySessionResponseSchema>;

/** POST or DELETE /sessions/:handle. */
export const proxyEndResponseSchema = z.object({ status: z.literal('ok') });
export type ProxyEndResponse = z.infer<typeof proxyEndResponseSchema>;
