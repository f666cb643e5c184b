// The interface's calls on the caller's account: `user/api` and `user/quota` (v8 and v7, v7's
// names added at its edge, decisions.md 32), the session webhook's receiver (`user/webhook`,
// v8 only, decisions.md 61) and the origins that may frame its share links (`user/embed`, v8
// only, decisions.md 134).
import { parseEmbedRequest, parseWebhookRequest, uniqueOrigins, type EmbedResponse, type UserApiResponse, type UserQuotaResponse } from '../../protocol/index.js';
import type { AccountRow } from '../store/store.js';
import { answer, type ApiRequest } from './calls.js';
import { BOTH, isAccount, V8_ONLY, type ApiRoute, type ApiVersion, type RouteTools } from './routes.js';
import { v7UserApi, v7UserQuota } from './v7.js';

const notOffered = { status: 'denied', message: 'this service does not send webhooks' };

/** The account's meters (its pools, and the features' meters: profiles, recordings): `user/quota`, or with the account's facts, `user/api`. */
function usageOf(which: 'api' | 'quota') {
  return (request: ApiRequest, version: ApiVersion, { options, read }: RouteTools) =>
    read(request, false, async (account: AccountRow) => {
      const { usage } = options;
      const accountUsage = await usage.usage(account);
      // v7's quota answers are v8's with its own names added (decisions.md 32): the profile meters too.
      const plans = accountUsage.pools.map((pool) => options.accounts.plan(pool.plan_id));
      const featureMeters = await Promise.all((options.accountMeters ?? []).map((meter) => meter(account, plans)));
      const quota = { status: 'ok', has_plan: accountUsage.has_plan, ...accountUsage.meters, pools: accountUsage.pools, ...Object.assign({}, ...featureMeters) } as UserQuotaResponse;
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
