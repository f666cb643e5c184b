// The remote browser's tabs on the share API (issue 36, decisions.md 102): the list the viewer
// state carries, following its changes for an event stream, and the driver's actions
// (`POST /share/<link>/tabs`). The tabs are the runtime's, on the node that runs the session
// (runtime/browser/tabs.ts): `tabsHere` reads and changes them there; in a cluster another node
// reaches them through the owner (cluster/tabs-link.ts, decisions.md 117), behind the same
// `TabsAccess`. A link may change them only when `mayDrive` says so, the one check that a "one
// driver" mode extends, made where the request arrived.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseTabAction, type ShareTab, type TabAction } from '../../protocol/index.js';
import { readJsonBody } from '../../http/node-body.js';
import { sendJson } from '../http/respond.js';
import type { SessionService } from '../sessions/service.js';
import type { SessionRow } from '../store/store.js';
import type { ViewerRights } from '../channels/rfb/viewer-room.js';

/** The session's tabs on this node, or undefined (not running here, or a browser whose tabs the engine cannot tell). */
type Tabs = NonNullable<NonNullable<ReturnType<SessionService['endsOf']>>['tabs']>;

/** What a tab action came to: the tabs after it, or a refusal with the HTTP status the share API answers. */
export type TabOutcome = { status: 'ok'; tabs: ShareTab[] } | { status: 'denied' | 'error'; code: number; message: string };

/** Following a session's tabs for an event stream: `retry()` looks again (its status moved), `stop()` ends. */
export interface TabsFollower {
  retry(): void;
  stop(): void;
}

/** Where a session's tabs are read and changed: this node's runtime, or the node that runs the session. */
export interface TabsAccess {
  /** The tabs as the viewer state carries them; undefined when none can be told (not running, a browser with its own strip, its node away). */
  list(row: SessionRow): Promise<ShareTab[] | undefined>;
  /** Calls `onChange` whenever the session's tabs change, until `stop()`. */
  follow(row: SessionRow, onChange: () => void): TabsFollower;
  /** Does a driver's action (its rights already checked). */
  act(row: SessionRow, action: TabAction): Promise<TabOutcome>;
}

/** Whether a link's holder may switch, close and open the session's tabs: the share link (not a view-only link). */
export function mayDrive(link: { rights: ViewerRights; row: SessionRow }): boolean {
  return link.rights === 'control';
}

/** The tabs of the sessions this node runs. */
export function tabsHere(sessions: SessionService): TabsAccess {
  return {
    list: async (row) => sessionTabs(sessions, row.id)?.list(),
    follow: (row, onChange) => followTabs(sessions, row.id, onChange),
    // The browser is woken from standby first, and kept awake while it acts (decisions.md 141).
    act: (row, action) => sessions.awake(row.id, () => actOnTabs(sessionTabs(sessions, row.id), row, action)),
  };
}

function sessionTabs(sessions: SessionService, sessionId: string): Tabs | undefined {
  return sessions.endsOf(sessionId)?.tabs ?? undefined;
}

/**
 * Calls `onChange` whenever the session's tabs change, from the moment they exist (a session
 * still starting has none yet: `retry()` looks again, as its status moves), keeping which tab is
 * on screen current while it follows.
 */
function followTabs(sessions: SessionService, sessionId: string, onChange: () => void): TabsFollower {
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

async function actOnTabs(tabs: Tabs | undefined, row: SessionRow, action: TabAction): Promise<TabOutcome> {
  if (!tabs) {
    return {
      status: 'denied',
      code: 409,
      message: row.status === 'running' ? "this session's tabs cannot be changed from here (its browser shows its own tab strip)" : 'the session is not running; its tabs can be changed once it runs',
    };
  }
  try {
    if (action.action === 'switch') await tabs.activate(action.tab);
    else if (action.action === 'close') await tabs.close(action.tab);
    else if (action.action === 'go') await tabs.navigate(action.tab, action.url);
    else await tabs.open(action.url);
  } catch (error) {
    const reason = (error as { reason?: keyof typeof REFUSALS }).reason;
    if (reason && reason in REFUSALS) return { status: 'denied', code: REFUSALS[reason], message: (error as Error).message };
    return { status: 'error', code: 502, message: `the browser did not ${action.action === 'go' ? 'take the tab to that address' : `${action.action} the tab`}: ${(error as Error).message.slice(0, 200)}` };
  }
  return { status: 'ok', tabs: tabs.list() };
}

/** Answers `POST /share/<link>/tabs` for a link already found (its session running or not). */
export async function answerTabAction(request: IncomingMessage, response: ServerResponse, tabs: TabsAccess, link: { rights: ViewerRights; row: SessionRow }, headers: Record<string, string>): Promise<void> {
  const body = await readJsonBody(request, 8 * 1024);
  const refuse = (status: number, message: string) => sendJson(response, { status: 'denied', message }, status, headers);
  if (!mayDrive(link)) return refuse(403, "a view-only link watches the tabs but cannot switch, close, open or navigate them; ask whoever shared the session for its share link");
  if (!body.ok) return refuse(400, body.message);
  const action = parseTabAction(body.value);
  if ('error' in action) return refuse(400, action.error);
  const outcome = await tabs.act(link.row, action);
  if (outcome.status === 'ok') return sendJson(response, outcome, 200, headers);
  sendJson(response, { status: outcome.status, message: outcome.message }, outcome.code, headers);
}
