// Express adapter: the node:http adapter as middleware. Mount it anywhere (`app.use(handler)` or
// under the base path); it reads bodies express.json() already parsed, and passes other paths on.
import type { ProxyRoute } from '../proxy-route.js';
import { toNodeHandler, type NodeHandler } from './node.js';

export type ExpressHandler = NodeHandler;

/** `app.use(toExpressHandler(route))`: Express 5 hands a rejected promise to its error handlers. */
export function toExpressHandler(route: ProxyRoute, options: { maxBodyBytes?: number } = {}): ExpressHandler {
  return toNodeHandler(route, options);
}
