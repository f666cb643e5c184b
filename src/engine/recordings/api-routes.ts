// The interface's calls on a session's recording (issue 35, decisions.md 96, 110), v8 only, routes
// of the API's table (http/routes.ts) that the recordings module gives: `vm/recording` (what it
// holds), `vm/recording/remove`, `vm/recording/link` (a signed, expiring replay link) and
// `vm/recording/media` (the MP4, streamed over node:http by media.ts, here or from the node that
// keeps it).
import { discardRest } from '../../http/node-body.js';
import { parseRecordingLinkRequest } from '../../protocol/index.js';
import type { Plan } from '../config.js';
import type { AccountMeter } from '../http/api-options.js';
import { answer } from '../http/calls.js';
import { isAccount, V8_ONLY, type ApiRoute } from '../http/routes.js';
import type { RecordingsAccess } from './recordings.js';
import type { ReplayLinks } from './replay-links.js';

export function recordingApiRoutes(recordings: RecordingsAccess, replayLinks: ReplayLinks): ApiRoute[] {
  return [
    {
      method: 'GET', path: 'vm/recording', versions: V8_ONLY,
      answer(request, version, { read, ownSession }) {
        const id = request.url.searchParams.get('id');
        return read(request, true, async (account) => {
          const row = await ownSession(account, id, version);
          return 'message' in row ? row : recordings.read(row);
        });
      },
    },
    {
      method: 'POST', path: 'vm/recording/remove', versions: V8_ONLY,
      answer: (request, version, { sessionByBody, ownSession }) =>
        sessionByBody(request, async (account, id) => {
          const row = await ownSession(account, id, version);
          return answer('message' in row ? row : await recordings.remove(row));
        }),
    },
    {
      method: 'POST', path: 'vm/recording/link', versions: V8_ONLY,
      async answer(request, version, { programmatic, ownSession }) {
        const account = await programmatic(request);
        if (!isAccount(account)) return account;
        const body = await request.body();
        const parsed = body.ok ? parseRecordingLinkRequest(body.value) : body;
        if (!parsed.ok) return answer({ status: 'denied', message: parsed.message });
        const row = await ownSession(account, parsed.value.id, version);
        return answer('message' in row ? row : await replayLinks.mint(row, parsed.value.expires_in_s));
      },
    },
    {
      // In-process callers reach the media over loopback (http/fetch.ts), as a file's bytes.
      method: 'GET', path: 'vm/recording/media', versions: V8_ONLY,
      answer: async () => answer({ status: 'denied', message: 'vm/recording/media streams its bytes: call it over HTTP, not in-process' }),
      // The key and its session checked as for any call, then the MP4 streamed.
      async stream({ request, response, api, version, refuse }, { programmatic, ownSession }) {
        const account = await programmatic(api);
        if (!isAccount(account)) return refuse(account);
        const row = await ownSession(account, api.url.searchParams.get('id'), version);
        if ('message' in row) return refuse(answer(row, 403));
        await discardRest(request);
        await recordings.sendMedia(request.headers.range, response, row);
      },
    },
  ];
}

/** The account's recording megabytes cap over its plans that record (decisions.md 131): the largest; null when one has none; undefined when none records. */
function recordingMbLimit(plans: ReadonlyArray<Plan | undefined>): number | null | undefined {
  const recording = plans.filter((plan): plan is Plan => plan?.recording === true);
  if (recording.length === 0) return undefined;
  const limits = recording.map((plan) => plan.recording_mb_limit ?? null);
  return limits.includes(null) ? null : Math.max(...(limits as number[]));
}

/** The recordings' fields on `user/quota` and `user/api`: what the account's recordings keep, and its plans' cap. */
export function recordingAccountMeter(recordings: RecordingsAccess): AccountMeter {
  return async (account, plans) => {
    const limit = recordingMbLimit(plans);
    return { ...(await recordings.meters(account.id)), ...(limit !== undefined ? { recording_mb_limit: limit } : {}) };
  };
}
