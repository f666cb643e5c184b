// The profile fields other answers and requests carry (issue 34): `profile` of vm/create and the
// profile meters of user/api and user/quota. Apart from profiles.ts, so that v8.ts can use them.
import { z } from 'zod';

/** `profile` of `POST /v8/vm/create`: the profile the session starts on, and whether its state is written back at the end. */
export const sessionProfileSchema = z.object(
  {
    id: z.string('profile.id: required; the profile id that POST /v8/profile/create answered').refine((v) => v !== '' && v.length <= 200, 'profile.id: required; the profile id that POST /v8/profile/create answered'),
    /** Write the session's state back when it ends normally (removed, idle, maximum duration). */
    save: z.boolean('profile.save: must be true or false').default(true),
    /** Keep the open tabs too (restored in order with their addresses). */
    tabs: z.boolean('profile.tabs: must be true or false').default(false),
  },
  'profile: must be an object {id, save, tabs}',
);
export type SessionProfile = z.infer<typeof sessionProfileSchema>;

/** The profile meters of `/v8/user/usage`-style answers (user/api, user/quota): `null` limit = none. */
export const profileMetersSchema = z.object({
  profile_limit: z.number().int().min(0).nullable(),
  profiles_used: z.number().int().min(0),
  profile_mb_limit: z.number().int().min(0).nullable(),
  profile_mb_used: z.number().min(0),
});
export type ProfileMeters = z.infer<typeof profileMetersSchema>;
