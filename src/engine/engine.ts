// createEngine(): the session service in one object: the store, accounts, sessions and the
// runtime behind the HTTP interface; with a Postgres database, a node of a cluster (several
// engines share the work). `remote-browser-kit serve` runs the same thing.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { Accounts } from './accounts/accounts.js';
import { NodeLink } from './cluster/node-link.js';
import { parseEngineConfig, warmPoolOptions, type EngineConfigInput } from './config.js';
import { createApi } from './http/api.js';
import { inProcessFetch } from './http/fetch.js';
import { clientAddressResolver } from './http/client-address.js';
import { limitersFor } from './http/limits.js';
import { openApiDocument } from './http/openapi.js';
import { sendJson } from './http/respond.js';
import { createPublicPort } from './http/public-port.js';
import { discardRest } from '../http/node-body.js';
import { OpenFiles } from './limits/open-files.js';
import { DEFAULT_VIDEO, EnginePorts, portOfUrl, probeSound, probeVideo, type ReapReport, SessionRuntime } from './runtime/index.js';
import { SessionService } from './sessions/service.js';
import type { EngineRuntime } from './sessions/node-runtime.js';
import type { Channel, ChannelCredential } from './channels/channel.js';
import { Presence } from './channels/presence.js';
import { ChannelRegistry } from './channels/registry.js';
import { Door } from './channels/door.js';
import { rfbChannel } from './channels/rfb/rfb.js';
import { nodeControl } from './channels/control/node-control.js';
import { peopleChannel } from './channels/control/people.js';
import { soundChannel } from './channels/sound/sound.js';
import { videoChannel } from './channels/video/video.js';
import { automationChannel } from './channels/automation/automation.js';
import { editingChannel } from './channels/editing/editing.js';
import { filesChannel } from './channels/files/files.js';
import { FilesLink } from './cluster/files-link.js';
import { RecordingsLink } from './cluster/recordings-link.js';
import { TabsLink } from './cluster/tabs-link.js';
import { recordingsHere } from './http/recordings.js';
import { SessionFilesService } from './sessions/files.js';
import { AccountUsage } from './accounts/usage.js';
import { ShareLinks } from './sessions/share-links.js';
import { followRecordedSessions, Recordings } from './recordings/recordings.js';
import { createAutomation } from './http/automation.js';
import { ChannelRouter } from './channels/router.js';
import { createShareApi } from './viewer/share-api.js';
import { tabsHere } from './viewer/share-tabs.js';
import { createViewerSite } from './viewer/site.js';
import { frameOriginsOf } from './viewer/framing.js';
import { createReplayApi } from './viewer/replay-api.js';
import { ReplayLinks } from './recordings/replay-links.js';
import type { Store } from './store/store.js';
import { nodeIdOf, openDataDirectory } from './data-directory.js';
import { apiObserver } from './operations/api-observer.js';
import type { RequestLog } from './operations/http-observer.js';
import { createLogger, type Logger } from './operations/logger.js';
import { EngineMetrics } from './operations/metrics.js';
import { answerProbe, startOperatorListener, type OperatorListener, type ReadinessSources } from './http/readiness.js';
import { observeSessions } from './operations/session-observer.js';
import { openProfileService } from './profiles/profiles.js';
import { SessionWebhooks } from './webhooks/webhooks.js';

export interface EngineOptions {
  /** Data directory: the database file and the session directories. Default `.data`. */
  dataDir?: string;
  host?: string;
  /** 0 picks a free port. Default 8640. */
  port?: number;
  /** Settings and plans (docs/operator-cli.md); defaults apply to what is left out. */
  config?: EngineConfigInput;
  /** The engine's clock (ms since the epoch); tests move it to cross cycles. */
  now?: () => number;
  /** A postgres:// URL: overrides the configuration's `database` (`--database`). */
  database?: string;
  /** Where log lines go (a stream of JSON lines); default stderr (decisions.md 60). */
  logDestination?: NodeJS.WritableStream;
  /** Resolves webhook receivers' names (tests); default the system's resolver. */
  webhookLookup?: typeof import('node:dns').lookup;
  /**
   * Channels registered after the engine's own (channels/channel.ts): each is served by the same
   * router, door, node link and share API (`/share/<link>/<name>`) as theirs. A test's `echo`
   * channel is one (test/channels/echo-channel.test.ts).
   */
  channels?: readonly Channel[];
  /** The node's runtime; default the real one (SessionRuntime). Tests of the service's decisions pass one that starts no browser. */
  runtime?: EngineRuntime;
}

