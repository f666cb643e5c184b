// The engine core (docs/architecture.md "Features"): what every feature stands on. Its settings,
// log, database and accounts, the runtime that starts sessions, the node link, who is attached
// (presence), meters and limits; then, given the features the sessions need (profiles and
// recordings), the session service, the channel registry, the door and the router. The features
// themselves are modules (module.ts) that engine.ts lists. Each part opened here is closed, last
// first, by `close()`, also when opening fails part way.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join, resolve } from 'node:path';
import type { Accounts } from './accounts/accounts.js';
import { AccountUsage } from './accounts/usage.js';
import { ChannelRegistry } from './channels/registry.js';
import { Door } from './channels/door.js';
import { Presence } from './channels/presence.js';
import { ChannelRouter } from './channels/router.js';
import type { ChannelCredential } from './channels/channel.js';
import { NodeLink, type NodeIdentity } from './cluster/node-link.js';
import { parseEngineConfig, warmPoolOptions, type EngineConfig, type Plan } from './config.js';
import { nodeIdOf, openDataDirectory } from './data-directory.js';
import type { Channel } from './channels/channel.js';
import type { EngineConfigInput } from './config.js';
import type { EngineModule } from './module.js';
import { clientAddressResolver } from './http/client-address.js';
import { limitersFor } from './http/limits.js';
import { OpenFiles } from './limits/open-files.js';
import { createLogger, type Logger } from './operations/logger.js';
import { EngineMetrics } from './operations/metrics.js';
import { DEFAULT_VIDEO, EnginePorts, probeVideo, type ReapReport, SessionRuntime } from './runtime/index.js';
import type { EngineRuntime } from './sessions/node-runtime.js';
import { SessionService, type SessionServiceOptions } from './sessions/service.js';
import type { SessionRow, Store } from './store/store.js';
import type { Recordings } from './recordings/recordings.js';
import type { SessionWebhooks } from './webhooks/webhooks.js';

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
  /** Features run after the engine's own (module.ts), in this order; a test's feature is one. */
  modules?: readonly EngineModule[];
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

/** What every feature stands on, before the sessions. */
export interface EngineBase {
  readonly config: EngineConfig;
  readonly dataDir: string;
  /** The engine's clock (tests move it). */
  readonly now: () => number;
  readonly nodeId: string;
  readonly logger: Logger;
  readonly store: Store;
  readonly accounts: Accounts;
  /** A node of a cluster (a Postgres database): nodes reach each other through the node link. */
  readonly clustered: boolean;
  readonly openFiles: OpenFiles;
  /** The share-link secret, the store's: every node checks every node's links. */
  readonly secret: string;
  readonly runtime: EngineRuntime;
  readonly reaped: ReapReport;
  /** Whether this host's ffmpeg grabs X and encodes H.264 (decisions.md 65), where video is configured. */
  readonly video: boolean;
  /** The ports this engine listens on, which no session reaches (decisions.md 120). */
  readonly ownPorts: EnginePorts;
  readonly identity: NodeIdentity;
  readonly link: NodeLink;
  readonly presence: Presence;
  readonly metrics: EngineMetrics | null;
  readonly usage: AccountUsage;
  readonly limiter: ReturnType<typeof limitersFor>;
  readonly clientAddress: (request: IncomingMessage) => string;
  /** This engine's own address once it listens ('' before). */
  url(): string;
  /** Where links (share, replay, automation) point: the configured share base, else `url()`. */
  shareBase(): string;
  /** The plan a session takes its slot from, as configured now (undefined: no longer configured). */
  planOf(row: SessionRow): Promise<Plan | undefined>;
  /** A secret the store keeps for every node (made once, on first use). */
  storedSecret(name: string): Promise<string>;
}

/** The core: the base, and the sessions with the registry, door and router that serve their channels. */
export interface EngineCore extends EngineBase {
  readonly sessions: SessionService;
  readonly channels: ChannelRegistry;
  readonly door: Door;
  readonly router: ChannelRouter;
}

/** What the sessions take from features made before them. */
export type SessionFeatures = Required<Pick<SessionServiceOptions, 'profiles' | 'recording' | 'recordingCaps'>>;

/** The base, with the URL it listens on set once, and its parts closed last first. */
export type OpenedBase = EngineBase & { listening(url: string): void; close(): Promise<void> };

