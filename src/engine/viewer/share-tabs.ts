// The remote browser's tabs on the share API (issue 36, decisions.md 102): the list the viewer
// state carries, following its changes for an event stream, and the driver's actions
// (`POST /share/<link>/tabs`). The tabs are the runtime's, on the node that runs the session
// (runtime/browser/tabs.ts); a link may change them only when `mayDrive` says so, the one check
// that a "one driver" mode extends.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseTabAction, type ShareTab } from '../../protocol/index.js';
import { readJsonBody } from '../../http/node-body.js';
import { sendJson } from '../http/respond.js';
import type { SessionService } from '../sessions/service.js';
import type { SessionRow } from '../store/store.js';
import type { ViewerRights } from '../channels/rfb/viewer-room.js';

/** The session's tabs on this node, or undefined (not running here, or a browser whose tabs the engine cannot tell). */
type Tabs = NonNullable<NonNullable<ReturnType<SessionService['endsOf']>>['tabs']>;

/** Whether a link's holder may switch, close and open the session's tabs: the share link (not a view-only link). */
export function mayDrive(link: { rights: ViewerRights; row: SessionRow }): boolean {
  return link.rights === 'control';
}

/** The session's tabs as the viewer state carries them, when this node runs it and can tell them. */
export function tabsFor(sessions: SessionService, sessionId: string): ShareTab[] | undefined {
  return sessionTabs(sessions, sessionId)?.list();
}

function sessionTabs(sessions: SessionService, sessionId: string): Tabs | undefined {
  return sessions.endsOf(sessionId)?.tabs ?? undefined;
}

/**
 * Calls `onChange` whenever the session's tabs change, from the moment they exist (a session
 * still starting has none yet: `retry()` looks again, as its status moves), keeping which tab is
 * on screen current while it follows. The returned function stops.
 */
export function followTabs(sessions: SessionService, sessionId: string, onChange: () => void): { retry(): void; stop(): void } {
  let followed: { tabs: Tabs; unwatch: () => void } | null = null;
  let stopped = false;
  const retry = () => {
    const tabs = sessionTabs(sessions, sessionId);
    if (stopped || tabs === followed?.tabs) return;
    stop();
    stopped = false;
    if (!tabs) return;
    tabs.on('changed', onChange);
    followed = { tabs, unwatch: tabs.watch() };
  };
  const stop = () => {
    stopped = true;
    if (!followed) return;
    followed.tabs.off('changed', onChange);
    followed.unwatch();
    followed = null;
  };
  retry();
  return { retry, stop };
}

const REFUSALS = {
  'unknown-tab': 404,
  'bad-url': 400,
  'last-tab': 409,
} as const;

/** Answers `POST /share/<link>/tabs` for a link already found (its session running or not). */
export async function answerTabAction(request: IncomingMessage, response: ServerResponse, sessions: SessionService, link: { rights: ViewerRights; row: SessionRow }, headers: Record<string, string>): Promise<void> {
  const body = await readJsonBody(request, 8 * 1024);
  const refuse = (status: number, message: string) => sendJson(response, { status: 'denied', message }, status, headers);
  if (!mayDrive(link)) return refuse(403, "a view-only link watches the tabs but cannot switch, close or open them; ask whoever shared the session for its share link");
  if (!body.ok) return refuse(400, body.message);
  const action = parseTabAction(body.value);
  if ('error' in action) return refuse(400, action.error);
  const tabs = sessionTabs(sessions, link.row.id);
  if (!tabs) {
    return refuse(409, link.row.status === 'running' ? "this session's tabs cannot be changed from here (its browser shows its own tab strip, or it runs on another node)" : 'the session is not running; its tabs can be changed once it runs');
  }
  try {
    if (action.action === 'switch') await tabs.activate(action.tab);
    else if (action.action === 'close') await tabs.close(action.tab);
    else await tabs.open(action.url);
  } catch (error) {
    const reason = (error as { reason?: keyof typeof REFUSALS }).reason;
    if (reason && reason in REFUSALS) return refuse(REFUSALS[reason], (error as Error).message);
    return sendJson(response, { status: 'error', message: `the browser did not ${action.action} the tab: ${(error as Error).message.slice(0, 200)}` }, 502, headers);
  }
  sendJson(response, { status: 'ok', tabs: tabs.list() }, 200, headers);
}
