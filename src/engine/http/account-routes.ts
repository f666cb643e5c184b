// The interface's calls on the caller's account: `user/api` and `user/quota` (v8 and v7, v7's
// names added at its edge, decisions.md 32), the session webhook's receiver (`user/webhook`,
// v8 only, decisions.md 61) and the origins that may frame its share links (`user/embed`, v8
// only, decisions.md 134).
import { parseEmbedRequest, parseWebhookRequest, uniqueOrigins, type EmbedResponse, type UserApiResponse, type UserQuotaResponse } from '../../protocol/index.js';
import type { Plan } from '../config.js';
import type { AccountRow } from '../store/store.js';
import { answer, type ApiRequest } from './calls.js';
import { BOTH, isAccount, V8_ONLY, type ApiRoute, type ApiVersion, type RouteTools } from './routes.js';
import { v7UserApi, v7UserQuota } from './v7.js';

const notOffered = { status: 'denied', message: 'this service does not send webhooks' };

/** The account's recording megabytes cap over its plans that record (decisions.md 131): the largest; null when one has none; undefined when none records. */
function recordingMbLimit(plans: ReadonlyArray<Plan | undefined>): number | null | undefined {
  const recording = plans.filter((plan): plan is Plan => plan?.recording === true);
  if (recording.length === 0) return undefined;
  const limits = recording.map((plan) => plan.recording_mb_limit ?? null);
  return limits.includes(null) ? null : Math.max(...(limits as number[]));
}

/** The account's meters (its pools, profiles and recordings): `user/quota`, or with the account's facts, `user/api`. */
function usageOf(which: 'api' | 'quota') {
  return (request: ApiRequest, version: ApiVersion, { options, read }: RouteTools) =>
    read(request, false, async (account: AccountRow) => {
      const { usage } = options;
      const accountUsage = await usage.usage(account);
      // v7's quota answers are v8's with its own names added (decisions.md 32): the profile meters too.
      const profileMeters = await options.profiles?.meters(account);
      const recordingMeters = await options.recordings?.meters(account.id);
      const recordingLimit = recordingMbLimit(accountUsage.pools.map((pool) => options.accounts.plan(pool.plan_id)));
      const quota: UserQuotaResponse = { status: 'ok', has_plan: accountUsage.has_plan, ...accountUsage.meters, pools: accountUsage.pools, ...(profileMeters ?? {}), ...(recordingMeters ?? {}), ...(recordingMeters && recordingLimit !== undefined ? { recording_mb_limit: recordingLimit } : {}) };
      if (which === 'quota') return version === 'v7' ? v7UserQuota(quota) : quota;
      const { status, ...meters } = quota;
      const user: UserApiResponse = { status, contact: account.contact, feature_programmatic_access: await usage.hasProgrammaticAccess(account), ...meters };
      return version === 'v7' ? v7UserApi(user) : user;
    });
}

export const ACCOUNT_ROUTES: readonly ApiRoute[] = [
  { method: 'GET', path: 'user/api', versions: BOTH, answer: usageOf('api') },
  { method: 'GET', path: 'user/quota', versions: BOTH, answer: usageOf('quota') },
  {
    method: 'GET', path: 'user/webhook', versions: V8_ONLY,
    answer: (request, _version, { options: { webhooks }, read }) => read(request, true, async (account) => (webhooks ? webhooks.get(account.id) : notOffered)),
  },
  {
    method: 'POST', path: 'user/webhook', versions: V8_ONLY,
    async answer(request, _version, { options: { webhooks }, programmatic }) {
      const account = await programmatic(request);
      if (!isAccount(account)) return account;
      if (!webhooks) return answer(notOffered);
      const body = await request.body();
      if (!body.ok) return answer({ status: 'denied', message: body.message });
      const parsed = parseWebhookRequest(body.value);
      if (!parsed.ok) return answer({ status: 'denied', message: parsed.message });
      return answer(await webhooks.set(account.id, parsed.value.url));
    },
  },
  {
    method: 'DELETE', path: 'user/webhook', versions: V8_ONLY,
    async answer(request, _version, { options: { webhooks }, programmatic }) {
      const account = await programmatic(request);
      if (!isAccount(account)) return account;
      return answer(webhooks ? await webhooks.remove(account.id) : notOffered);
    },
  },
  // The origins that may frame the account's share links (issue 44, decisions.md 134).
  {
    method: 'GET', path: 'user/embed', versions: V8_ONLY,
    answer: (request, _version, { options: { store }, read }) => read(request, true, async (account) => ({ status: 'ok', origins: await store.embedOrigins(account.id) } satisfies EmbedResponse)),
  },
  {
    method: 'POST', path: 'user/embed', versions: V8_ONLY,
    async answer(request, _version, { options: { store }, programmatic }) {
      const account = await programmatic(request);
      if (!isAccount(account)) return account;
      const body = await request.body();
      const parsed = body.ok ? parseEmbedRequest(body.value) : body;
      if (!parsed.ok) return answer({ status: 'denied', message: parsed.message });
      const origins = uniqueOrigins(parsed.value.origins);
      await store.setEmbedOrigins(account.id, origins);
      return answer({ status: 'ok', origins } satisfies EmbedResponse);
    },
  },
];
