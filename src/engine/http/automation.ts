// Programs driving sessions (decisions.md 54, 143): `GET /v8/vm/automation?id=` (and /v7) answers a
// DevTools address (Chromium) or a WebDriver BiDi address (Firefox ESR) for one running session of the caller's account, carrying a short-lived token
// instead of the API key (channels/automation/tokens.ts); the WebSocket upgrade on `/automation/<token>`
// checks the token and hands the connection to the channel router, which carries it on the node
// that runs the session (any node of a cluster takes it).
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { requestTargetUrl } from '../../http/request-target.js';
import { automationProtocol, automationToken, checkAutomationToken } from '../channels/automation/tokens.js';
import type { ChannelRouter } from '../channels/router.js';
import type { BrowserImage } from '../runtime/index.js';
import type { AccountRow, SessionRow } from '../store/store.js';
import type { WordingVersion } from './outcomes.js';

export interface AutomationOptions {
  /** A session as the store has it. */
  session(id: string): Promise<SessionRow | undefined>;
  /** The image a session was started with (its family decides whether it can be driven). */
  image(id: string): BrowserImage | undefined;
  /** The engine's automation secret (the store's `automation_secret`, the same on every node). */
  secret: string;
  tokenSeconds: number;
  now: () => number;
  /** Where programs reach this service (`shareBase`, else the engine's own address). */
  base: () => string;
  router: ChannelRouter;
  clientAddress: (request: IncomingMessage) => string;
}

export type AutomationAnswer =
  | { status: 'ok'; browserWSEndpoint: string; expires: string }
  | { status: 'ok'; webDriverBiDiEndpoint: string; expires: string }
  | { status: 'denied'; message: string };

const PATH = /^\/automation\/([^/]+)$/;

export function createAutomation(options: AutomationOptions) {
  /** The answer to `GET /<version>/vm/automation?id=` for an account whose plan has programmatic access. */
  async function address(account: AccountRow, id: string | null, version: WordingVersion): Promise<AutomationAnswer> {
    if (id === null || id === '') return { status: 'denied', message: `id: send the session's id (the vmId that POST /${version}/vm/create answered) as ?id=` };
    const row = await options.session(id.slice(0, 200));
    if (!row || row.account_id !== account.id) return { status: 'denied', message: 'id: unknown session' };
    const image = options.image(row.browser);
    const protocol = automationProtocol(image?.family);
    if (!protocol) {
      return { status: 'denied', message: `id: ${row.browser_name} sessions cannot be driven by a program on this service: Chromium sessions offer DevTools and Firefox ESR sessions WebDriver BiDi` };
    }
    // A Firefox runs its remote agent only when created for programs (decisions.md 143).
    if (protocol === 'bidi' && !row.automation) {
      return { status: 'denied', message: `id: this ${row.browser_name} session was not created for programs: create the session with automation: true (POST /${version}/vm/create) to drive it over WebDriver BiDi` };
    }
    if (row.status !== 'running') {
      const now = row.status === 'starting'
        ? `is still ${row.status}; ask again once GET /${version}/vm/data shows it running`
        : `is ${row.status}; a program can drive only a running session`;
      return { status: 'denied', message: `id: the session ${now}` };
    }
    const expires = options.now() + options.tokenSeconds * 1000;
    const base = options.base().replace(/^http/, 'ws').replace(/\/+$/, '');
    const endpoint = `${base}/automation/${automationToken(options.secret, row.id, expires)}`;
    const when = new Date(expires).toISOString();
    return protocol === 'bidi' ? { status: 'ok', webDriverBiDiEndpoint: endpoint, expires: when } : { status: 'ok', browserWSEndpoint: endpoint, expires: when };
  }

  /** Takes a WebSocket upgrade on `/automation/<token>`; false when the path is not automation's. */
  async function upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<boolean> {
    const url = requestTargetUrl(request.url, 'http://engine');
    const match = url && PATH.exec(url.pathname);
    if (!match) return false;
    const refuse = (status: string, text: string) => {
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
      return true;
    };
    // A token is base64url and never escaped: the path segment is taken as it came (no decoding to fail on).
    const token = checkAutomationToken(options.secret, match[1]!, options.now());
    if (!token.ok) {
      return refuse('401 Unauthorized', token.reason === 'expired'
        ? 'this automation address has expired; ask GET /v8/vm/automation for a new one'
        : 'not an automation address of this service; ask GET /v8/vm/automation for one');
    }
    const row = await options.session(token.sessionId);
    if (!row || row.status !== 'running') return refuse('410 Gone', 'the session of this automation address is not running');
    await options.router.open(request, socket, head, { channel: 'automation', row, credential: 'api-key', address: options.clientAddress(request) });
    return true;
  }

  return { address, upgrade };
}
