// The remote browser's tabs on the share API (issue 36, decisions.md 102): the viewer state's
// `tabs` (`GET /share/<link>` and each `state` event of `/share/<link>/events`), and the driver's
// actions, `POST /share/<link>/tabs` with one of `{action:"switch",tab}`, `{action:"close",tab}`,
// `{action:"open"[,url]}`, `{action:"go",tab,url}` (the tab shows another address: what an app
// window's missing address bar would do, issue 44), answered `{status:"ok",tabs}` or a refusal in
// the usual envelope.

/** One tab of the remote browser, in the order the tabs opened. */
export interface ShareTab {
  /** The browser's id for the tab: what an action names. */
  id: string;
  /** Its page's title; empty while the page has none. */
  title: string;
  /** Its page's web address. */
  url: string;
  /** Whether it is the tab the browser shows. */
  active: boolean;
  /**
   * Its page's icon, fetched inside the session and checked by the engine (an image of at most
   * 8 KB, decisions.md 112), as a `data:image/…;base64,` address; absent while it has none.
   */
  favicon?: string;
}

/** The icons a viewer shows: a data: address of an image type, base64 (never an address on the web). */
const FAVICON = /^data:image\/(png|gif|jpeg|webp|x-icon|svg\+xml);base64,[A-Za-z0-9+/]+={0,2}$/;

/** Whether `value` is an icon the viewer may show (a data: image address; a viewer loads nothing from the sites a session visits). */
export function isFavicon(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 12_000 && FAVICON.test(value);
}

/** What the driver may do with the tabs. */
export type TabAction = { action: 'switch'; tab: string } | { action: 'close'; tab: string } | { action: 'open'; url?: string } | { action: 'go'; tab: string; url: string };

export const TAB_ACTIONS = ['switch', 'close', 'open', 'go'] as const;

/** The longest address a tab action carries. */
const MAX_TAB_URL = 2048;

/** Checks a tab action's body: the action, or what is wrong with it (a message for the refusal). */
export function parseTabAction(value: unknown): TabAction | { error: string } {
  const body = value as Record<string, unknown> | null;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { error: 'send a JSON object: {"action":"switch"|"close","tab":"<id>"}, {"action":"open","url":"https://…"} or {"action":"go","tab":"<id>","url":"https://…"}' };
  const { action, tab, url } = body;
  const badTab = (name: string) => ({ error: `"${name}" names the tab: "tab" is one of the ids in the state's "tabs"` });
  const badUrl = { error: `"url" is an http or https address of at most ${MAX_TAB_URL} characters` };
  const isTab = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && value.length <= 100;
  if (action === 'switch' || action === 'close') {
    if (!isTab(tab)) return badTab(action);
    return { action, tab };
  }
  if (action === 'open') {
    if (url === undefined) return { action };
    if (typeof url !== 'string' || url.length > MAX_TAB_URL) return badUrl;
    return { action, url };
  }
  // The address is checked as `open`'s is, where the browser is asked (runtime/browser/tabs.ts: http or https only).
  if (action === 'go') {
    if (!isTab(tab)) return badTab(action);
    if (typeof url !== 'string' || url.length === 0 || url.length > MAX_TAB_URL) return badUrl;
    return { action, tab, url };
  }
  return { error: `"action" is one of ${TAB_ACTIONS.map((name) => `"${name}"`).join(', ')}` };
}

/** Checks one entry of the state's `tabs` (the viewer reads any engine's answer). */
export function isShareTab(value: unknown): value is ShareTab {
  const tab = value as Partial<ShareTab> | null;
  return typeof tab === 'object' && tab !== null && typeof tab.id === 'string' && typeof tab.title === 'string' && typeof tab.url === 'string' && typeof tab.active === 'boolean' && (tab.favicon === undefined || typeof tab.favicon === 'string');
}
