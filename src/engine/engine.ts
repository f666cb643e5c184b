// createEngine(): the session service in one object. The engine core (core.ts: settings, store,
// runtime, node link, sessions, door, router) runs a list of features (module.ts), each a module
// from its own folder; this file lists them in order, serves what they give through one public
// port, and stops them in reverse. With a Postgres database it is a node of a cluster (several
// engines share the work). `remote-browser-kit serve` runs the same thing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { discardRest } from '../http/node-body.js';
import { automationModule } from './features/automation.js';
import { controlModule } from './features/control.js';
import { displayModule } from './features/display.js';
import { filesModule } from './features/files.js';
import { openBase, openSessions, type Engine, type EngineOptions } from './core.js';
import { sessionNodeRoutes } from './cluster/session-routes.js';

export type { Engine, EngineOptions };
import { createApi } from './http/api.js';
import { inProcessFetch } from './http/fetch.js';
import { openApiDocument } from './http/openapi.js';
import { createPublicPort } from './http/public-port.js';
import { answerProbe, startOperatorListener, type OperatorListener, type ReadinessSources } from './http/readiness.js';
import { sendJson } from './http/respond.js';
import { ModuleList } from './module.js';
import { apiObserver } from './operations/api-observer.js';
import type { RequestLog } from './operations/http-observer.js';
import { observeSessions } from './operations/session-observer.js';
import { openProfiles, profilesModule } from './features/profiles.js';
import { openRecordings, recordingsModule } from './features/recordings.js';
import { portOfUrl } from './runtime/index.js';
import type { EngineRuntime } from './sessions/node-runtime.js';
import { ShareLinks } from './sessions/share-links.js';
import { createShareApi } from './viewer/share-api.js';
import { frameOriginsOf } from './viewer/framing.js';
import { createViewerSite } from './viewer/site.js';
import { tabsModule } from './features/tabs.js';
import { webhooksModule } from './features/webhooks.js';

