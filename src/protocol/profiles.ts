// Saved browser profiles (issue 34, decisions.md 85-89): an account's named browser state that a
// later session restores (`POST /v8/vm/create` with `profile`), and the v8 calls that make, list,
// rename and remove them. Request checks and answer shapes, shared by the engine and the clients.
import { z } from 'zod';
import { parseRequest, type RequestCheck } from './v8.js';

export { sessionProfileSchema, profileMetersSchema, type SessionProfile, type ProfileMeters } from './profile-fields.js';

/** A profile's name: what the account calls it (1 to 100 characters, no control characters). */
export const PROFILE_NAME_MAX = 100;
/** What a profile id looks like (128 random bits in hex): anything else is no profile, without a look-up. */
export const PROFILE_ID_PATTERN = /^[0-9a-f]{32}$/;

const nameField = z
  .string(`name: required; a text of 1 to ${PROFILE_NAME_MAX} characters`)
  .refine((v) => v.trim().length > 0 && v.length <= PROFILE_NAME_MAX && !/[\u0000-\u001f\u007f]/.test(v), `name: must be 1 to ${PROFILE_NAME_MAX} characters, not only spaces, without control characters`);
const idField = z.string('id: required; the profile id that POST /v8/profile/create answered').refine((v) => v !== '', 'id: required; the profile id that POST /v8/profile/create answered');

export const profileCreateRequestSchema = z.object({
  name: nameField,
  browser: z.string('browser: required; a browser id listed by GET /v8/image').refine((v) => v !== '', 'browser: required; a browser id listed by GET /v8/image'),
});
export type ProfileCreateRequest = z.infer<typeof profileCreateRequestSchema>;

export const profileRenameRequestSchema = z.object({ id: idField, name: nameField });
export type ProfileRenameRequest = z.infer<typeof profileRenameRequestSchema>;

export const profileRemoveRequestSchema = z.object({ id: idField });
export type ProfileRemoveRequest = z.infer<typeof profileRemoveRequestSchema>;

export function parseProfileCreateRequest(body: unknown): RequestCheck<ProfileCreateRequest> {
  return parseRequest(profileCreateRequestSchema, body);
}
export function parseProfileRenameRequest(body: unknown): RequestCheck<ProfileRenameRequest> {
  return parseRequest(profileRenameRequestSchema, body);
}
export function parseProfileRemoveRequest(body: unknown): RequestCheck<ProfileRemoveRequest> {
  return parseRequest(profileRemoveRequestSchema, body);
}

/** A profile as the account sees it. */
export const profileSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** The browser id it was made for; any browser of the same family (Chromium, Firefox) may use it. */
  browser: z.string(),
  /** ISO 8601. */
  created: z.string(),
  /** When a session last started on it (ISO 8601); its expiry counts from here. */
  used: z.string(),
  /** The saved state's size (0 until a session saved it). */
  bytes: z.number().int().min(0),
  /** Why the last save did not happen (over a cap, the session's profile not packed whole); the earlier version stayed. */
  save_error: z.string().optional(),
});
export type Profile = z.infer<typeof profileSchema>;

/** `POST /v8/profile/create` and `POST /v8/profile/rename`. */
export const profileResponseSchema = z.object({ status: z.literal('ok'), profile: profileSchema });
export type ProfileResponse = z.infer<typeof profileResponseSchema>;

/** `GET /v8/profile/data` (all of the account's, or the one `?id=` names; an unknown id: empty). */
export const profileListResponseSchema = z.object({ status: z.literal('ok'), profiles: z.array(profileSchema) });
export type ProfileListResponse = z.infer<typeof profileListResponseSchema>;

