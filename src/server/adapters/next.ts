// Next.js App Router adapter: `export const { GET, POST, DELETE } = toNextHandler(route)` in
// app/api/remote-browser/[...path]/route.ts. Route handlers already speak Request and Response.
import type { ProxyRoute } from '../proxy-route.js';

export type NextRouteHandler = (request: Request) => Promise<Response>;

export function toNextHandler(route: ProxyRoute): { GET: NextRouteHandler; POST: NextRouteHandler; DELETE: NextRouteHandler } {
  const handler: NextRouteHandler = (request) => route(request);
  return { GET: handler, POST: handler, DELETE: handler };
}
