// The service client's saved-profile calls (issue 34, decisions.md 85): `profile/create`,
// `profile/data`, `profile/rename`, `profile/remove`, over the client's one checked request
// (service-client.ts): the same key, timeout, retries where safe, and typed errors.
import type { z } from 'zod';
import { profileListResponseSchema, profileResponseSchema, removeResponseSchema, type Profile } from '../protocol/index.js';

type Request = <T>(call: { method: 'GET' | 'POST'; path: string; what: string; schema: z.ZodType<T>; body?: unknown; authenticated: boolean; repeatable: boolean; signal: AbortSignal | undefined }) => Promise<T>;
type Options = { signal?: AbortSignal } | undefined;

export interface ProfileCalls {
  /** GET /v8/profile/data: the account's saved profiles, oldest first. */
  profiles(options?: Options): Promise<Profile[]>;
  /** GET /v8/profile/data?id=: one profile, or null when the account has none by that id. */
  profile(id: string, options?: Options): Promise<Profile | null>;
  /** POST /v8/profile/create: an empty profile for a browser family. */
  createProfile(name: string, browser: string, options?: Options): Promise<Profile>;
  /** POST /v8/profile/rename. */
  renameProfile(id: string, name: string, options?: Options): Promise<Profile>;
  /** POST /v8/profile/remove (denied while a session runs on it). */
  removeProfile(id: string, options?: Options): Promise<void>;
}

export function profileCalls(request: Request): ProfileCalls {
  const read = (path: string, what: string, options: Options) =>
    request({ method: 'GET', path, what, schema: profileListResponseSchema, authenticated: true, repeatable: true, signal: options?.signal });
  const write = <T>(path: string, what: string, body: unknown, schema: z.ZodType<T>, repeatable: boolean, options: Options) =>
    request({ method: 'POST', path, what, schema, body, authenticated: true, repeatable, signal: options?.signal });
  return {
    profiles: async (options) => (await read('profile/data', 'the profile list', options)).profiles,
    profile: async (id, options) => (await read(`profile/data?id=${encodeURIComponent(id)}`, 'the profile', options)).profiles[0] ?? null,
    // A repeated create would make a second profile: never retried.
    createProfile: async (name, browser, options) => (await write('profile/create', 'creating a profile', { name, browser }, profileResponseSchema, false, options)).profile,
    renameProfile: async (id, name, options) => (await write('profile/rename', 'renaming a profile', { id, name }, profileResponseSchema, true, options)).profile,
    removeProfile: async (id, options) => {
      await write('profile/remove', 'removing a profile', { id }, removeResponseSchema, true, options);
    },
  };
}