export interface Engine<Runtime extends EngineRuntime = SessionRuntime> {
  readonly url: string;
  readonly runtime: Runtime;
  readonly store: Store;
  /** This engine's id as a node (of a cluster, or the one node on SQLite). */
  readonly nodeId: string;
  readonly accounts: Accounts;
  readonly sessions: SessionService;
  readonly reaped: ReapReport;
  readonly recovered: { suspended: number; errored: number; deleted: number };
  /** The operator listener (/metrics, /readyz, /healthz), or null with `operator.metrics: false`. */
  readonly operatorUrl: string | null;
  /** The ports this engine listens on, which no session reaches (decisions.md 120); a program serving beside it adds its own (the demo's page). */
  readonly ownPorts: EnginePorts;
  readonly logger: Logger;
  /** The Prometheus registry, or null with `operator.metrics: false`. */
  readonly metrics: EngineMetrics | null;
  readonly webhooks: SessionWebhooks;
  /** Sessions' recordings kept here (issue 35): their timeline, media and retention. */
  readonly recordings: Recordings;
  /** The channels this engine serves, in the order of registration: the credentials that open each, and the largest message it takes (the door fuzz reaches every one). */
  readonly channels: ReadonlyArray<{ name: string; opensWith: readonly ChannelCredential[]; messageBytes: number }>;
  /** The v8/v7 interface in-process, without a socket: same checks, limits and answers as over HTTP. */
  fetch(request: Request): Promise<Response>;
  close(): Promise<void>;
}

