// Stand-ins for the stories: a fetch that answers like the proxy route's /usage endpoint, and one
// that answers like the engine's share API, so no story needs a running engine. A showcase only:
// the component tests (test/react) run against the real route and engine.
import type { Pool, UserQuotaResponse, ViewerState, ViewerStateName } from '../src/protocol/index.js';

const MB = 1024 * 1024;

function pool(fields: Partial<Pool> & Pick<Pool, 'plan_id' | 'plan_name'>): Pool {
  return {
    subscription_id: `sub_${fields.plan_id}`,
    cycle_start: '2025-10-31',
    cycle_end: '2025-11-30',
    cycle_session_limit: 100,
    cycle_sessions_used: 0,
    cycle_sessions_remaining: 100,
    running_session_limit: 5,
    running_sessions_used: 0,
    running_sessions_remaining: 5,
    residential_cycle_mb_limit: null,
    residential_bytes_used_cycle: 0,
    ...fields,
  };
}

/** The route's answer for these pools: totals are sums, `null` when any pool's is (decisions.md 11). */
function usageOf(pools: Pool[]): UserQuotaResponse {
  const sum = (pick: (p: Pool) => number) => pools.reduce((total, p) => total + pick(p), 0);
  const sumOrNull = (pick: (p: Pool) => number | null) => (pools.some((p) => pick(p) === null) ? null : sum((p) => pick(p) as number));
  return {
    status: 'ok',
    has_plan: pools.length > 0,
    cycle_start: pools[0]?.cycle_start ?? '2025-11-21',
    cycle_end: pools[0]?.cycle_end ?? '2025-12-21',
    cycle_session_limit: pools.length ? sumOrNull((p) => p.cycle_session_limit) : 0,
    cycle_sessions_used: sum((p) => p.cycle_sessions_used),
    cycle_sessions_remaining: pools.length ? sumOrNull((p) => p.cycle_sessions_remaining) : 0,
    running_session_limit: sum((p) => p.running_session_limit),
    running_sessions_used: sum((p) => p.running_sessions_used),
    running_sessions_remaining: sum((p) => p.running_sessions_remaining),
    residential_cycle_mb_limit: pools.length ? sumOrNull((p) => p.residential_cycle_mb_limit) : null,
    residential_bytes_used_cycle: sum((p) => p.residential_bytes_used_cycle),
    pools,
  };
}

const pro = (running: number) =>
  pool({ plan_id: 'pro', plan_name: 'Pro', running_sessions_used: running, running_sessions_remaining: 5 - running, cycle_sessions_used: 42 + running, cycle_sessions_remaining: 58 - running, residential_cycle_mb_limit: 1024, residential_bytes_used_cycle: 312 * MB });

/** What the route answers in each scenario of the UsageMeters stories. */
export const USAGE_SCENARIOS = {
  /** Pro plan: 2 of 5 running, 44 of 100 this cycle, 312 MB of 1 GB residential. */
  ready: () => usageOf([pro(2)]),
  /** No cap on sessions per cycle. */
  unlimited: () => usageOf([pool({ plan_id: 'unlimited', plan_name: 'Unlimited', running_session_limit: 50, running_sessions_used: 7, running_sessions_remaining: 43, cycle_session_limit: null, cycle_sessions_used: 1280, cycle_sessions_remaining: null, residential_cycle_mb_limit: 102400, residential_bytes_used_cycle: 38_500 * MB })]),
  /** A plan without a residential allowance. */
  noResidential: () => usageOf([pool({ plan_id: 'free', plan_name: 'Free', running_session_limit: 1, running_sessions_used: 1, running_sessions_remaining: 0, cycle_session_limit: 30, cycle_sessions_used: 12, cycle_sessions_remaining: 18 })]),
  /** Two subscriptions: Pro and an add-on without residential data, on a cycle of its own. */
  twoPools: () => usageOf([pro(3), pool({ plan_id: 'team', plan_name: 'Team add-on', cycle_start: '2025-11-15', cycle_end: '2025-12-15', running_session_limit: 20, running_sessions_used: 4, running_sessions_remaining: 16, cycle_session_limit: 10000, cycle_sessions_used: 2345, cycle_sessions_remaining: 7655 })]),
  /** No subscription at all. */
  noPlan: () => usageOf([]),
} as const;

export type UsageScenario = keyof typeof USAGE_SCENARIOS | 'loading' | 'error' | 'notShared' | 'growing';

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fetch that answers GET {endpoint}/usage as the proxy route would in `scenario`. */
export function usageRouteFetch(scenario: UsageScenario): typeof fetch {
  let reads = 0;
  return async (input) => {
    const url = String(input instanceof Request ? input.url : input);
    if (!url.endsWith('/usage')) return json(404, { status: 'denied', message: `no endpoint GET ${url}` });
    reads += 1;
    switch (scenario) {
      case 'loading':
        return new Promise<Response>(() => undefined);
      case 'error':
        throw new TypeError('Failed to fetch');
      case 'notShared':
        return json(403, { status: 'denied', message: 'usage meters are not shared with you' });
      case 'growing':
        // Each read finds one more running session (as if someone launched one): for Refresh.
        await pause(400);
        return json(200, usageOf([pro(Math.min(reads, 5))]));
      default:
        await pause(150);
        return json(200, USAGE_SCENARIOS[scenario]());
    }
  };
}

export type ShareScenario = ViewerStateName | 'unreachable';

export const SHARE_LINK_ID = 'c3Rvcnlib29rLXNoYXJlLWxpbms';
export const LEAVE_URL = 'https://app.example.com/sessions/done';

export const VIEW_ONLY_LINK_ID = 'c3Rvcnlib29rLXZpZXctb25seQ';

/**
 * A fetch that answers the share API (state, ping, view-only link) for a link in `scenario`;
 * `link` says what the link lets its holder do, `viewers` how many watch, `sound` whether the session has sound.
 */
export function shareApiFetch(scenario: ShareScenario, browserName = 'Chromium', link: { control: boolean; viewers: number; sound?: boolean } = { control: true, viewers: 1 }): typeof fetch {
  return async (input) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    if (scenario === 'unreachable') throw new TypeError('Failed to fetch');
    if (url.pathname.endsWith('/ping')) return new Response(null, { status: 204 });
    if (scenario === 'gone') return json(404, { state: 'gone' });
    if (url.pathname.endsWith('/view-only')) {
      if (!link.control) return json(403, { status: 'denied', message: 'a view-only link cannot make links' });
      const shareUrlPath = `/en/s?${VIEW_ONLY_LINK_ID}`;
      return json(200, { status: 'ok', linkId: VIEW_ONLY_LINK_ID, shareUrl: `${url.origin}/share-stand-in${shareUrlPath}`, shareUrlPath });
    }
    const { sound, ...rights } = link;
    const state: ViewerState = { state: scenario, language: 'en', browserName, leaveUrl: LEAVE_URL, ...rights, channels: sound ? { sound: true } : {} };
    return json(200, state);
  };
}
