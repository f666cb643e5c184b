// The share API, keyed by a share link's id: the viewer state, a server-sent-events stream of
// its changes, a ping for round-trip time, the session's view-only link, and the WebSockets of
// the link's channels (channels/router.ts carries them; the state says which are offered, as each
// channel tells: the share API names none). The link
// is the credential: unknown links are refused, look-ups are rate-limited, and a view-only link's
// viewer can watch but never control. An event stream is an attachment like a channel's: it passes
// the same door (channels/door.ts) before it is held open.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { retryAfterSeconds, SECURITY_HEADERS } from '../../http/headers.js';
import { requestTargetUrl } from '../../http/request-target.js';
import { FORMER_CHANNEL_FLAGS, parseShareApiPath, viewerKeyOf, viewerStateFor, type Driver, type SessionStatus, type ShareApiRoute, type ShareLanguage, type ShareTab, type ViewerState } from '../../protocol/index.js';
import { sendJson } from '../http/respond.js';
import type { SessionService } from '../sessions/service.js';
import type { ShareLinks } from '../sessions/share-links.js';
import type { LimitSettings } from '../http/limits.js';
import type { SessionRow } from '../store/store.js';
import { VIEWER_CLOSE } from '../channels/close-codes.js';
import type { Presence } from '../channels/presence.js';
import type { ChannelRouter } from '../channels/router.js';
import type { Door } from '../channels/door.js';
import type { LinkSeats } from '../channels/channel.js';
import { CHANNEL_NAME } from '../channels/registry.js';
import type { ViewerRights } from '../channels/rfb/viewer-room.js';
import { receiveSessionFile, sendSessionFile, type FileTransferOptions } from '../http/files.js';
import { discardRest } from '../../http/node-body.js';
import { answerTabAction, tabsHere, type TabsAccess } from './share-tabs.js';

export interface ShareApiOptions {
  sessions: SessionService;
  /** Finds a session by its share link or view-only link (sessions/share-links.ts). */
  links: ShareLinks;
  /** Who is attached to each session: the state shows the viewer count, followers hear its changes. */
  presence: Presence;
  /** Opens a link's channels (channels/router.ts): here or at the node that runs the session. */
  router: ChannelRouter;
  /** The door every attachment passes: event streams too. */
  door: Door;
  /** Event streams per session for each link, on this node. */
  eventSeats: LinkSeats;
  /** Files in and out of the link's session (http/files.ts); absent: the share link moves no files. */
  files?: FileTransferOptions;
  /** Look-ups of unknown link ids (guesses) per client address per minute; valid links never count. */
  lookupsPerMinute?: number;
  /** The client's address behind trusted proxies (http/client-address.ts). */
  clientAddress: (request: IncomingMessage) => string;
  /** Makes the look-up limiter (http/limits.ts: shared by every node of a cluster). */
  limiter: (settings: LimitSettings) => RateLimiterAbstract;
  /** Counts a look-up the limit turned away (the metrics). */
  onRateLimited?: () => void;
  /** Where the sessions' tabs are read and changed; default this node's runtime (in a cluster: cluster/tabs-link.ts). */
  tabs?: TabsAccess;
  /** The origins that may frame a session's links (viewer/framing.ts, issue 44); absent: none. */
  frameOrigins?: (row: SessionRow) => Promise<string[]>;
}

/** A share link as its page's HTTP status tells it: 200, 410, 404, or 429 with the wait. */
export type LinkStatus = 'live' | 'deleted' | 'unknown' | { limited: number };

/** A share page's link: its status, and the origins that may frame the page (issue 44; only a live link has any). */
export interface LinkPage {
  status: LinkStatus;
  frameOrigins: readonly string[];
}

/** WebSocket close codes a viewer can show (every channel's: channels/close-codes.ts). */
export { VIEWER_CLOSE };

/**
 * The end reasons a share link tells: a wake from standby or a resume from hibernation that
 * failed, and a browser that sent what the engine could not read (decisions.md 181).
 */
