// What a feature of the engine is (docs/architecture.md "Features"): a module that the engine core
// runs in a list. A module declares what it adds (its channels, its part of the HTTP interface and
// of the share API, its routes of the API's table and of the node link's table, its upgrades, its
// meters) and how it starts and stops; the core serves all of them through its one door, router,
// node link and public port. A feature's routes are declared in its own folder (decisions.md 147). Modules
// start in list order once the engine listens and stop in reverse, also after a start that failed
// part way. No container: each module is made by a plain function from the core and the modules
// it needs, in engine.ts's list, where the order is read.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Channel } from './channels/channel.js';
import type { NodeRoute } from './cluster/node-routes.js';
import type { ApiOptions } from './http/api.js';
import type { AccountMeter } from './http/api-options.js';
import type { ApiRoute } from './http/routes.js';
import type { UpgradeTaker } from './http/public-port.js';
import type { ShareApiOptions } from './viewer/share-api.js';

/** Answers a request it serves (true), or leaves it to the next (false). */
export type RouteHandler = (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<boolean>;

/** The parts of the engine's own HTTP routes a feature may give (http/api.ts: absent, those calls say they are not offered). */
export type ApiFeatures = Partial<Pick<ApiOptions, 'files' | 'automation' | 'webhooks'>>;

/** The parts of the share API a feature may give (viewer/share-api.ts). */
export type ShareFeatures = Partial<Pick<ShareApiOptions, 'files' | 'tabs'>>;

/** A gauge read at each scrape of /metrics (operations/metrics.ts). */
export interface Meter {
  name: string;
  help: string;
  read(): Promise<number>;
}

export interface EngineModule {
  readonly name: string;
  /** Channels it serves, registered in list order (channels/channel.ts). */
  readonly channels?: readonly Channel[];
  readonly api?: ApiFeatures;
  /** Its own routes of the HTTP interface (http/routes.ts), declared in its folder. */
  readonly apiRoutes?: readonly ApiRoute[];
  /** Its fields on the account's `user/quota` and `user/api`. */
  readonly accountMeters?: readonly AccountMeter[];
  readonly share?: ShareFeatures;
  /** Its public pages and calls outside the versioned API (the replay page's API), tried after the share API. */
  readonly routes?: RouteHandler;
  /** Its calls between nodes of a cluster: routes of the node link's table, which checks each call's signature (cluster/node-routes.ts). */
  readonly nodeRoutes?: readonly NodeRoute[];
  /** Its WebSocket upgrades outside `/share/` (the automation address). */
  readonly upgrades?: readonly UpgradeTaker[];
  readonly meters?: readonly Meter[];
  /** Once the engine listens; a module whose start throws stops the engine's start. */
  start?(): void | Promise<void>;
  /** In reverse list order, once the public port no longer takes requests. */
  stop?(): void | Promise<void>;
}

/** The modules of one engine: started in order, stopped in reverse, each stopped only if started. */
export class ModuleList {
  private readonly started: EngineModule[] = [];

  constructor(readonly modules: readonly EngineModule[]) {
    const names = new Set<string>();
    for (const module of modules) {
      if (names.has(module.name)) throw new Error(`two engine modules are named "${module.name}"`);
      names.add(module.name);
    }
  }

  /** Starts each in order; if one throws, stops those started (in reverse) and throws. */
  async start(): Promise<void> {
    for (const module of this.modules) {
      try {
        await module.start?.();
      } catch (error) {
        await this.stop();
        throw new Error(`the engine's ${module.name} did not start: ${(error as Error).message}`, { cause: error });
      }
      this.started.push(module);
    }
  }

  /** Stops what started, last first; a stop that fails does not keep the others from stopping. */
  async stop(): Promise<void> {
    const failures: unknown[] = [];
    for (const module of this.started.splice(0).reverse()) {
      try {
        await module.stop?.();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, 'some engine modules did not stop cleanly');
  }

  /** What every module gives a part of the engine, merged in list order. */
  merged<Key extends 'api' | 'share'>(key: Key): NonNullable<EngineModule[Key]> {
    return Object.assign({}, ...this.modules.map((module) => module[key] ?? {})) as NonNullable<EngineModule[Key]>;
  }

  /** What every module gives a list of, in list order. */
  all<Key extends 'channels' | 'apiRoutes' | 'accountMeters' | 'nodeRoutes' | 'upgrades' | 'meters'>(key: Key): Array<NonNullable<EngineModule[Key]>[number]> {
    return this.modules.flatMap((module) => [...(module[key] ?? [])]);
  }

  /** The first of the modules' public route handlers that serves the request. */
  routes(): RouteHandler {
    const handlers = this.modules.flatMap((module) => (module.routes ? [module.routes] : []));
    return async (request, response, url) => {
      for (const handle of handlers) if (await handle(request, response, url)) return true;
      return false;
    };
  }
}