export async function openBase(options: EngineOptions): Promise<OpenedBase> {
  const config = parseEngineConfig(options.config ?? {});
  const dataDir = resolve(options.dataDir ?? '.data');
  const now = options.now ?? Date.now;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const nodeId = nodeIdOf(dataDir, config);
  const logger = createLogger(config.log, options.logDestination, { node: nodeId });
  const { store, accounts } = await openDataDirectory(dataDir, config, now, options.database ?? config.database, (message) => logger.warn(message));
  // What is open so far, closed in this order: the node link, the runtime, the attachment counts
  // still being written (they reach the store before it closes), the store.
  let runtime: EngineRuntime | undefined;
  let link: NodeLink | undefined;
  let presence: Presence | undefined;
  const close = async () => {
    await link?.close();
    await runtime?.close();
    await presence?.settled();
    await store.close();
  };
  try {
    const clustered = store.dialect === 'postgres';
    if (clustered && !config.cluster.secret) {
      throw new Error('cluster.secret: a Postgres database makes this engine a node of a cluster; set the same secret (at least 32 characters) on every node (docs/deployment.md)');
    }
    const openFiles = new OpenFiles({ reserve: config.openFiles.reserve });
    const storedSecret = (name: string) => store.settingOrInsert(name, randomBytes(32).toString('base64url'));
    const secret = await storedSecret('share_link_secret');
    if (config.insecure.unconfined) {
      logger.warn('INSECURE: insecure.unconfined is set. Sessions run as this engine\'s own user with its files and network: anyone holding a share link can read and write what this engine can. Never use this where strangers get links.');
    }
    const video = config.video !== false && (await probeVideo()).available;
    const ownPorts = new EnginePorts(); // filled as each listener listens: a port 0 is known only then
    const warm = warmPoolOptions(config);
    let reaped: ReapReport;
    ({ runtime, reaped } = options.runtime ? { runtime: options.runtime, reaped: { processes: 0, directories: 0 } } : await SessionRuntime.open({
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
    }));
    const opened = runtime;
    let url = '';
    const shareBase = () => config.shareBase ?? url;
    // On one machine the link only registers the node (capacity, `nodes list`); in a cluster it is
    // also how nodes reach each other.
    const identity: NodeIdentity = { id: nodeId, internalUrl: '', advertisedUrl: '', capacity: config.node.capacity, browsers: opened.images.filter((i) => i.enabled).map((i) => i.id), warm: () => opened.warmStats().browsers.map((b) => `${b.browser} ${b.language}`) };
    const linked = (link = new NodeLink({ store, node: identity, secret: config.cluster.secret ?? randomBytes(32).toString('hex'), heartbeatMs: config.cluster.heartbeatMs, lostAfterMs: config.cluster.lostAfterMs, now: Date.now, watchOthers: clustered, logger }));
    // Who is attached to each session, for the viewer count and the idle sweep; counts written as
    // the last connections close reach the store before it closes.
    const attached = (presence = new Presence({ record: (id, fields) => store.updateSession(id, fields), now, ...(clustered ? { announce: (id: string) => linked.announceViewers(id) } : {}) }));
    const metrics = config.operator.metrics
      ? new EngineMetrics(nodeId, {
          sessions: () => store.sessionCountsOfNode(nodeId),
          attachments: () => attached.totals(),
          capacity: () => config.node.capacity,
          nodeState: async () => (await store.node(nodeId))?.state,
          warm: () => ({ ...opened.warmCount(), memoryMb: opened.warmStats().memoryMb }),
        })
      : null;
    // An account's pools, meters and programmatic access: the API's usage answers and the create's quota.
    const usage = new AccountUsage({ store, plan: (id) => accounts.plan(id), now });
    return {
      config, dataDir, now, nodeId, logger, store, accounts, clustered, openFiles, secret, runtime: opened, reaped, video, ownPorts, identity, link: linked, presence: attached, metrics,
      usage,
      limiter: limitersFor(store),
      clientAddress: clientAddressResolver(config.trustedProxies),
      url: () => url,
      shareBase,
      planOf: (row) => usage.planOf(row),
      storedSecret,
      listening(at) {
        url = at;
        identity.internalUrl = config.node.internalUrl ?? url;
        identity.advertisedUrl = shareBase();
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The sessions on the base, and the registry, door and router their channels are served by. */
export function openSessions(base: EngineBase, features: SessionFeatures): EngineCore & { close(): Promise<void> } {
  const { config, clustered, link, metrics } = base;
  const sessions = new SessionService({
    usage: base.usage,
    profiles: features.profiles,
    ...(metrics ? { onBytes: (egress: number, residential: number) => (metrics.egressBytes.inc(egress), metrics.residentialBytes.inc(residential)) } : {}),
    ...(metrics ? { onWake: (outcome: 'woken' | 'failed') => metrics.standbyWakes.inc({ outcome }) } : {}),
    ...(metrics ? { onResume: (outcome: 'resumed' | 'failed', ms: number) => (metrics.hibernationResumes.inc({ outcome }), outcome === 'resumed' && metrics.resumeSeconds.observe(ms / 1000)) } : {}),
    store: base.store,
    presence: base.presence,
    accounts: base.accounts,
    config,
    runtime: base.runtime,
    now: base.now,
    secret: base.secret,
    nodeId: base.nodeId,
    ...(clustered ? { cluster: link } : {}),
    shareBase: base.shareBase,
    recording: features.recording,
    recordingCaps: features.recordingCaps,
  });
  // Hibernated sessions are nobody's: every node reports the cluster's count (decisions.md 168).
  metrics?.addGauge({ name: 'rbk_sessions_hibernated', help: "The service's hibernated sessions now (their state saved, no processes; every node reports the same count)", read: async () => (await base.store.hibernatedSessions()).length });
  metrics?.addGauge({ name: 'rbk_sessions_standby', help: "This node's running sessions in standby now (their processes frozen)", read: async () => sessions.standby.count() });
  // Every stream of a session is a channel (docs/architecture.md "Channels"), registered by the
  // features; every attachment, whatever its channel (and the share API's event streams), passes the door.
  const channels = new ChannelRegistry();
  const door = new Door({ perAddress: config.viewers.perAddress, bufferBytes: config.door.bufferMb * 1024 * 1024, heartbeatMs: config.door.heartbeatSeconds * 1000 }, base.openFiles);
  const router = new ChannelRouter({
    registry: channels,
    nodeId: base.nodeId,
    presence: base.presence,
    door,
    statusChanges: sessions,
    planOf: base.planOf,
    endsOf: (id) => sessions.endsOf(id),
    wake: (id) => sessions.wake(id),
    ...(clustered ? { forward: (owner: string, id: string, channel: string, credential: ChannelCredential, viewerKey?: string) => link.openChannel(owner, id, channel, credential, viewerKey) } : {}),
  });
  return {
    ...base,
    sessions,
    channels,
    door,
    router,
    async close() {
      router.close();
      await sessions.close();
    },
  };
}
