// v8's saved-profile calls (decisions.md 85): `POST /v8/profile/create {name, browser}`, `GET
// /v8/profile/data` (all, or `?id=`), `POST /v8/profile/rename {id, name}`, `POST
// /v8/profile/remove {id}`, in v8's envelope and its error style: authentication, the rate limit
// and programmatic access as for vm/create, a refused field named in `denied`'s message. The use
// cases are profiles/profiles.ts.
import { parseProfileCreateRequest, parseProfileRemoveRequest, parseProfileRenameRequest, type Profile, type ProfileListResponse, type ProfileResponse } from '../../protocol/index.js';
import type { ProfileRow } from '../profiles/profile-store.js';
import type { ProfileService } from '../profiles/profiles.js';
import type { AccountRow } from '../store/store.js';
import { answer, type ApiAnswer, type ApiRequest } from './calls.js';

/** The routes this file answers (after `/v8/`). */
export const PROFILE_ROUTES = new Set(['POST profile/create', 'GET profile/data', 'POST profile/rename', 'POST profile/remove']);

export interface ProfileCallHelpers {
  /** Authentication, the rate limit and programmatic access before a write (api.ts). */
  programmatic(request: ApiRequest): Promise<AccountRow | ApiAnswer>;
  /** A read: authentication with its rate-limit point (api.ts). */
  read(request: ApiRequest, needsProgrammatic: boolean, reply: (account: AccountRow) => Promise<unknown>): Promise<ApiAnswer>;
  profiles: ProfileService | undefined;
}

/** A profile as the account sees it. */
export function profileEntry(row: ProfileRow): Profile {
  return {
    id: row.id,
    name: row.name,
    browser: row.browser,
    created: new Date(Number(row.created_at)).toISOString(),
    used: new Date(Number(row.used_at)).toISOString(),
    bytes: Number(row.bytes),
    ...(row.save_error ? { save_error: row.save_error } : {}),
  };
}

const notOffered = { status: 'denied', message: 'saved profiles are not offered by this service' };

export async function answerProfileCall(route: string, request: ApiRequest, helpers: ProfileCallHelpers): Promise<ApiAnswer> {
  const { profiles } = helpers;
  if (route === 'GET profile/data') {
    const id = request.url.searchParams.get('id');
    return helpers.read(request, true, async (account) => {
      if (!profiles) return notOffered;
      const outcome = await profiles.list(account, id === null || id === '' ? undefined : id);
      if (outcome.status !== 'ok') return outcome;
      const reply: ProfileListResponse = { status: 'ok', profiles: outcome.value.map(profileEntry) };
      return reply;
    });
  }
  const account = await helpers.programmatic(request);
  if ('body' in account && 'status' in account) return account;
  if (!profiles) return answer(notOffered);
  const body = await request.body();
  if (!body.ok) return answer({ status: 'denied', message: body.message });
  const row = account as AccountRow;
  const made = (outcome: Awaited<ReturnType<ProfileService['create']>>): ApiAnswer => {
    if (outcome.status !== 'ok') return answer(outcome);
    const reply: ProfileResponse = { status: 'ok', profile: profileEntry(outcome.value) };
    return answer(reply);
  };
  switch (route) {
    case 'POST profile/create': {
      const parsed = parseProfileCreateRequest(body.value);
      if (!parsed.ok) return answer({ status: 'denied', message: parsed.message });
      return made(await profiles.create(row, parsed.value.name, parsed.value.browser));
    }
    case 'POST profile/rename': {
      const parsed = parseProfileRenameRequest(body.value);
      if (!parsed.ok) return answer({ status: 'denied', message: parsed.message });
      return made(await profiles.rename(row, parsed.value.id, parsed.value.name));
    }
    default: {
      const parsed = parseProfileRemoveRequest(body.value);
      if (!parsed.ok) return answer({ status: 'denied', message: parsed.message });
      const outcome = await profiles.remove(row, parsed.value.id);
      if (outcome.status === 'ok') return answer({ status: 'ok' });
      // The last save of its session is still under way: the same call after the wait removes it.
      const { retryAfter, ...refusal } = outcome;
      return retryAfter === undefined ? answer(refusal) : answer(refusal, 200, { 'retry-after': String(retryAfter) });
    }
  }
}
