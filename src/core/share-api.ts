// The share API's calls as a viewer makes them: the link's viewer state, its view-only link, and a
// ping for the round-trip time, and the driver's tab actions. Plain fetch, no React and no DOM, so any viewer can use them.
import { shareApiUrl } from '../protocol/share-api.js';
import { isViewerState, isWebAddress, type ViewerState } from '../protocol/share.js';
import { isShareTab, type ShareTab, type TabAction } from '../protocol/tabs.js';

/** Where a link's share API is, and the fetch to call it with (a stand-in in stories or tests). */
export interface ShareApiTarget {
  shareBase: string;
  linkId: string;
  fetch?: typeof fetch | undefined;
}

const call = (target: ShareApiTarget, route: 'state' | 'ping' | 'view-only', init: RequestInit = {}) =>
  (target.fetch ?? fetch)(shareApiUrl(target.shareBase, target.linkId, route), { cache: 'no-store', ...init });

/** The link's viewer state, or `'gone'` when the API knows no such link; throws when it cannot tell. */
export async function readViewerState(target: ShareApiTarget): Promise<ViewerState | 'gone'> {
  const response = await call(target, 'state');
  if (response.status === 404) return 'gone';
  if (!response.ok) throw new Error(`share API answered ${response.status}`);
  const answer: unknown = await response.json();
  if (!isViewerState(answer)) throw new Error('unexpected share API answer');
  return answer;
}

/** Asks for the session's view-only link (only a share link's holder may); throws when there is none to show. */
export async function requestViewOnlyLink(target: ShareApiTarget): Promise<string> {
  const response = await call(target, 'view-only', { method: 'POST' });
  const answer = (await response.json()) as { status?: string; shareUrl?: unknown };
  if (!response.ok || answer.status !== 'ok' || typeof answer.shareUrl !== 'string' || !isWebAddress(answer.shareUrl)) throw new Error('no link');
  return answer.shareUrl;
}

/**
 * Milliseconds from asking the share API to its whole answer; `undefined` when it answered but not
 * ok (say a 429: that says nothing of the connection). Throws when there was no answer.
 */
export async function measureRoundTrip(target: ShareApiTarget): Promise<number | undefined> {
  const started = performance.now();
  const response = await call(target, 'ping');
  await response.arrayBuffer();
  return response.ok ? Math.round(performance.now() - started) : undefined;
}

/** How a round-trip time feels: under 100 ms good, under 300 ms fair, else poor. */
export type ConnectionQuality = 'unknown' | 'good' | 'fair' | 'poor';
export function connectionQuality(rttMs: number | null): ConnectionQuality {
  return rttMs === null ? 'unknown' : rttMs < 100 ? 'good' : rttMs < 300 ? 'fair' : 'poor';
}

/** Why a tab action was refused, in the share API's words (a view-only link, a tab that closed, the last tab). */
export class TabActionRefused extends Error {
  constructor(message: string, readonly httpStatus: number) {
    super(message);
    this.name = 'TabActionRefused';
  }
}

/**
 * Switches, closes or opens one of the remote browser's tabs (a link that may drive only):
 * resolves with the tabs as the browser then has them; throws TabActionRefused with the API's
 * message when refused.
 */
export async function actOnTab(target: ShareApiTarget, action: TabAction): Promise<ShareTab[]> {
  const response = await (target.fetch ?? fetch)(shareApiUrl(target.shareBase, target.linkId, 'tabs'), {
    method: 'POST',
    cache: 'no-store',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(action),
  });
  const answer = (await response.json().catch(() => ({}))) as { status?: string; message?: unknown; tabs?: unknown };
  if (!response.ok || answer.status !== 'ok') throw new TabActionRefused(typeof answer.message === 'string' ? answer.message : `share API answered ${response.status}`, response.status);
  return Array.isArray(answer.tabs) ? answer.tabs.filter(isShareTab) : [];
}
