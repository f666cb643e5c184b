// Stand-in of the proxy route for the SessionLauncher stories: image list, create, session reads
// and end, answering as the route would in each scenario. A showcase only: the component tests
// (test/react/session-launcher.test.tsx) run against the real route and engine.
import type { ImageListResponse } from '../src/protocol/index.js';

export type LauncherScenario = 'ready' | 'loading' | 'withLocations' | 'deniedField' | 'upgrade' | 'rateLimited' | 'serviceError' | 'unauthorized' | 'profiles' | 'profileInUse';

const IMAGES: ImageListResponse = {
  status: 'ok',
  images: [
    { id: 'chromium', name: 'Chromium', enabled: true },
    { id: 'firefox-esr', name: 'Firefox ESR', enabled: true },
    { id: 'chrome', name: 'Google Chrome', enabled: false },
    { id: 'edge', name: 'Microsoft Edge', enabled: false },
  ],
  vpnLocations: [],
  residential: { configured: false, countries: null },
};

const LOCATIONS: ImageListResponse = {
  ...IMAGES,
  vpnLocations: [
    { code: 'de', name: 'Germany', default: 'de-ber', cities: [{ code: 'de-ber', location: 'Berlin' }, { code: 'de-fra', location: 'Frankfurt' }] },
    { code: 'us', name: 'United States', default: 'us-dal', cities: [{ code: 'us-dal', location: 'Dallas' }, { code: 'us-nyc', location: 'New York' }] },
  ],
  residential: { configured: true, countries: null },
};

/** The signed-in user's saved profiles (issue 34), by handle. */
const PROFILES = [
  { handle: 'p_shop', name: 'Shop', browser: 'chromium', created: '2025-11-02T09:00:00.000Z', used: '2025-11-20T17:30:00.000Z', bytes: 2_400_000 },
  { handle: 'p_bank', name: 'Bank', browser: 'chromium', created: '2025-11-05T09:00:00.000Z', used: '2025-11-21T08:10:00.000Z', bytes: 900_000 },
  { handle: 'p_fox', name: 'Research', browser: 'firefox-esr', created: '2025-11-06T09:00:00.000Z', used: '2025-11-06T09:00:00.000Z', bytes: 0 },
];

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** A fetch answering like the proxy route; a launched session runs after `startMs`. */
export function launcherRouteFetch(scenario: LauncherScenario, startMs = 1500): typeof fetch {
  let launchedAt = 0;
  let ended = false;
  return async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    const method = init?.method ?? 'GET';
    if (url.endsWith('/images')) {
      if (scenario === 'loading') return new Promise<Response>(() => undefined);
      if (scenario === 'unauthorized') return json({ status: 'denied', message: 'sign in to use remote browser sessions' }, 401);
      return json(scenario === 'withLocations' ? LOCATIONS : IMAGES);
    }
    if (url.endsWith('/profiles')) {
      if (method === 'POST') {
        const { name, browser } = JSON.parse(String(init?.body)) as { name: string; browser: string };
        return json({ status: 'ok', profile: { handle: `p_${PROFILES.length}`, name, browser, created: new Date().toISOString(), used: new Date().toISOString(), bytes: 0 } });
      }
      return json({ status: 'ok', profiles: PROFILES });
    }
    if (url.endsWith('/sessions') && method === 'POST') {
      switch (scenario) {
        case 'profileInUse':
          return json({ status: 'denied', message: 'profile.id: a session runs on this profile now (one session at a time may use a profile); try again once it has ended' }, 400);
        case 'deniedField':
          return json({ status: 'denied', message: 'url: must be an http or https address of at most 10,000 characters, or a short-URL id' }, 400);
        case 'upgrade':
          return json({ status: 'upgrade', message: 'running session limit reached (1 of 1); end a session or upgrade your plan' }, 402);
        case 'rateLimited':
          return json({ status: 'insecure', reason: 'rate_limited', message: 'too many requests; retry after 30 s' }, 429, { 'retry-after': '30' });
        case 'serviceError':
          return json({ status: 'error', message: 'the service failed; try again later' }, 502);
        default:
          launchedAt = Date.now();
          ended = false;
          return json({
            status: 'ok',
            handle: 'h_story',
            shareUrl: 'https://browsers.example.com/en/s?Zb3kq1-9xY2wVtP0aLmN4Q',
            shareUrlPath: '/en/s?Zb3kq1-9xY2wVtP0aLmN4Q',
            quota: { running_session_limit: 5, running_sessions_used: 1, running_sessions_remaining: 4, cycle_session_limit: 100, cycle_sessions_used: 43, cycle_sessions_remaining: 57, cycle_start: '2025-11-01', cycle_end: '2025-12-01' },
          });
      }
    }
    if (url.includes('/sessions/') && (method === 'DELETE' || method === 'POST')) {
      ended = true;
      return json({ status: 'ok' });
    }
    if (url.includes('/sessions/')) {
      const status = ended ? 'deleted' : Date.now() - launchedAt >= startMs ? 'running' : 'starting';
      return json({ status: 'ok', session: { handle: 'h_story', status, name: 'Chromium', created: new Date(launchedAt).toISOString() } });
    }
    return json({ status: 'denied', message: 'no such endpoint' }, 404);
  };
}
