// The node link's HTTP routes as one table (issue 48, decisions.md 146): every call one node makes
// of another (`/internal/v1/...`) is a route, data like the API's (http/routes.ts): its method, its
// path with `:id` for a session's id, what its body is, and the function that answers it. The
// features declare their routes in their own folders and give them through their module
// (module.ts `nodeRoutes`); the table serves them all and checks each call's signature once, here,
// before any route's answer runs: a route never sees an unsigned call. What a signature covers is
// node-link.ts's (`signCall`): the method, the path with its query, the time, and a JSON body.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { discardRest, readJsonBody } from '../../http/node-body.js';
import { sendJson } from '../http/respond.js';

/** Where every node-to-node HTTP call goes. */
export const INTERNAL_PREFIX = '/internal/v1/';

/** A signed call from another node, as its route's answer gets it. */
export interface NodeCall {
  request: IncomingMessage;
  url: URL;
  /** The id the path names in place of `:id` ('' for a path without one). */
  id: string;
  /** The body of a `json` route, parsed (and covered by the signature); undefined for the others. */
  body: unknown;
}

export interface NodeRoute {
  method: 'GET' | 'POST';
  /** After `/internal/v1/`, `:id` standing for a 32-hex id: `sessions/:id/files/read`. */
  path: string;
  /**
   * `none`: no body (whatever comes is read and dropped). `json`: read whole (at most `bodyBytes`)
   * and signed. `stream`: left to the answer, unsigned (a file): what must be trusted of it
   * travels in the signed query.
   */
  body: 'none' | 'json' | 'stream';
  /** The largest `json` body; default 64 KiB. */
  bodyBytes?: number;
  answer(call: NodeCall, response: ServerResponse): Promise<void>;
}

/** Whether a call came from a node of this cluster: signed over its method, path with query and text body, in time. */
export type SignatureCheck = (request: IncomingMessage, pathWithQuery: string, body: string) => boolean;

const ID = /\/[0-9a-f]{32}(?=\/|$)/g;
const NOT_A_NODE = { status: 'denied', message: 'not a call from a node of this cluster' } as const;

/** A path after the prefix with its ids as `:id` (the table's key), and the first id. */
function shapeOf(pathname: string): { key: string; id: string } {
  const rest = `/${pathname.slice(INTERNAL_PREFIX.length)}`;
  const id = /\/([0-9a-f]{32})(?=\/|$)/.exec(rest)?.[1] ?? '';
  return { key: rest.replace(ID, '/:id').slice(1), id };
}

/**
 * Serves the routes: true for every request under `/internal/v1/` (an unknown method or path gets
 * a 404 in the envelope), false for any other. Two routes for one method and path are a mistake
 * said at once.
 */
export function serveNodeRoutes(routes: readonly NodeRoute[], isSigned: SignatureCheck): (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<boolean> {
  const table = new Map<string, NodeRoute>();
  for (const route of routes) {
    const key = `${route.method} ${route.path}`;
    if (table.has(key)) throw new Error(`two node-link routes for ${key}`);
    table.set(key, route);
  }
  return async (request, response, url) => {
    if (!url.pathname.startsWith(INTERNAL_PREFIX)) return false;
    const { key, id } = shapeOf(url.pathname);
    const route = table.get(`${request.method} ${key}`);
    if (!route) {
      await discardRest(request);
      sendJson(response, { status: 'denied', message: `no endpoint ${request.method} ${url.pathname.slice(0, 100)}` }, 404);
      return true;
    }
    let body: unknown;
    let signedBody = '';
    if (route.body === 'json') {
      const read = await readJsonBody(request, route.bodyBytes);
      if (!read.ok) {
        sendJson(response, NOT_A_NODE, 403);
        return true;
      }
      body = read.value;
      // The sender signed the text it sent, JSON.stringify of the same value.
      signedBody = JSON.stringify(read.value);
    }
    if (!isSigned(request, `${url.pathname}${url.search}`, signedBody)) {
      request.resume();
      sendJson(response, NOT_A_NODE, 403);
      return true;
    }
    if (route.body === 'none') request.resume();
    await route.answer({ request, url, id, body }, response);
    return true;
  };
}
