// The share API, keyed by a share link's id: the viewer state, a server-sent-events stream of
// its changes, a ping for round-trip time, the session's view-only link, and the WebSocket that
// carries RFB to the session's display. The link is the credential: unknown links are refused,
// look-ups are rate-limited, and a view-only link's viewer can watch but never control.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { WebSocketServer, type WebSocket } from 'ws';
import { retryAfterSeconds, SECURITY_HEADERS } from '../../http/headers.js';
import { requestTargetUrl } from '../../http/request-target.js';
import { parseShareApiPath, viewerStateFor, type SessionStatus, type ShareLanguage, type ViewerState } from '../../protocol/index.js';
import { sendJson } from '../http/respond.js';
import type { SessionService } from '../sessions/service.js';
import type { LimitSettings } from '../http/limits.js';
import type { SessionRow } from '../store/store.js';
import { bridgeToDisplay } from './rfb-bridge.js';
import { DEFAULT_DISPLAY_LIMITS, ViewerRoom, type DisplayLimits, type ViewerRights } from './viewer-room.js';
import { DEFAULT_VIEWER_SEATS, ViewerSeats, type SeatRefusal, type ViewerSeat, type ViewerSeatLimits } from './viewer-seats.js';
import type { OpenFiles } from '../runtime/open-files.js';

export interface ShareApiOptions {
  sessions: SessionService;
  /** Seats per session for the share link's viewers and the view-only link's, and per client address (config `viewers`). */
  seats?: ViewerSeatLimits;
  /** The engine's open files: a viewer is refused when it would eat into the reserve. */
  openFiles?: OpenFiles;
  /** Look-ups of unknown link ids (guesses) per client address per minute; valid links never count. */
  lookupsPerMinute?: number;
  /** The client's address behind trusted proxies (http/client-address.ts). */
  clientAddress: (request: IncomingMessage) => string;
  /** Makes the look-up limiter (http/limits.ts: shared by every node of a cluster). */
  limiter: (settings: LimitSettings) => RateLimiterAbstract;
  /**
   * A connection to the display of a session that another node runs (cluster/node-link.ts), or
   * undefined on one machine.
   */
  remoteDisplay?: (row: SessionRow, rights: ViewerRights) => Promise<() => Duplex>;
  /** The sizes viewers may give a display (config `display`). */
  displayLimits?: DisplayLimits;
}

/** A share link as its page's HTTP status tells it: 200, 410, 404, or 429 with the wait. */
export type LinkStatus = 'live' | 'deleted' | 'unknown' | { limited: number };

/** WebSocket close codes a viewer can show. */
export const VIEWER_CLOSE = {
  ended: { code: 4000, reason: 'the session has ended' },
  notRunning: { code: 4001, reason: 'the session display is not up yet, or the session has ended' },
  full: { code: 4002, reason: 'too many viewers on this link' },
  displayGone: { code: 4003, reason: 'the session display closed' },
  protocol: { code: 4004, reason: 'the viewer sent something that is not RFB this display accepts' },
  address: { code: 4005, reason: 'too many viewers from this address' },
  busy: { code: 4006, reason: 'the service is busy; try again in a moment' },
} as const;

// The share API is read by the viewer embedded in any host page: no cookies, the link is the key.
const CORS = { 'access-control-allow-origin': '*' };

export function viewerState(row: SessionRow | undefined, rights: ViewerRights): ViewerState | null {
  if (!row) return null;
  return {
    state: viewerStateFor(row.status as SessionStatus),
    language: row.share_language as ShareLanguage,
    browserName: row.browser_name,
    leaveUrl: row.callback_url,
    control: rights === 'control',
    viewers: row.status === 'running' || row.status === 'starting' ? row.viewers : 0,
  };
}

