// The deprecated v6 interface: `success` instead of `status`, a session key from getKey, the
// client-side `/b` launch and short URLs. Kept so older callers keep working.
import { z } from 'zod';
import { URL_MAX } from './limits.js';
import { isWebAddress } from './share.js';
import { SHORT_URL_ID_PATTERN, createRequestSchema } from './v8.js';

export const v6EnvelopeSchema = z.looseObject({
  success: z.boolean(),
  message: z.string().optional(),
});
export type V6Envelope = z.infer<typeof v6EnvelopeSchema>;

/**
 * The day v6 was deprecated: every v6 answer says so in its `Deprecation` header, with the
 * `Sunset` day the operator chose and a link to the current interface (docs/decisions.md 35).
 */
export const V6_DEPRECATED_ON = '2026-11-21';
/** Where a v6 answer's `Link: <...>; rel="successor-version"` points: the v8 OpenAPI document the engine serves. */
export const V6_SUCCESSOR_PATH = '/v8/openapi.json';

export const V6_ERROR_MESSAGES = ['auth-failed', 'quota-exceeded', 'srv-error'] as const;
export type V6ErrorMessage = (typeof V6_ERROR_MESSAGES)[number];

/** `null` quota or remaining means no cap, as in the v8 meters. */
const v6Meters = {
  quota: z.int().nonnegative().nullable(),
  count: z.int().nonnegative(),
  remaining: z.int().nonnegative().nullable(),
};

export const v6FailureSchema = z.discriminatedUnion('message', [
  z.object({ success: z.literal(false), message: z.enum(['auth-failed', 'srv-error']) }),
  z.object({ success: z.literal(false), message: z.literal('quota-exceeded'), ...v6Meters }),
]);
export type V6Failure = z.infer<typeof v6FailureSchema>;

// GET /api/v6/getKey

export const v6GetKeyQuerySchema = z.object({
  key: z.string('key: required; must be the organization API key').min(1, 'key: required; must be the organization API key'),
});
export type V6GetKeyQuery = z.infer<typeof v6GetKeyQuerySchema>;

export const v6GetKeyResponseSchema = z.object({
  success: z.literal(true),
  /** Session key for `/b`. */
  token: z.string(),
  ...v6Meters,
});
export type V6GetKeyResponse = z.infer<typeof v6GetKeyResponseSchema>;

// GET /b

export const V6_BROWSERS = ['Chrome', 'Edge', 'Firefox', 'Tor', 'Brave', 'Opera'] as const;
export type V6Browser = (typeof V6_BROWSERS)[number];

/** Query of `/b`; url, language, layout and callbackUrl follow the v8 create rules. */
export const v6LaunchQuerySchema = z.object({
  key: z.string('key: required; must be the token from getKey').min(1, 'key: required; must be the token from getKey'),
  browser: z.enum(V6_BROWSERS, `browser: must be one of ${V6_BROWSERS.join(', ')}`).default('Chrome'),
  url: createRequestSchema.shape.url,
  language: createRequestSchema.shape.language,
  layout: createRequestSchema.shape.layout,
  callbackUrl: createRequestSchema.shape.callbackUrl,
});
export type V6LaunchQuery = z.infer<typeof v6LaunchQuerySchema>;

// POST /api/v6/shortUrl

const shortUrlRule = `url: must be an http or https address of at most ${URL_MAX.toLocaleString('en-US')} characters`;

export const v6ShortUrlRequestSchema = z.object({
  url: z.string(shortUrlRule).refine((v) => v.length <= URL_MAX && isWebAddress(v), shortUrlRule),
});
export type V6ShortUrlRequest = z.infer<typeof v6ShortUrlRequestSchema>;

export const v6ShortUrlResponseSchema = z.object({
  success: z.literal(true),
  /** `url_` and ten digits: digits satisfy both the spec (`url_<digits>`) and decisions.md 23 (10 characters). */
  id: z.string().regex(SHORT_URL_ID_PATTERN),
});
export type V6ShortUrlResponse = z.infer<typeof v6ShortUrlResponseSchema>;
