// Hono adapter: the route needs only the raw Request (`c.req.raw`). Use it as a handler
// (`app.all('/api/remote-browser/*', handler)`) or as middleware (`app.use(handler)`).
import { isUnderBasePath, type ProxyRoute } from '../proxy-route.js';

/** The part of Hono's Context the route reads; written out so the adapter needs no hono import. */
export interface HonoContextLike {
  req: { raw: Request; path: string };
}

export type HonoHandler = (c: HonoContextLike, next?: () => Promise<void>) => Promise<Response | undefined>;

export function toHonoHandler(route: ProxyRoute): HonoHandler {
  return async (c, next) => {
    // As middleware, paths that are not the route's go on to the app's other handlers.
    if (next && !isUnderBasePath(c.req.path, route.basePath)) {
      await next();
      return undefined;
    }
    return route(c.req.raw);
  };
}
