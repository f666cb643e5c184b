// The share API's paths, `/share/<link_id>[/events|/rfb|/sound|/video|/ping|/view-only|/files[/download|/upload]|/people]` under a share base: the
// viewer builds them and the engine reads them with these two functions, so the two never drift.

/**
 * What a share link's API offers: its viewer state, a stream of its changes, RFB, the session's
 * sound (a WebSocket: one JSON text message saying the format, then one binary message per Opus
 * packet), the display's moving picture as video (issue 25: one JSON text message saying the
 * format, then one binary message per H.264 access unit, src/protocol/video.ts), a ping, a view-only link, and the session's files (issue 23): `files`, a WebSocket that
 * sends their list as it changes (src/protocol/files.ts), `files/download?name=` (GET, the bytes as
 * a download) and `files/upload?name=` (POST, the body), for the share link's holder only;
 * `editing` (issue 36), a WebSocket that says whether a text field in the session's browser has
 * the focus (src/protocol/editing.ts), for the share link's holder only; `tabs` (POST: switch,
 * close or open one of the remote browser's tabs, or take one to another address, protocol/tabs.ts), for a link that may drive;
 * and `people` (issue 36), a WebSocket of who watches and who drives (src/protocol/control.ts).
 */
export const SHARE_API_ROUTES = ['state', 'events', 'rfb', 'sound', 'video', 'ping', 'view-only', 'files', 'files/download', 'files/upload', 'editing', 'tabs', 'people'] as const;
export type ShareApiRoute = (typeof SHARE_API_ROUTES)[number];

/**
 * The share API's routes that are not channels: no channel may take one of these names, or its
 * WebSocket route would stand where the route is (channels/registry.ts; decisions.md 150).
 */
export const SHARE_API_OWN_ROUTES = ['state', 'events', 'ping', 'view-only', 'tabs'] as const;

/** Link ids are base64url; the API reads at most this many characters of one. */
const SHARE_API_PATH = /^\/share\/([A-Za-z0-9_-]{1,64})(?:\/(events|rfb|sound|video|ping|view-only|files|files\/download|files\/upload|editing|tabs|people))?$/;

/** The path of one route of a link's share API: `/share/<link_id>` for its state, else `/share/<link_id>/<route>`. */
export function shareApiPath(linkId: string, route: ShareApiRoute = 'state'): string {
  return route === 'state' ? `/share/${linkId}` : `/share/${linkId}/${route}`;
}

/** The full address of a route under a share base; RFB's, sound's, video's and files' are WebSocket addresses (ws: or wss:). */
export function shareApiUrl(shareBase: string, linkId: string, route: ShareApiRoute = 'state'): string {
  const base = route === 'rfb' || route === 'sound' || route === 'video' || route === 'files' || route === 'editing' || route === 'people' ? shareBase.replace(/^http/, 'ws') : shareBase;
  return `${base}${shareApiPath(linkId, route)}`;
}

/** Reads a request path of the share API; anything else gives `null`. */
export function parseShareApiPath(pathname: string): { linkId: string; route: ShareApiRoute } | null {
  const match = SHARE_API_PATH.exec(pathname);
  if (!match) return null;
  return { linkId: match[1]!, route: (match[2] as ShareApiRoute | undefined) ?? 'state' };
}
