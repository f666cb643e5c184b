// The v7 differences from v8: create and the session entry say whether the exit location was
// applied. Requests, statuses and rules are v8's; share links may also come without a language
// segment (`/s?<link_id>`), which parseShareLink reads as `en`.
import { z } from 'zod';
import { createResponseSchema, sessionEntrySchema, vmDataResponseSchema } from './v8.js';

/** Why a requested location was not applied: it had no free exit, so the default connection is used. */
export const LOCATION_REASONS = ['unavailable'] as const;
export type LocationReason = (typeof LOCATION_REASONS)[number];

const locationReason = z.enum(LOCATION_REASONS);

export const v7CreateResponseSchema = createResponseSchema.extend({
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