export function createShareApi(options: ShareApiOptions) {
  const { sessions } = options;
  const seats = new ViewerSeats(options.seats ?? DEFAULT_VIEWER_SEATS, options.openFiles);
  const refusals: Record<SeatRefusal, { code: number; reason: string }> = { full: VIEWER_CLOSE.full, address: VIEWER_CLOSE.address, busy: VIEWER_CLOSE.busy };
  const lookups = options.limiter({ points: options.lookupsPerMinute ?? 120, duration: 60, keyPrefix: 'share' });
  const sockets = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024, perMessageDeflate: false });
  const open = new Map<string, Set<WebSocket>>();
  const seated = new WeakMap<WebSocket, ViewerSeat>();
  /** The viewers of each session this node runs: rights, control, display size. */
  const rooms = new Map<string, ViewerRoom>();

  // When a session ends, every viewer is told why and disconnected.
  sessions.on('status', ({ id, status }) => {
    if (status === 'running' || status === 'starting') return;
    for (const socket of open.get(id) ?? []) socket.close(VIEWER_CLOSE.ended.code, VIEWER_CLOSE.ended.reason);
  });

  /**
   * Resolves the link with the look-up limit applied: its session (undefined once deleted or for
   * a link that never existed, `deleted` telling which), or the seconds to wait when limited.
   * Only an id that never existed counts, against the address that sent it: a lock-out hits the
   * guesser, never someone holding a valid link, even behind the same proxy.
   */
  async function lookUp(request: IncomingMessage, linkId: string): Promise<{ row: SessionRow | undefined; rights: ViewerRights; deleted: boolean } | { limited: number }> {
    const link = await sessions.sessionForLink(linkId);
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

  /** What a share page's HTTP status says of its link (the viewer site asks), under the same limit. */
  async function linkStatus(request: IncomingMessage, linkId: string): Promise<LinkStatus> {
    const found = await lookUp(request, linkId);
    if ('limited' in found) return found;
    return found.row ? 'live' : found.deleted ? 'deleted' : 'unknown';
  }

  async function handle(request: IncomingMessage, response: ServerResponse, url: URL): Promise<boolean> {
    const path = parseShareApiPath(url.pathname);
    if (!path) return false;
    const viewOnlyPath = path.route === 'view-only';
    if (request.method === 'OPTIONS') {
      response.writeHead(204, { ...SECURITY_HEADERS, ...CORS, 'access-control-allow-methods': viewOnlyPath ? 'POST' : 'GET', 'access-control-max-age': '600' }).end();
      return true;
    }
    if (viewOnlyPath ? request.method !== 'POST' : request.method !== 'GET' || path.route === 'rfb') {
      sendJson(response, { status: 'denied', message: viewOnlyPath ? 'use POST to make a view-only link' : 'use GET, or a WebSocket for /rfb' }, 405, CORS);
      return true;
    }
    const found = await lookUp(request, path.linkId);
    if ('limited' in found) {
      sendJson(response, { status: 'insecure', reason: 'rate_limited', message: `too many share link look-ups; retry after ${found.limited} s` }, 429, { ...CORS, 'retry-after': String(found.limited) });
      return true;
    }
    const state = viewerState(found.row, found.rights);
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
      const link = await sessions.viewOnlyLink(found.row);
      sendJson(response, { status: 'ok', ...link }, 200, CORS);
      return true;
    }
    if (path.route !== 'events') {
      sendJson(response, { status: 'ok', ...state }, 200, CORS);
      return true;
    }
    // Server-sent events: the current state at once, then each change, and a comment as keep-alive.
    response.writeHead(200, { ...SECURITY_HEADERS, ...CORS, 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'x-accel-buffering': 'no', connection: 'keep-alive' });
    const send = (value: ViewerState) => response.write(`event: state\ndata: ${JSON.stringify(value)}\n\n`);
    send(state);
    const onChange = ({ id }: { id: string }) => {
      if (id !== sessionId) return;
      void sessions.sessionForLink(path.linkId).then(
        (link) => send((link && viewerState(link.row, link.rights)) ?? { ...state, state: 'gone' }),
        () => undefined,
      );
    };
    sessions.on('status', onChange);
    sessions.on('viewers', onChange);
    const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), 15_000);
    request.on('close', () => {
      clearInterval(keepAlive);
      sessions.off('status', onChange);
      sessions.off('viewers', onChange);
    });
    return true;
  }

  async function upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<boolean> {
    const url = requestTargetUrl(request.url, 'http://engine');
    const path = url && parseShareApiPath(url.pathname);
    if (!path || path.route !== 'rfb') return false;
    const refuse = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
    };
    const found = await lookUp(request, path.linkId);
    if ('limited' in found) return refuse(429, 'Too Many Requests'), true;
    if (!found.row) return refuse(404, 'Not Found'), true;
    const row = found.row;
    const address = options.clientAddress(request);
    const active = row.status === 'running' || row.status === 'starting';
    if (active && row.node_id !== null && row.node_id !== sessions.nodeId && options.remoteDisplay) {
      // Another node runs it: this node carries the viewer's bytes to that node's display.
      const connect = await options.remoteDisplay(row, found.rights).catch(() => undefined);
      sockets.handleUpgrade(request, socket, head, (ws) => {
        if (!connect) return ws.close(VIEWER_CLOSE.notRunning.code, VIEWER_CLOSE.notRunning.reason);
        const viewers = joinViewers(row.id, ws, found.rights, address);
        if (!viewers) return;
        void bridgeToDisplay(ws, connect, { onDisplayClosed: VIEWER_CLOSE.displayGone }).finally(() => leaveViewers(row.id, ws, viewers));
      });
      return true;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => bridgeHere(ws, row.id, active, found.rights, address));
    return true;
  }

  /**
   * Seats a viewer socket of a session on this node (its link's seats, its address's share, the
   * engine's open files); undefined, and the socket closed with the reason, when there is no seat.
   */
  function joinViewers(sessionId: string, ws: WebSocket, rights: ViewerRights, address: string | null): Set<WebSocket> | undefined {
    const seat = seats.take(sessionId, rights, address);
    if (typeof seat === 'string') {
      ws.close(refusals[seat].code, refusals[seat].reason);
      return undefined;
    }
    seated.set(ws, seat);
    const viewers = open.get(sessionId) ?? new Set<WebSocket>();
    viewers.add(ws);
    open.set(sessionId, viewers);
    return viewers;
  }

  function leaveViewers(sessionId: string, ws: WebSocket, viewers: Set<WebSocket>): void {
    seated.get(ws)?.leave();
    seated.delete(ws);
    viewers.delete(ws);
    if (viewers.size === 0 && open.get(sessionId) === viewers) open.delete(sessionId);
  }

  /**
   * Joins a viewer's WebSocket to the display of a session this node runs, through the session's
   * room: here the link's rights are enforced and the display's size follows the controller.
   */
  function bridgeHere(ws: WebSocket, sessionId: string, active: boolean, rights: ViewerRights, address: string | null): void {
    // A viewer may connect while the session starts (its waiting screen stays up meanwhile),
    // so the live session shows the moment it is running.
    const display = active ? sessions.displayOf(sessionId) : undefined;
    if (!display) return ws.close(VIEWER_CLOSE.notRunning.code, VIEWER_CLOSE.notRunning.reason);
    const viewers = joinViewers(sessionId, ws, rights, address);
    if (!viewers) return;
    let room = rooms.get(sessionId);
    if (!room) rooms.set(sessionId, (room = new ViewerRoom(options.displayLimits ?? DEFAULT_DISPLAY_LIMITS)));
    sessions.viewerJoined(sessionId);
    const seat = { room, rights, onProtocolError: VIEWER_CLOSE.protocol };
    void bridgeToDisplay(ws, () => display.connect(), { onDisplayClosed: VIEWER_CLOSE.displayGone, seat }).finally(() => {
      leaveViewers(sessionId, ws, viewers);
      // The room goes with its last viewer; the display keeps its last size.
      if (room.size === 0 && rooms.get(sessionId) === room) {
        room.close();
        rooms.delete(sessionId);
      }
      sessions.viewerLeft(sessionId);
    });
  }

  /**
   * A viewer that another node carries (node-to-node, already authenticated by the caller): joins
   * it to the display of a session this node runs.
   */
  function upgradeFromNode(request: IncomingMessage, socket: Duplex, head: Buffer, sessionId: string, rights: ViewerRights): void {
    // The node the viewer reached counted its address; here the address would be that node's.
    sockets.handleUpgrade(request, socket, head, (ws) => bridgeHere(ws, sessionId, true, rights, null));
  }

  return {
    handle,
    upgrade,
    upgradeFromNode,
    linkStatus,
    close() {
      for (const room of rooms.values()) room.close();
      rooms.clear();
      for (const client of sockets.clients) client.terminate();
      sockets.close();
    },
  };
}