export function createEngine(options?: EngineOptions & { runtime?: undefined }): Promise<Engine>;
export function createEngine<Runtime extends EngineRuntime>(options: EngineOptions & { runtime: Runtime }): Promise<Engine<Runtime>>;
export async function createEngine(options: EngineOptions = {}): Promise<Engine<EngineRuntime>> {
  const base = await openBase(options);
  const { config, store, logger, metrics, link, presence, clustered, runtime } = base;
  // Features the sessions record into and restore from are opened before them.
  const recorded = openRecordings(base);
  const { recordings } = recorded;
  const profiles = openProfiles(base);
  const core = openSessions(base, { profiles, recording: (id) => recordings.recordHere(id), recordingCaps: recorded.caps });
  const { sessions, router, door } = core;
  const control = controlModule(core);
  const webhooks = webhooksModule(core, options.webhookLookup);
  const observer = observeSessions({ sessions, runtime, store, logger, metrics, webhooks: webhooks.webhooks });
  let modules = new ModuleList([]);
  let operator: OperatorListener | null = null;
  let server: ReturnType<typeof createPublicPort> | undefined;
  /** Closes what is open, last first: whatever the start reached. */
  const close = async () => {
    if (server?.listening) {
      const closed = new Promise<void>((done) => server!.close(() => done()));
      server.closeAllConnections();
      // Upgraded sockets are no longer the HTTP server's to close, yet it waits for them: the
      // door ends every attachment it accepted (viewers, listeners, programs), or a stop (SIGTERM)
      // would wait for the last viewer to leave.
      door.close();
      await closed;
    }
    await operator?.close();
    await modules.stop();
    await core.close();
    await observer.settled();
    await base.close();
  };
  try {
    const recording = await recordingsModule(core, recorded);
    // The order features start in (and register their channels: the viewer state's flags follow it).
    modules = new ModuleList([
      displayModule(core, control.driving),
      await automationModule(core, control.driving),
      filesModule(core),
      recording,
      profilesModule(profiles),
      tabsModule(core),
      control,
      webhooks,
      { name: 'channels given', channels: options.channels ?? [] },
      ...(options.modules ?? []),
    ]);
    for (const channel of modules.all('channels')) core.channels.register(channel);
    for (const meter of modules.all('meters')) metrics?.addGauge(meter);
    const recovered = await sessions.recover();
    const api = createApi({
      config, store, accounts: base.accounts, usage: base.usage, sessions, runtime, now: base.now, openapi: () => openApiDocument(base.url()), limiter: base.limiter, clientAddress: base.clientAddress,
      observer: apiObserver(logger, metrics),
      ...modules.merged('api'),
      accountMeters: modules.all('accountMeters'),
    }, modules.all('apiRoutes'));
    const links = new ShareLinks({ store, secret: base.secret, shareBase: base.shareBase });
    const shareApi = createShareApi({ sessions, links, presence, router, door, frameOrigins: (row) => frameOriginsOf(store, row), ...modules.merged('share'), eventSeats: { control: 2 * config.viewers.controlling, view: 2 * config.viewers.watching }, limiter: base.limiter, clientAddress: base.clientAddress, ...(metrics ? { onRateLimited: () => metrics.rateLimited.inc({ limit: 'share_lookup' }) } : {}) });
    const site = createViewerSite({ linkStatus: shareApi.linkStatus, replayStatus: recording.replayStatus });
    const sources: ReadinessSources = {
      nodeId: base.nodeId,
      probeStore: (timeoutMs) => store.probeWrite(timeoutMs),
      browsers: () => runtime.images.filter((image) => image.enabled).map((image) => image.id),
      nodeState: async () => (await store.node(base.nodeId))?.state,
      health: async () => ({ sessions: await sessions.activeCount(), warm: runtime.warmCount() }),
    };
    // The node link's one table: the core's removal and every feature's routes, each call's signature checked once.
    const nodeRoutes = link.serve([...sessionNodeRoutes(store, sessions), ...modules.all('nodeRoutes')]);
    const routes = modules.routes();
    const handle = async (request: IncomingMessage, response: ServerResponse, requestUrl: URL, observed: RequestLog) => {
      if (clustered && (await nodeRoutes(request, response, requestUrl))) return;
      if (await api(request, response, requestUrl, observed.log)) return;
      // Nothing below reads a request body: one that was sent anyway is read (and dropped) before
      // the answer, so that the client can finish sending and read it (node-body.ts).
      if (await shareApi.transfer(request, response, requestUrl)) return;
      await discardRest(request);
      if (await shareApi.handle(request, response, requestUrl)) return;
      if (await routes(request, response, requestUrl)) return;
      if (await site.handle(request, response, requestUrl)) return;
      if (await answerProbe(request, response, requestUrl.pathname, sources)) return;
      sendJson(response, { status: 'denied', message: `no endpoint ${request.method} ${requestUrl.pathname.slice(0, 100)}` }, 404);
    };
    // Another node's forwarded channel connection, its signature checked.
    const forwarded = (request: IncomingMessage, socket: Duplex, head: Buffer, requestUrl: URL) => {
      const carried = link.verifyUpgrade(request, requestUrl);
      if (carried) router.openForwarded(request, socket, head, carried);
      return carried !== null;
    };
    const upgrades = [...(clustered ? [forwarded] : []), (request: IncomingMessage, socket: Duplex, head: Buffer) => shareApi.upgrade(request, socket, head), ...modules.all('upgrades')];
    const listening = createPublicPort({ handle, logger, metrics, upgrades });
    server = listening;
    await new Promise<void>((resolveListen, reject) => {
      listening.once('error', reject);
      listening.listen(options.port ?? 8640, options.host ?? '127.0.0.1', () => resolveListen());
    });
    const address = listening.address() as AddressInfo;
    // Listening on every address (0.0.0.0, ::) gives no address to link to: links then use loopback
    // until the operator sets `shareBase` to the address viewers really reach.
    const reachable = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
    base.listening(`http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${address.port}`);
    // The node link is served here, or on the port its internal address names (a mapped port).
    for (const port of [address.port, portOfUrl(base.identity.internalUrl)]) base.ownPorts.add(port ?? 0);
    if (metrics) {
      // Default: the public port + 1000 (8640 -> 9640); a public port picked freely (0) picks this one freely too.
      const port = config.operator.port ?? (options.port === 0 ? 0 : address.port + 1000);
      if (port > 65_535) throw new Error(`operator listener: the public port + 1000 is past 65535; set operator.port`);
      operator = await startOperatorListener({ host: config.operator.host, port, metrics, sources, logger });
      base.ownPorts.add(portOfUrl(operator.url) ?? 0);
    }
    await link.start(sessions, presence);
    sessions.startSweeping();
    await modules.start();
    logger.info({ address: base.url(), operator: operator?.url ?? null, database: store.dialect, browsers: sources.browsers() }, 'engine listening');
    return {
      url: base.url(),
      operatorUrl: operator?.url ?? null,
      ownPorts: base.ownPorts,
      logger,
      metrics,
      webhooks: webhooks.webhooks,
      recordings,
      channels: core.channels.all().map(({ name, opensWith, needs }) => ({ name, opensWith, messageBytes: needs.messageBytes })),
      runtime,
      store,
      nodeId: base.nodeId,
      accounts: base.accounts,
      sessions,
      reaped: base.reaped,
      recovered,
      fetch: inProcessFetch({ api, url: base.url, logger, metrics }),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
