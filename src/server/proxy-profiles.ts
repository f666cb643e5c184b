// The proxy route's saved-profile endpoints (issue 34, decisions.md 89): the signed-in
// user's own profiles, reached by handles sealed to them, never by the service's ids or key.
// The account's profiles are shared by every user of the customer's app, so the route marks
// each it makes for a user with a tag only it can make for that user (an HMAC of the user's id
// under the route's secret) in front of its name; a user sees, renames, removes and starts
// sessions on the profiles marked with their own tag alone. Stateless, as session handles are.
// `GET <base>/profiles`, `POST <base>/profiles {name, browser}`, `POST <base>/profiles/:handle
// {name}` (rename), `DELETE <base>/profiles/:handle`; a create sends a profile's handle as
// `profile.id`.
import { PROFILE_NAME_MAX, type Profile } from '../protocol/index.js';
import type { ProxyProfile } from '../protocol/proxy.js';
import type { RemoteBrowserService } from './remote-browser-service.js';
import type { SessionHandles } from './session-handles.js';

/** What a profile handle seals, so that a session's handle never opens as a profile's (nor the other way). */
const PROFILE_PREFIX = 'profile:';
/** The tag and the colon after it take this much of the service's name. */
const TAG_CHARS = 17;
export const PROXY_PROFILE_NAME_MAX = PROFILE_NAME_MAX - TAG_CHARS;
export const UNKNOWN_PROFILE = 'profile: unknown profile: it may belong to someone else or have been removed';

export type ProfilesEndpoint = { name: 'profiles' } | { name: 'profile'; handle: string };

type Reply = (body: unknown, status?: number) => Response;

export interface ProfileOwner {
  userId: string;
  handles: SessionHandles;
}

/** The profile id a handle names for this user, or null (malformed, another user's, a session's). */
export async function openProfileHandle(owner: ProfileOwner, handle: string): Promise<string | null> {
  const opened = await owner.handles.open(handle, owner.userId);
  return opened?.startsWith(PROFILE_PREFIX) ? opened.slice(PROFILE_PREFIX.length) : null;
}

async function asUsers(owner: ProfileOwner, tag: string, profile: Profile): Promise<ProxyProfile> {
  const { id, name, ...rest } = profile;
  return { handle: await owner.handles.seal(`${PROFILE_PREFIX}${id}`, owner.userId, true), name: name.slice(tag.length + 1), ...rest };
}

function nameProblem(name: unknown): string | null {
  if (typeof name !== 'string' || name.trim() === '' || name.length > PROXY_PROFILE_NAME_MAX || /[\u0000-\u001f\u007f]/.test(name)) {
    return `name: must be 1 to ${PROXY_PROFILE_NAME_MAX} characters, not only spaces, without control characters`;
  }
  return null;
}

export async function serveProfiles(
  service: RemoteBrowserService,
  endpoint: ProfilesEndpoint,
  method: string,
  body: () => Promise<Record<string, unknown> | Response>,
  owner: ProfileOwner,
  signal: AbortSignal,
  reply: Reply,
): Promise<Response> {
  const { profiles, createProfile, renameProfile, removeProfile } = service;
  if (!profiles || !createProfile || !renameProfile || !removeProfile) {
    return reply({ status: 'denied', message: 'this service client keeps no profiles: use createServiceClient() from remote-browser-kit/server' }, 501);
  }
  const tag = await owner.handles.ownerTag(owner.userId);
  if (endpoint.name === 'profiles') {
    if (method === 'GET') {
      const own = (await profiles({ signal })).filter((p) => p.name.startsWith(`${tag}:`));
      return reply({ status: 'ok', profiles: await Promise.all(own.map((p) => asUsers(owner, tag, p))) });
    }
    const asked = await body();
    if (asked instanceof Response) return asked;
    const problem = nameProblem(asked.name);
    if (problem) return reply({ status: 'denied', message: problem }, 400);
    if (typeof asked.browser !== 'string' || asked.browser === '') return reply({ status: 'denied', message: 'browser: required; a browser id of the image list' }, 400);
    return reply({ status: 'ok', profile: await asUsers(owner, tag, await createProfile(`${tag}:${asked.name}`, asked.browser, { signal })) });
  }
  const id = await openProfileHandle(owner, endpoint.handle);
  if (id === null) return reply({ status: 'denied', message: UNKNOWN_PROFILE }, 404);
  if (method === 'DELETE') {
    await removeProfile(id, { signal });
    return reply({ status: 'ok' });
  }
  const asked = await body();
  if (asked instanceof Response) return asked;
  const problem = nameProblem(asked.name);
  if (problem) return reply({ status: 'denied', message: problem }, 400);
  return reply({ status: 'ok', profile: await asUsers(owner, tag, await renameProfile(id, `${tag}:${asked.name}`, { signal })) });
}
