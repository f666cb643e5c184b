// The proxy route's recording endpoints (issue 35, decisions.md 97): a signed-in user's own
// sessions only, reached by their handles. `GET <base>/sessions/:handle/recording` answers the
// recording's state, length and timeline; `GET .../recording/media` streams its MP4 through as it
// comes (the browser's Range header passed on, so a <video> seeks in a whole recording; one still
// being made streams from its start); `DELETE .../recording` removes it once its session ended;
// `POST .../recording/link` ({expires_in_s?}) makes a signed, expiring replay link on the service's
// viewer site (decisions.md 110), for a host app's "copy replay link".
// A refusal says why in `reason` (`not_recorded`, `removed`), so a component can say it in its
// language; the service's 503 for a busy copy passes on with its Retry-After.
import { SECURITY_HEADERS } from '../http/headers.js';
import type { ProxyRecordingRefusal } from '../protocol/proxy.js';
import { RemoteBrowserError } from './errors.js';
import type { RemoteBrowserService } from './remote-browser-service.js';

const UNKNOWN_SESSION = 'unknown session: it may belong to someone else or have been deleted';

export type RecordingEndpoint = 'recording' | 'recording-media' | 'recording-link';

type Reply = (body: unknown, status?: number, headers?: Record<string, string>) => Response;

/** `recording` and `recording/media` after a session's handle, with the methods each takes. */
export function recordingEndpointOf(tail: string | undefined): { name: RecordingEndpoint; method: string } | null {
  if (tail === 'recording') return { name: 'recording', method: 'GET, DELETE' };
  if (tail === 'recording/media') return { name: 'recording-media', method: 'GET' };
  if (tail === 'recording/link') return { name: 'recording-link', method: 'POST' };
  return null;
}

/** What the service's refusal of a recording means for the person: never recorded, or no longer there. */
function refusalOf(message: string): ProxyRecordingRefusal | null {
  if (/not recorded/.test(message)) return 'not_recorded';
  if (/removed|no media/.test(message)) return 'removed';
  return null;
}

/** A link request's body: `{}` or `{expires_in_s}` (the service checks the number); undefined for anything else. */
async function linkBody(request: Request): Promise<{ expires_in_s?: unknown } | undefined> {
  const text = await request.text().catch(() => null);
  if (text === null || text.length > 1000) return undefined;
  try {
    const value: unknown = text.trim() === '' ? {} : JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Serves one recording endpoint for a session the user owns (its vmId already opened from the handle). */
export async function serveRecording(service: RemoteBrowserService, endpoint: RecordingEndpoint, vmId: string, request: Request, reply: Reply): Promise<Response> {
  const { recording, recordingMedia, removeRecording, recordingLink } = service;
  if (!recording || !recordingMedia || !removeRecording) {
    return reply({ status: 'denied', message: 'this service client reads no recordings: use createServiceClient() from remote-browser-kit/server' }, 501);
  }
  const signal = request.signal;
  try {
    if (endpoint === 'recording' && request.method.toUpperCase() === 'DELETE') {
      await removeRecording(vmId, { signal });
      return reply({ status: 'ok' });
    }
    if (endpoint === 'recording') return reply({ status: 'ok', recording: await recording(vmId, { signal }) });
    if (endpoint === 'recording-link') {
      if (!recordingLink) return reply({ status: 'denied', message: 'this service client makes no replay links: use createServiceClient() from remote-browser-kit/server' }, 501);
      const body = await linkBody(request);
      if (!body) return reply({ status: 'denied', message: 'send a JSON object: {} or {"expires_in_s": <seconds>}' }, 400);
      if (body.expires_in_s !== undefined && typeof body.expires_in_s !== 'number') return reply({ status: 'denied', message: 'expires_in_s: must be a whole number of seconds' }, 400);
      return reply({ status: 'ok', ...(await recordingLink(vmId, { signal, ...(body.expires_in_s === undefined ? {} : { expiresInS: body.expires_in_s }) })) });
    }
    const media = await recordingMedia(vmId, { signal, range: request.headers.get('range') });
    return new Response(media.body, { status: media.httpStatus, headers: { ...SECURITY_HEADERS, ...media.headers, 'cache-control': 'private, no-store' } });
  } catch (error) {
    if (!(error instanceof RemoteBrowserError)) throw error;
    if (error.code === 'denied') {
      // Removal of a recording whose session still runs (or whose end is still being written): 409, to do later.
      if (/still running|still being written/.test(error.message)) return reply({ status: 'denied', message: error.message.replace(/^id: /, '') }, 409);
      if (/^expires_in_s:/.test(error.message)) return reply({ status: 'denied', message: error.message }, 400);
      const reason = refusalOf(error.message);
      if (!reason) return reply({ status: 'denied', message: UNKNOWN_SESSION }, 404);
      const message = reason === 'not_recorded' ? 'this session was not recorded' : 'this session\'s recording was removed';
      return reply({ status: 'denied', reason, message }, 404);
    }
    if (error.httpStatus === 503) {
      const wait = String(Math.max(1, error.retryAfter ?? 5));
      return reply({ status: 'error', message: `the recording is being prepared for other requests; try again in ${wait} s` }, 503, { 'retry-after': wait });
    }
    throw error;
  }
}
