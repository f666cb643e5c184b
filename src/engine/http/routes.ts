// The HTTP interface as a table (issue 48): a route is data (its method, its path after the
// version, the versions that have it) and the function that answers it, given the call's tools:
// authentication, the rate limit and programmatic access (api.ts) and the engine's settings
// (`ApiOptions`). The routes every engine has are declared beside this one (session-routes.ts,
// account-routes.ts, file-routes.ts); a feature's are declared in its own folder and given by its
// module (module.ts `apiRoutes`: recordings/, profiles/, channels/control/). api.ts serves them all
// through one table, and answers an unknown method, path or version with the same 404. A route
// whose bytes stream (a file, a recording's media) also has `stream`, which node:http serves.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccountRow, SessionRow } from '../store/store.js';
import type { ApiOptions } from './api-options.js';
import type { ApiAnswer, ApiRequest } from './calls.js';

export type ApiVersion = 'v8' | 'v7';

/** A refusal in the envelope's words that the caller sends as it is. */
export type Denied = { status: 'denied'; message: string };

/** What every route's answer may use (api.ts makes them once). */
export interface RouteTools {
  options: ApiOptions;
  /** Authentication, the rate limit and the plan's programmatic access, before a request that writes. */
  programmatic(request: ApiRequest): Promise<AccountRow | ApiAnswer>;
  /** A read: the key, then its rate-limit point and the answer at the same time. */
  read(request: ApiRequest, needsProgrammatic: boolean, reply: (account: AccountRow) => Promise<unknown>): Promise<ApiAnswer>;
  /** One session of the caller's account by its id, or the refusal (another account's id is not confirmed). */
  ownSession(account: AccountRow, id: string | null, version: string): Promise<SessionRow | Denied>;
  /** A programmatic call whose body names a session (`{id}`): the key, then the body checked, then `act`. */
  sessionByBody(request: ApiRequest, act: (account: AccountRow, id: string) => Promise<ApiAnswer>): Promise<ApiAnswer>;
}

export interface ApiRoute {
  method: 'GET' | 'POST' | 'DELETE';
  /** After the version: `vm/create`. */
  path: string;
  versions: readonly ApiVersion[];
  answer(request: ApiRequest, version: ApiVersion, tools: RouteTools): Promise<ApiAnswer>;
  /** Over node:http, the route's bytes streamed instead of `answer` (which answers in-process callers). */
  stream?(call: StreamCall, tools: RouteTools): Promise<void>;
}

/** A call to a route that streams, over node:http. */
export interface StreamCall {
  request: IncomingMessage;
  response: ServerResponse;
  api: ApiRequest;
  version: ApiVersion;
  /** Sends a refusal (the rest of the body read first). */
  refuse(reply: ApiAnswer): Promise<void>;
}

export const BOTH: readonly ApiVersion[] = ['v8', 'v7'];
export const V8_ONLY: readonly ApiVersion[] = ['v8'];

/** Whether a value a tool gave back is the caller's account (else an answer to send). */
export function isAccount(value: AccountRow | ApiAnswer): value is AccountRow {
  return !('status' in value && 'body' in value);
}

/**
 * The routes by method, version and path; two routes for one of them are a mistake said at once.
 * `streamed` finds a route that streams by version and path whatever the method (a wrong method
 * is refused with the right one named).
 */
export function routeTable(routes: readonly ApiRoute[]): { find(method: string, version: ApiVersion, path: string): ApiRoute | undefined; streamed(version: ApiVersion, path: string): ApiRoute | undefined } {
  const table = new Map<string, ApiRoute>();
  const streams = new Map<string, ApiRoute>();
  for (const route of routes) {
    for (const version of route.versions) {
      const key = `${route.method} ${version} ${route.path}`;
      if (table.has(key)) throw new Error(`two API routes for ${key}`);
      table.set(key, route);
      if (route.stream) streams.set(`${version} ${route.path}`, route);
    }
  }
  return {
    find: (method, version, path) => table.get(`${method} ${version} ${path}`),
    streamed: (version, path) => streams.get(`${version} ${path}`),
  };
}