export function createEngine(options?: EngineOptions & { runtime?: undefined }): Promise<Engine>;
export function createEngine<Runtime extends EngineRuntime>(options: EngineOptions & { runtime: Runtime }): Promise<Engine<Runtime>>;
export async function createEngine(options: EngineOptions = {}): Promise<Engine<EngineRuntime>> {
  const config = parseEngineConfig(options.config ?? {});
  const dataDir = resolve(options.dataDir ?? '.data');
  const now = options.now ?? Date.now;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const nodeId = nodeIdOf(dataDir, config);
  const logger = createLogger(config.log, options.logDestination, { node: nodeId });
  const { store, accounts } = await openDataDirectory(dataDir, config, now, options.database ?? config.database, (message) => logger.warn(message));
  const clustered = store.dialect === 'postgres';
  if (clustered && !config.cluster.secret) {
    await store.close();
    throw new Error('cluster.secret: a Postgres database makes this engine a node of a cluster; set the same secret (at least 32 characters) on every node (docs/deployment.md)');
  }
  let openFiles: OpenFiles;
  try {
    openFiles = new OpenFiles({ reserve: config.openFiles.reserve });
  } catch (error) {
    await store.close();
    throw error;
  }
  const secret = await store.settingOrInsert('share_link_secret', randomBytes(32).toString('base64url'));
  const warm = warmPoolOptions(config);
  if (config.insecure.unconfined) {
    logger.warn('INSECURE: insecure.unconfined is set. Sessions run as this engine\'s own user with its files and network: anyone holding a share link can read and write what this engine can. Never use this where strangers get links.');
  }
  // Video (decisions.md 65): configured, and this host's ffmpeg grabs X and encodes H.264; each
  // display then has its encoder, run while someone watches. The channel knows too: a watcher
  // another node forwards finds no video here when it is off here.
  const video = config.video !== false && (await probeVideo()).available;
  const ownPorts = new EnginePorts(); // filled as each listener listens: a port 0 is known only then
  const { runtime, reaped } = options.runtime ? { runtime: options.runtime, reaped: { processes: 0, directories: 0 } } : await SessionRuntime.open({
    root: join(dataDir, 'sessions'),
    egress: config.egress,
    egressConnections: config.egress.connections,
    openFiles,
    enginePorts: ownPorts,
    confinement: config.insecure.unconfined ? false : config.confinement,
    timeZone: config.timeZone,
    sound: config.sound,
    ...(video ? { video: config.video || DEFAULT_VIDEO } : {}),
    warn: (message) => logger.warn(message),
    ...(warm ? { warm } : {}),
    sessionLimit: config.node.capacity,
  });

  let url = '';
  /** Where links (share, replay, automation) point: the configured share base, else this engine's own address once it listens. */
  const shareBase = () => config.shareBase ?? url;
  // On one machine the link only registers the node (capacity, `nodes list`); in a cluster it is
  // also how nodes reach each other.
  const identity = { id: nodeId, internalUrl: '', advertisedUrl: '', capacity: config.node.capacity, browsers: runtime.images.filter((i) => i.enabled).map((i) => i.id), warm: () => runtime.warmStats().browsers.map((b) => `${b.browser} ${b.language}`) };
  const link = new NodeLink({
    store,
    node: identity,
    secret: config.cluster.secret ?? randomBytes(32).toString('hex'),
    heartbeatMs: config.cluster.heartbeatMs,
    lostAfterMs: config.cluster.lostAfterMs,
    now: Date.now,
    watchOthers: clustered,
    logger,
  });
  // Who is attached to each session (viewers today), for the viewer count and the idle sweep.
  const presence = new Presence({
    record: (id, fields) => store.updateSession(id, fields),
    now,
    ...(clustered ? { announce: (id: string) => link.announceViewers(id) } : {}),
  });
  // Metrics are made before the sessions, whose byte meters they count; their gauges read the parts at each scrape.
  let webhooks!: SessionWebhooks;
  const sources: ReadinessSources = {
    nodeId,
    probeStore: (timeoutMs) => store.probeWrite(timeoutMs),
    browsers: () => runtime.images.filter((image) => image.enabled).map((image) => image.id),
    nodeState: async () => (await store.node(nodeId))?.state,
    health: async () => ({ sessions: await sessions.activeCount(), warm: runtime.warmCount() }),
  };
  const metrics = config.operator.metrics
    ? new EngineMetrics(nodeId, {
        sessions: () => store.sessionCountsOfNode(nodeId),
        attachments: () => presence.totals(),
        capacity: () => config.node.capacity,
        nodeState: sources.nodeState,
        warm: () => ({ ...runtime.warmCount(), memoryMb: runtime.warmStats().memoryMb }),
        webhookQueue: () => webhooks.queue.pendingCount(),
      })
    : null;
  // An account's pools, meters and programmatic access: the API's usage answers and the create's quota.
  const usage = new AccountUsage({ store, plan: (id) => accounts.plan(id), now });
  // Recorded sessions' picture, sound and timeline (issue 35), in the engine's own directory.
  const recordings = new Recordings({
    dir: join(dataDir, 'recordings'),
    now,
    store,
    retentionDays: async (row): Promise<number> => (await sessions.planOf(row))?.recording_days ?? config.recordings.retentionDays,
    fullUrls: async (id): Promise<boolean> => {
      const row = await store.session(id);
      return (row && (await sessions.planOf(row))?.recording_full_urls) ?? false;
    },
    timelineBytes: config.recordings.timelineKb * 1024,
  });
  const profiles = openProfileService({ config, dataDir, store, plan: (id) => accounts.plan(id), image: (id) => runtime.image(id), now, warn: (message) => logger.warn(message) });
  const sessions = new SessionService({
    usage,
    profiles,
    ...(metrics ? { onBytes: (egress: number, residential: number) => (metrics.egressBytes.inc(egress), metrics.residentialBytes.inc(residential)) } : {}),
    store,
    presence,
    accounts,
    config,
    runtime,
    now,
    secret,
    nodeId,
    ...(clustered ? { cluster: link } : {}),
    shareBase,
    recordingDir: (id) => recordings.recordHere(id),
  });
  followRecordedSessions(recordings, { sessions, runtime, presence, store });
  webhooks = new SessionWebhooks({ store, settings: config.webhooks, nodeId, now, logger, metrics, ...(options.webhookLookup ? { lookup: options.webhookLookup } : {}) });
  const observer = observeSessions({ sessions, runtime, store, logger, metrics, webhooks });
  // Files in and out of sessions (decisions.md 55-57): here through the program inside the session, elsewhere through its node.
  const filesLink = new FilesLink({ link, filesHere: (id) => sessions.endsOf(id)?.files ?? undefined });
  const files = new SessionFilesService({ sessions, row: (id) => store.session(id), settings: config.files, ...(clustered ? { remote: (node: string, id: string) => filesLink.at(node, id) } : {}) });
  const fileTransfers = { files, bytesPerSecond: config.files.bytesPerSecond };
  // A recording stays on the node that ran its session; any node answers for it (decisions.md 107).
  const recordingsKeptHere = recordingsHere(recordings);
  const recordingsLink = clustered ? new RecordingsLink({ link, nodeId, here: recordingsKeptHere, store }) : null;
  const recordingsAccess = recordingsLink?.access ?? recordingsKeptHere;
  // Replay links (decisions.md 110): signed with the store's replay secret, so any node opens any node's.
  const replayLinks = new ReplayLinks({ secret: await store.settingOrInsert('replay_link_secret', randomBytes(32).toString('base64url')), shareBase, now, store, recordings: recordingsAccess, retentionDays: recordings.retentionDays });
  const recovered = await sessions.recover();
  const limiter = limitersFor(store);
  const clientAddress = clientAddressResolver(config.trustedProxies);
  // Who drives each session this node runs (issue 36): one seat per session, shared by the channels.
  const { seats: control, passes, calls: controlCalls } = nodeControl({ store, tell: (id) => presence.tell(id), idleSeconds: config.control.idleSeconds, secret, nodeId, ...(clustered ? { cluster: link } : {}) });
  // Programs drive sessions through the automation channel (decisions.md 54); created with the router below.
  let automation: ReturnType<typeof createAutomation> | undefined;
  const api = createApi({
    config, store, accounts, usage, sessions, runtime, now, openapi: () => openApiDocument(url), limiter, clientAddress,
    automation: (account, id, version) => automation!.address(account, id, version),
    webhooks,
    observer: apiObserver(logger, metrics),
    files: fileTransfers,
    recordings: recordingsAccess,
    replayLinks,
    profiles,
    // Decided on the node that runs the session (decisions.md 100): here, or forwarded there.
    control: controlCalls,
  });

  // Every stream of a session is a channel (docs/architecture.md "Channels"), one registration each;
  // the viewer state's flags (`sound`, `video`) follow this order. Sound is offered where it is
  // configured and its programs are installed (decisions.md 53).
  const channels = new ChannelRegistry()
    .register(rfbChannel({ seats: config.viewers, displayLimits: config.display, control }))
    .register(soundChannel({ available: config.sound !== false && probeSound().available }))
    .register(videoChannel({ available: video }))
    .register(automationChannel({ control, programsPerSession: config.automation.programsPerSession, familyOf: (id) => runtime.images.find((image) => image.id === id)?.family }))
    .register(filesChannel({ snapshot: (id) => files.snapshot(id) }))
    .register(editingChannel({ familyOf: (id) => runtime.images.find((image) => image.id === id)?.family }))
    .register(peopleChannel({ seats: control, passes, linkSeats: { control: config.viewers.controlling, view: config.viewers.watching } }));
  for (const channel of options.channels ?? []) channels.register(channel);
  // Every attachment, whatever its channel (and the share API's event streams), passes this door.
  const door = new Door({ perAddress: config.viewers.perAddress, bufferBytes: config.door.bufferMb * 1024 * 1024, heartbeatMs: config.door.heartbeatSeconds * 1000 }, openFiles);
  const router = new ChannelRouter({
    registry: channels,
    nodeId,
    presence,
    door,
    statusChanges: sessions,
    planOf: (row) => sessions.planOf(row),
    endsOf: (id) => sessions.endsOf(id),
    ...(clustered ? { forward: (owner: string, id: string, channel: string, credential: ChannelCredential, seat?: string) => link.openChannel(owner, id, channel, credential, seat) } : {}),
  });
  // The automation secret, like the share-link secret, is the store's: every node checks every node's tokens.
  automation = createAutomation({
    session: (id) => store.session(id),
    image: (id) => runtime.images.find((image) => image.id === id),
    secret: await store.settingOrInsert('automation_secret', randomBytes(32).toString('base64url')),
    tokenSeconds: config.automation.tokenSeconds,
    now,
    base: shareBase,
    router,
    clientAddress,
  });
  const links = new ShareLinks({ store, secret, shareBase });
  // The browser's tabs (issue 36): the runtime's here; another node's through it (decisions.md 117).
  const tabsLink = clustered ? new TabsLink({ link, store, nodeId, here: tabsHere(sessions) }) : null;
  const shareApi = createShareApi({ sessions, links, presence, router, door, frameOrigins: (row) => frameOriginsOf(store, row), ...(tabsLink ? { tabs: tabsLink.access } : {}), eventSeats: { control: 2 * config.viewers.controlling, view: 2 * config.viewers.watching }, limiter, clientAddress, files: fileTransfers, ...(metrics ? { onRateLimited: () => metrics.rateLimited.inc({ limit: 'share_lookup' }) } : {}) });
  const replayApi = createReplayApi({ links: replayLinks, recordings: recordingsAccess, limiter, clientAddress, ...(metrics ? { onRateLimited: () => metrics.rateLimited.inc({ limit: 'replay_lookup' }) } : {}) });
  const site = createViewerSite({ linkStatus: shareApi.linkStatus, replayStatus: replayApi.pageStatus });

  const handle = async (request: IncomingMessage, response: ServerResponse, requestUrl: URL, observed: RequestLog) => {
    if (clustered && ((await link.handle(request, response, requestUrl)) || (await filesLink.handle(request, response, requestUrl)) || (await recordingsLink!.handle(request, response, requestUrl)) || (await tabsLink!.handle(request, response, requestUrl)))) return;
    if (await api(request, response, requestUrl, observed.log)) return;
    // Nothing below reads a request body: one that was sent anyway is read (and dropped) before
    // the answer, so that the client can finish sending and read it (node-body.ts).
    if (await shareApi.transfer(request, response, requestUrl)) return;
    await discardRest(request);
    if (await shareApi.handle(request, response, requestUrl)) return;
    if (await replayApi.handle(request, response, requestUrl)) return;
    if (await site.handle(request, response, requestUrl)) return;
    if (await answerProbe(request, response, requestUrl.pathname, sources)) return;
    sendJson(response, { status: 'denied', message: `no endpoint ${request.method} ${requestUrl.pathname.slice(0, 100)}` }, 404);
  };

  const server = createPublicPort({
    handle,
    logger,
    metrics,
    upgrades: [
      // Another node's forwarded channel connection, its signature checked.
      ...(clustered
        ? [(request: IncomingMessage, socket: Duplex, head: Buffer, requestUrl: URL) => {
            const carried = link.verifyUpgrade(request, requestUrl);
            if (carried) router.openForwarded(request, socket, head, carried);
            return carried !== null;
          }]
        : []),
      (request, socket, head) => shareApi.upgrade(request, socket, head),
      (request, socket, head) => automation!.upgrade(request, socket, head),
    ],
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8640, options.host ?? '127.0.0.1', () => resolveListen());
  });
  const address = server.address() as AddressInfo;
  // Listening on every address (0.0.0.0, ::) gives no address to link to: links then use loopback
  // until the operator sets `shareBase` to the address viewers really reach.
  const reachable = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  url = `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${address.port}`;
  identity.internalUrl = config.node.internalUrl ?? url;
  identity.advertisedUrl = shareBase();
  // The node link is served here, or on the port its internal address names (a mapped port).
  for (const port of [address.port, portOfUrl(identity.internalUrl)]) ownPorts.add(port ?? 0);
  let operator: OperatorListener | null = null;
  try {
    if (metrics) {
      // Default: the public port + 1000 (8640 -> 9640); a public port picked freely (0) picks this one freely too.
      const port = config.operator.port ?? (options.port === 0 ? 0 : address.port + 1000);
      if (port > 65_535) throw new Error(`operator listener: the public port + 1000 is past 65535; set operator.port`);
      operator = await startOperatorListener({ host: config.operator.host, port, metrics, sources, logger });
      ownPorts.add(portOfUrl(operator.url) ?? 0);
    }
  } catch (error) {
    await new Promise<void>((done) => server.close(() => done()));
    await sessions.close();
    await runtime.close();
    await store.close();
    throw error;
  }
  await link.start(sessions, presence);
  await tabsLink?.start();
  sessions.startSweeping();
  webhooks.start();
  logger.info({ address: url, operator: operator?.url ?? null, database: store.dialect, browsers: sources.browsers() }, 'engine listening');
  const stopForgetting = recordings.forgetOldHourly((error) => logger.warn({ err: error }, 'old recordings could not be removed; the next round tries again'));
  return {
    url,
    operatorUrl: operator?.url ?? null,
    ownPorts,
    logger,
    metrics,
    webhooks,
    recordings,
    channels: channels.all().map(({ name, opensWith, needs }) => ({ name, opensWith, messageBytes: needs.messageBytes })),
    runtime,
    store,
    nodeId,
    accounts,
    sessions,
    reaped,
    recovered,
    fetch: inProcessFetch({ api, url: () => url, logger, metrics }),
    async close() {
      stopForgetting();
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
      await operator?.close();
      tabsLink?.close();
      await link.close();
      router.close();
      await webhooks.close();
      await sessions.close();
      await observer.settled();
      await runtime.close();
      // Attachment counts written as the last connections closed reach the store before it closes.
      await presence.settled();
      await store.close();
    },
  };
}
