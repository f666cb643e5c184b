// The v7 differences from v8: create and the session entry say whether the exit location was
// applied; meters also carry the names of the earlier v7 description (credits, concurrency,
// browser_*, api_enabled); `country` also takes two-letter ISO codes; without `shareLanguage` the
// share link has no language segment (`/s?<link_id>`, which parseShareLink reads as `en`).
// Requests, statuses and other rules are v8's.
import { z } from 'zod';
import {
  createResponseSchema,
  sessionEntrySchema,
  sessionMetersSchema,
  userApiResponseSchema,
  userQuotaResponseSchema,
  vmDataResponseSchema,
} from './v8.js';

/** Why a requested location was not applied: it had no free exit, so the default connection is used. */
export const LOCATION_REASONS = ['unavailable'] as const;
export type LocationReason = (typeof LOCATION_REASONS)[number];

const locationReason = z.enum(LOCATION_REASONS);
const count = z.int().nonnegative();

/**
 * The earlier v7 description's quota fields (docs/decisions.md 32): credits are the cycle's
 * sessions, concurrency the running sessions; `null` means no cap, as in the session meters.
 */
export const v7CreditMetersSchema = z.object({
  credits_total: count.nullable(),
  credits_used: count,
  credits_available: count.nullable(),
  concurrency_total: count,
  concurrency_used: count,
  concurrency_available: count,
  cycle_start: z.iso.date(),
  cycle_end: z.iso.date(),
});
export type V7CreditMeters = z.infer<typeof v7CreditMetersSchema>;

/** A v7 quota object: the session meters and their credit-based names. */
export const v7QuotaSchema = sessionMetersSchema.extend(v7CreditMetersSchema.shape);
export type V7Quota = z.infer<typeof v7QuotaSchema>;

export const v7CreateResponseSchema = createResponseSchema.extend({
  quota: v7QuotaSchema,
  /** `true` without `country`. */
  location_applied: z.boolean(),
  location_reason: locationReason.optional(),
});
export type V7CreateResponse = z.infer<typeof v7CreateResponseSchema>;

/** Carries the location fields until the session's location is changed. */
export const v7SessionEntrySchema = sessionEntrySchema.extend({
  location_applied: z.boolean().optional(),
  location_reason: locationReason.optional(),
});
export type V7SessionEntry = z.infer<typeof v7SessionEntrySchema>;

export const v7VmDataResponseSchema = vmDataResponseSchema.extend({
  data: z.array(v7SessionEntrySchema),
});
export type V7VmDataResponse = z.infer<typeof v7VmDataResponseSchema>;

/** GET /v7/user/quota: the v8 answer with the quota fields flat. */
export const v7UserQuotaResponseSchema = userQuotaResponseSchema.extend(v7CreditMetersSchema.shape);
export type V7UserQuotaResponse = z.infer<typeof v7UserQuotaResponseSchema>;

/** GET /v7/user/api: the v8 answer, programmatic access as `api_enabled`, the cycle's sessions as `browser_*`, and `quota`. */
export const v7UserApiResponseSchema = userApiResponseSchema.extend({
  api_enabled: z.boolean(),
  browser_quota: count.nullable(),
  browser_used: count,
  browser_remaining: count.nullable(),
  quota: v7QuotaSchema,
});
export type V7UserApiResponse = z.infer<typeof v7UserApiResponseSchema>;