const TOLD_END_REASONS = /^(the session could not be (woken from standby|resumed from hibernation|hibernated)|the session's browser sent what the service could not read)/;

// The share API is read by the viewer embedded in any host page: no cookies, the link is the key.
const CORS = { 'access-control-allow-origin': '*' };

/**
 * A link's viewer state; `offered`: the channels that say so in it, under `channels` (as the
 * registry orders them), so that no channel's name stands for a field of the state (decisions.md
 * 150). The channels viewers of the former version read at the top level are said there too, for
 * one version, and never over a field of the state's own.
 */
export function viewerState(row: SessionRow | undefined, rights: ViewerRights, offered: readonly string[] = [], tabs?: ShareTab[], frameOrigins: readonly string[] = []): ViewerState | null {
  if (!row) return null;
  const flags = (names: readonly string[]) => Object.fromEntries(names.map((name) => [name, true] as const));
  return {
    ...flags(offered.filter((name) => (FORMER_CHANNEL_FLAGS as readonly string[]).includes(name))),
    state: viewerStateFor(row.status as SessionStatus),
    language: row.share_language as ShareLanguage,
    browserName: row.browser_name,
    leaveUrl: row.callback_url,
    control: rights === 'control',
    viewers: row.status === 'running' || row.status === 'starting' ? row.viewers : 0,
    channels: flags(offered),
    // A recording stopped by a cap or the node's floor (decisions.md 131) is no longer said while the session runs on.
    ...(row.recorded && !row.recording_stopped ? { recording: true } : {}),
    // In standby (issue 46): the viewer that connects wakes it, and says so meanwhile.
    ...(row.standby && row.status === 'running' ? { standby: true } : {}),
    // A wake or resume that failed, or a browser that could not be read, ended it: the link says why (decisions.md 166, 181).
    ...(row.status !== 'running' && row.status !== 'starting' && TOLD_END_REASONS.test(row.end_reason ?? '') ? { reason: row.end_reason! } : {}),
    ...(tabs && row.status === 'running' ? { tabs } : {}),
    // No address bar of its own: the viewer's strip shows the address (decisions.md 174).
    ...(row.app_window ? { appWindow: true as const } : {}),
    ...controlOf(row),
    ...(frameOrigins.length > 0 ? { frameOrigins: [...frameOrigins] } : {}),
  };
}

/** In `one` mode (issue 36): the mode and who drives, as the node that runs the session wrote it. */
function controlOf(row: SessionRow): Pick<ViewerState, 'controlMode' | 'driver'> {
  if (row.control_mode !== 'one') return {};
  let driver: Driver | null = null;
  try {
    driver = row.driver && row.status === 'running' ? (JSON.parse(row.driver) as Driver) : null;
  } catch {
    driver = null;
  }
  return { controlMode: 'one', driver };
}

/** How an event stream that got no seat is answered: the same reasons a channel's WebSocket closes with (close-codes.ts). */
const SEAT_REFUSALS = {
  full: { status: 429, retryAfter: 30, message: `${VIEWER_CLOSE.full.reason}; try again when someone leaves` },
  address: { status: 429, retryAfter: 30, message: VIEWER_CLOSE.address.reason },
  busy: { status: 503, retryAfter: 5, message: VIEWER_CLOSE.busy.reason },
} as const;

export function createShareApi(options: ShareApiOptions) {
  const { sessions, links, presence, router } = options;
  const tabAccess = options.tabs ?? tabsHere(sessions);
  /**
   * Reads a path of the share API: its fixed routes (protocol/share-api.ts), and the name of any
   * registered channel (`/share/<link>/<name>`), the link id read by the same protocol function.
   */
  const sharePath = (pathname: string): { linkId: string; route: ShareApiRoute | string } | null => {
    const known = parseShareApiPath(pathname);
    if (known) return known;
    const cut = pathname.lastIndexOf('/');
    const name = pathname.slice(cut + 1);
    const link = CHANNEL_NAME.test(name) && router.has(name) ? parseShareApiPath(pathname.slice(0, cut)) : null;
    return link?.route === 'state' ? { linkId: link.linkId, route: name } : null;
  };
  const lookups = options.limiter({ points: options.lookupsPerMinute ?? 120, duration: 60, keyPrefix: 'share' });

  /**
   * Resolves the link with the look-up limit applied: its session (undefined once deleted or for
   * a link that never existed, `deleted` telling which), or the seconds to wait when limited.
   * Only an id that never existed counts, against the address that sent it: a lock-out hits the
   * guesser, never someone holding a valid link, even behind the same proxy.
   */
  async function lookUp(request: IncomingMessage, linkId: string): Promise<{ row: SessionRow | undefined; rights: ViewerRights; deleted: boolean } | { limited: number }> {
    const link = await links.sessionFor(linkId);
    if (link) {
      const deleted = link.row.status === 'deleted';
      return { row: deleted ? undefined : link.row, rights: link.rights, deleted };
    }
    try {
      await lookups.consume(options.clientAddress(request));
      return { row: undefined, rights: 'view', deleted: false };
    } catch (rejection) {
      return { limited: retryAfterSeconds(rejection) ?? 60 };
    }
  }

  /** What a share page's HTTP status says of its link (the viewer site asks), under the same limit, and who may frame it. */
  async function linkStatus(request: IncomingMessage, linkId: string): Promise<LinkPage> {
    const found = await lookUp(request, linkId);
    if ('limited' in found) return { status: found, frameOrigins: [] };
    if (!found.row) return { status: found.deleted ? 'deleted' : 'unknown', frameOrigins: [] };
    return { status: 'live', frameOrigins: options.frameOrigins ? await options.frameOrigins(found.row) : [] };
  }

  async function handle(request: IncomingMessage, response: ServerResponse, url: URL): Promise<boolean> {
    const path = sharePath(url.pathname);
    if (!path) return false;
    const viewOnlyPath = path.route === 'view-only';
    if (request.method === 'OPTIONS') {
      response.writeHead(204, { ...SECURITY_HEADERS, ...CORS, 'access-control-allow-methods': viewOnlyPath ? 'POST' : 'GET', 'access-control-max-age': '600' }).end();
      return true;
    }
    if (viewOnlyPath ? request.method !== 'POST' : request.method !== 'GET' || router.has(path.route)) {
      sendJson(response, { status: 'denied', message: viewOnlyPath ? 'use POST to make a view-only link' : router.has(path.route) ? `use a WebSocket for /${path.route}` : 'use GET' }, 405, CORS);
      return true;
    }
    const found = await lookUp(request, path.linkId);
    if ('limited' in found) {
      options.onRateLimited?.();
      sendJson(response, { status: 'insecure', reason: 'rate_limited', message: `too many share link look-ups; retry after ${found.limited} s` }, 429, { ...CORS, 'retry-after': String(found.limited) });
      return true;
    }
    // What the session is offered does not change while the link lives: the event stream keeps it.
    const offered = found.row ? await router.advertised(found.row) : [];
    const stateRead = found.row && path.route !== 'ping' && !viewOnlyPath;
    // Who may frame the link's page (issue 44): read when the stream opens, as the page's own header was.
    const frameOrigins = stateRead && options.frameOrigins ? await options.frameOrigins(found.row!) : [];
    const state = viewerState(found.row, found.rights, offered, stateRead ? await tabAccess.list(found.row!) : undefined, frameOrigins);
    if (!state || !found.row) {
      sendJson(response, { status: 'denied', message: 'this share link is not valid (its session was deleted, or it never existed)' }, 404, CORS);
      return true;
    }
    const sessionId = found.row.id;
    if (path.route === 'ping') {
      sendJson(response, { status: 'ok' }, 200, CORS);
      return true;
    }
    if (viewOnlyPath) {
      // Only the share link's holder hands out watching; a view-only link cannot make links.
      if (found.rights !== 'control') {
        sendJson(response, { status: 'denied', message: 'a view-only link cannot make links; ask whoever shared it for the share link' }, 403, CORS);
        return true;
      }
      const link = await links.viewOnly(found.row);
      sendJson(response, { status: 'ok', ...link }, 200, CORS);
      return true;
    }
    if (path.route !== 'events') {
      sendJson(response, { status: 'ok', ...state }, 200, CORS);
      return true;
    }
    // Server-sent events: the current state at once, then each change, and a comment as keep-alive.
    // The stream holds a socket for as long as the viewer stays: it takes a seat at the door first.
    const seat = options.door.admit({ channel: 'events', sessionId, rights: found.rights, address: options.clientAddress(request), needs: { seats: options.eventSeats, files: 1 } });
    if (typeof seat === 'string') {
      const why = SEAT_REFUSALS[seat];
      sendJson(response, { status: 'denied', message: why.message }, why.status, { ...CORS, 'retry-after': String(why.retryAfter) });
      return true;
    }
    response.writeHead(200, { ...SECURITY_HEADERS, ...CORS, 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'x-accel-buffering': 'no', connection: 'keep-alive' });
    const write = options.door.streamTo(response);
    const send = (value: ViewerState) => write(`event: state\ndata: ${JSON.stringify(value)}\n\n`);
    send(state);
    // Each change reads the state again; a read overtaken by a later one (the tabs may come from
    // another node, decisions.md 117) is not sent, so the last state sent is the newest.
    let reads = 0;
    const onChange = ({ id }: { id: string }) => {
      if (id !== sessionId) return;
      tabs.retry();
      const read = ++reads;
      void links.sessionFor(path.linkId).then(async (link) => {
        const next = (link && viewerState(link.row, link.rights, offered, await tabAccess.list(link.row), frameOrigins)) ?? { ...state, state: 'gone' as const };
        if (read === reads) send(next);
      }, () => undefined);
    };
    // The browser's tabs, followed while the stream is open (which one is on screen is read meanwhile).
    const tabs = tabAccess.follow(found.row, () => onChange({ id: sessionId }));
    sessions.on('status', onChange);
    presence.on('changed', onChange);
    const keepAlive = setInterval(() => write(': keep-alive\n\n'), 15_000);
    response.on('close', () => {
      seat.leave();
      tabs.stop();
      clearInterval(keepAlive);
      sessions.off('status', onChange);
      presence.off('changed', onChange);
    });
    return true;
  }

  /**
   * `files/download` (GET) and `files/upload` (POST) of a link: the share link's holder only (a
   * view-only link moves nothing, 403). Taken before the engine drops unread bodies; false for any
   * other path.
   */
  async function transfer(request: IncomingMessage, response: ServerResponse, url: URL): Promise<boolean> {
    const path = parseShareApiPath(url.pathname);
    if (!path || (path.route !== 'files/download' && path.route !== 'files/upload' && path.route !== 'tabs')) return false;
    const method = path.route === 'files/download' ? 'GET' : 'POST';
    const refuse = async (status: number, body: unknown, headers: Record<string, string> = {}) => {
      await discardRest(request);
      sendJson(response, body, status, { ...CORS, ...headers });
      return true;
    };
    if (request.method === 'OPTIONS') {
      response.writeHead(204, { ...SECURITY_HEADERS, ...CORS, 'access-control-allow-methods': method, 'access-control-allow-headers': 'content-type', 'access-control-max-age': '600' }).end();
      return true;
    }
    if (request.method !== method) return refuse(405, { status: 'denied', message: `use ${method}` });
    const found = await lookUp(request, path.linkId);
    if ('limited' in found) return refuse(429, { status: 'insecure', reason: 'rate_limited', message: `too many share link look-ups; retry after ${found.limited} s` }, { 'retry-after': String(found.limited) });
    if (!found.row) return refuse(404, { status: 'denied', message: 'this share link is not valid (its session was deleted, or it never existed)' });
    if (path.route === 'tabs') return void (await answerTabAction(request, response, tabAccess, { rights: found.rights, row: found.row }, CORS)), true;
    if (found.rights !== 'control') return refuse(403, { status: 'denied', message: "a view-only link moves no files; ask whoever shared it for the share link" });
    if (!options.files) return refuse(403, { status: 'denied', message: 'files cannot be moved on this service' });
    const transferOptions = { ...options.files, headers: { ...CORS, 'access-control-expose-headers': 'content-disposition, content-length' } };
    if (method === 'GET') await sendSessionFile(request, response, found.row, url, transferOptions);
    else await receiveSessionFile(request, response, found.row, url, transferOptions);
    return true;
  }

  /** A WebSocket to one of the link's channels: the link is checked here, the router does the rest (whether the session is offered the channel too). */
  async function upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<boolean> {
    const url = requestTargetUrl(request.url, 'http://engine');
    const path = url && sharePath(url.pathname);
    if (!path || !router.has(path.route)) return false;
    const refuse = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
    };
    const found = await lookUp(request, path.linkId);
    if ('limited' in found) return refuse(429, 'Too Many Requests'), true;
    if (!found.row) return refuse(404, 'Not Found'), true;
    // `?viewer=`, or its former name `?seat=`, read for one version (decisions.md 149).
    const viewerKey = viewerKeyOf(url.searchParams);
    await router.open(request, socket, head, {
      channel: path.route,
      row: found.row,
      credential: found.rights === 'control' ? 'share-link' : 'view-link',
      address: options.clientAddress(request),
      ...(viewerKey ? { viewerKey } : {}),
    });
    return true;
  }

  return {
    handle,
    transfer,
    upgrade,
    linkStatus,
  };
}
