// v8's saved-profile calls (decisions.md 85): `POST /v8/profile/create {name, browser}`, `GET
// /v8/profile/data` (all, or `?id=`), `POST /v8/profile/rename {id, name}`, `POST
// /v8/profile/remove {id}`, in v8's envelope and its error style: authentication, the rate limit
// and programmatic access as for vm/create, a refused field named in `denied`'s message. Routes of
// the API's table (http/routes.ts) that the profiles module gives; the use cases are profiles.ts.
import { parseProfileCreateRequest, parseProfileRemoveRequest, parseProfileRenameRequest, type Profile, type ProfileListResponse, type ProfileResponse } from '../../protocol/index.js';
import { answer, type ApiAnswer } from '../http/calls.js';
import { isAccount, V8_ONLY, type ApiRoute } from '../http/routes.js';
import type { AccountRow } from '../store/store.js';
import type { ProfileRow } from './profile-store.js';
import type { ProfileService } from './profiles.js';

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

/** A write on the account's profiles: the key and its plan, then the body, then `act` with it. */
function profileWrite(profiles: ProfileService, act: (profiles: ProfileService, account: AccountRow, body: unknown) => Promise<ApiAnswer>): ApiRoute['answer'] {
  return async (request, _version, { programmatic }) => {
    const account = await programmatic(request);
    if (!isAccount(account)) return account;
    const body = await request.body();
    if (!body.ok) return answer({ status: 'denied', message: body.message });
    return act(profiles, account, body.value);
  };
}

const made = (outcome: Awaited<ReturnType<ProfileService['create']>>): ApiAnswer => {
  if (outcome.status !== 'ok') return answer(outcome);
  const reply: ProfileResponse = { status: 'ok', profile: profileEntry(outcome.value) };
  return answer(reply);
};

export function profileApiRoutes(profiles: ProfileService): ApiRoute[] {
  return [
    {
      method: 'GET', path: 'profile/data', versions: V8_ONLY,
      answer(request, _version, { read }) {
        const id = request.url.searchParams.get('id');
        return read(request, true, async (account) => {
          const outcome = await profiles.list(account, id === null || id === '' ? undefined : id);
          if (outcome.status !== 'ok') return outcome;
          const reply: ProfileListResponse = { status: 'ok', profiles: outcome.value.map(profileEntry) };
          return reply;
        });
      },
    },
    {
      method: 'POST', path: 'profile/create', versions: V8_ONLY,
      answer: profileWrite(profiles, async (profiles, account, body) => {
        const parsed = parseProfileCreateRequest(body);
        if (!parsed.ok) return answer({ status: 'denied', message: parsed.message });
        return made(await profiles.create(account, parsed.value.name, parsed.value.browser));
      }),
    },
    {
      method: 'POST', path: 'profile/rename', versions: V8_ONLY,
      answer: profileWrite(profiles, async (profiles, account, body) => {
        const parsed = parseProfileRenameRequest(body);
        if (!parsed.ok) return answer({ status: 'denied', message: parsed.message });
        return made(await profiles.rename(account, parsed.value.id, parsed.value.name));
      }),
    },
    {
      method: 'POST', path: 'profile/remove', versions: V8_ONLY,
      answer: profileWrite(profiles, async (profiles, account, body) => {
        const parsed = parseProfileRemoveRequest(body);
        if (!parsed.ok) return answer({ status: 'denied', message: parsed.message });
        const outcome = await profiles.remove(account, parsed.value.id);
        if (outcome.status === 'ok') return answer({ status: 'ok' });
        // The last save of its session is still under way: the same call after the wait removes it.
        const { retryAfter, ...refusal } = outcome;
        return retryAfter === undefined ? answer(refusal) : answer(refusal, 200, { 'retry-after': String(retryAfter) });
      }),
    },
  ];
}
