// Stand-ins for the <SessionReplay> stories: a fetch that answers like the proxy route's
// recording endpoints, and the recording's media as a static file of the Storybook build
// (stories/replay-route/sessions/story-recording/recording/media: 8 s made with ffmpeg, a white
// picture for 4 s then a green one, a 440 Hz tone; H.264 and Opus in MP4, 42 KB), where the
// component's <video> asks for it. A showcase only: the component tests run against the real route.
import type { ProxyRecording } from '../src/protocol/proxy.js';

/** Where the stories mount the stand-in route: the media file sits under it in the build. */
export const REPLAY_ENDPOINT = '/replay-route';
/** The handle whose media the build holds; another handle's media is not found. */
export const REPLAY_HANDLE = 'story-recording';

export type ReplayScenario = 'ready' | 'live' | 'loading' | 'notRecorded' | 'removed' | 'busy';

const STARTED = Date.parse('2025-11-21T10:00:00Z');
const at = (ms: number) => new Date(STARTED + ms).toISOString();

/** The clip's recording: two pages, a viewer, a refusal, the end. */
export function replayRecording(state: ProxyRecording['state'] = 'ended'): ProxyRecording {
  return {
    state,
    started: at(0),
    duration_ms: 8000,
    bytes: 42_671,
    timeline: [
      { time: at(200), type: 'navigation', tab: 't1', url: 'https://shop.example/', title: 'Example shop' },
      { time: at(1500), type: 'viewer-joined', channel: 'rfb', rights: 'control' },
      { time: at(2600), type: 'refused', target: '169.254.169.254', category: 'link-local' },
      { time: at(4000), type: 'navigation', tab: 't1', url: 'https://shop.example/checkout', title: 'Checkout' },
      ...(state === 'ended' ? [{ time: at(7900), type: 'ended', status: 'deleted', reason: 'removed' }] : []),
    ],
  };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** The route's recording endpoints as each scenario has them. */
export function replayRouteFetch(scenario: ReplayScenario): typeof fetch {
  return async (input) => {
    const url = String(input instanceof Request ? input.url : input);
    if (url.endsWith('/recording/media')) {
      // Only asked when the <video> failed: why it did.
      return scenario === 'busy' ? json(503, { status: 'error', message: 'the recording is being prepared for other requests; try again in 5 s' }, { 'retry-after': '30' }) : json(404, { status: 'denied', message: 'unknown session' });
    }
    if (!url.endsWith('/recording')) return json(404, { status: 'denied', message: `no endpoint GET ${url}` });
    switch (scenario) {
      case 'loading':
        return new Promise<Response>(() => undefined);
      case 'notRecorded':
        return json(404, { status: 'denied', reason: 'not_recorded', message: 'this session was not recorded' });
      case 'removed':
        return json(404, { status: 'denied', reason: 'removed', message: "this session's recording was removed" });
      case 'live':
        return json(200, { status: 'ok', recording: replayRecording('recording') });
      default:
        return json(200, { status: 'ok', recording: replayRecording() });
    }
  };
}
