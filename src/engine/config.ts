// Engine settings: a documented JSON file (docs/operator-cli.md) with defaults that work with no
// file at all, its plans and exit locations among them (plans.ts). Checked with zod so a bad file
// says which setting is wrong; read from a file or an object, and turned into the warm pool's options.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { V6_DEPRECATED_ON } from '../protocol/index.js';
import { parseTrustedProxies } from './http/client-address.js';
import { COUNTRY_TIME_ZONES, DEFAULT_CONFINEMENT, DEFAULT_EGRESS_CONNECTIONS, DEFAULT_SOUND, DEFAULT_VIDEO, parseAllowRanges, type WarmPoolOptions } from './runtime/index.js';
import { DEFAULT_TIMELINE_KB } from './recordings/timeline.js';
import { DEFAULT_DISPLAY_LIMITS, DEFAULT_VIEWER_SEATS } from './channels/rfb/viewer-room.js';
import { DEFAULT_PLANS, locationSchema, planSchema, timeZoneSchema } from './plans.js';

// The plans and exit locations are plans.ts's; they are read here with the rest, and named from here too.
export { DEFAULT_PLANS, type ExitCity, type ExitLocation, type Plan } from './plans.js';

/** The free space, in MB, under which a node records nothing (decisions.md 132): `recordings.freeSpaceFloorMb`'s default. */
export const DEFAULT_FREE_SPACE_FLOOR_MB = 1024;

/** Files in and out of sessions (decisions.md 55-57): on, 256 MB a file and 512 MB a session (inside the 1 GB disk), 32 MiB/s a transfer. */
export const DEFAULT_FILES = { downloads: true, uploads: true, maxFileMb: 256, maxSessionMb: 512, bytesPerSecond: 32 * 1024 * 1024 as number | null };

/** The warm pool's defaults: a small machine's (about five idle Chromium browsers, or two and a Firefox, and a display). */
export const DEFAULT_WARM = { memoryMb: 1024, browsers: null, displays: 1, languages: ['en'], quietMinutes: 10 };

/** A v8 Chromium create without `window` gets an app window (decisions.md 178): the operator may make it a browser window. */
export const DEFAULT_SESSIONS = { defaultWindow: 'app' as 'browser' | 'app' };

/** Saved profiles (decisions.md 85-89): on; 300 MB a profile, forgotten after 30 days unused; a plan's defaults 10 profiles and 1,024 MB. */
export const DEFAULT_PROFILES = { enabled: true, key: null as string | null, maxProfileMb: 300, expireDays: 30 as number | null, planProfiles: 10, planMb: 1024 };

/** The day v6's Sunset header names unless the operator chooses another: a year after its deprecation. */
export const DEFAULT_V6_SUNSET = '2027-11-21';

export const engineConfigSchema = z
  .object({
    plans: z.array(planSchema).min(1).default(DEFAULT_PLANS),
    /**
     * Recordings (issue 35): days one is kept after its session ended, unless its plan says
     * otherwise; the most a timeline keeps, in KiB (decisions.md 127); the free space, in MB, under
     * which the node records nothing (decisions.md 132).
     */
    recordings: z
      .object({
        retentionDays: z.number().int().min(1).max(3650).default(30),
        timelineKb: z.number().int().min(16).max(65_536).default(DEFAULT_TIMELINE_KB),
        freeSpaceFloorMb: z.number().int().min(0).max(1_000_000_000).default(DEFAULT_FREE_SPACE_FLOOR_MB),
      })
      .default({ retentionDays: 30, timelineKb: DEFAULT_TIMELINE_KB, freeSpaceFloorMb: DEFAULT_FREE_SPACE_FLOOR_MB }),
    rateLimit: z.object({ requests: z.number().int().positive(), perSeconds: z.number().positive() }).default({ requests: 120, perSeconds: 60 }),
    egress: z
      .object({
        allow: z.array(z.string()).default([]),
        /** What one session may make the engine hold through its egress route (decisions.md 48). */
        connections: z
          .object({
            perSession: z.number().int().min(1).max(65_536).default(DEFAULT_EGRESS_CONNECTIONS.perSession),
            firstBytesMs: z.number().int().min(100).max(600_000).default(DEFAULT_EGRESS_CONNECTIONS.firstBytesMs),
          })
          .default(DEFAULT_EGRESS_CONNECTIONS),
      })
      .default({ allow: [], connections: DEFAULT_EGRESS_CONNECTIONS }),
    /** Seats for a session's viewers: the share link's and the view-only link's, and per client address (decisions.md 47). */
    viewers: z
      .object({
        controlling: z.number().int().min(1).max(1000).default(DEFAULT_VIEWER_SEATS.controlling),
        watching: z.number().int().min(0).max(1000).default(DEFAULT_VIEWER_SEATS.watching),
        perAddress: z.number().int().min(1).max(100_000).default(DEFAULT_VIEWER_SEATS.perAddress),
      })
      .default(DEFAULT_VIEWER_SEATS),
    /** What the door lets one attachment hold (decisions.md 123): bytes queued toward a reader that does not read; how often a peer is pinged (cut off when silent for one period). */
    door: z.object({ bufferMb: z.number().int().min(1).max(1024).default(32), heartbeatSeconds: z.number().int().min(1).max(300).default(30) }).default({ bufferMb: 32, heartbeatSeconds: 30 }),
    /** Open files the engine keeps for its own work whatever sessions and viewers open; null: a tenth of its limit, at least 256 (decisions.md 48). */
    openFiles: z.object({ reserve: z.number().int().min(0).nullable().default(null) }).default({ reserve: null }),
    shareBase: z.string().url().nullable().default(null),
    locations: z.array(locationSchema).default([]),
    residential: z
      .object({ upstream: z.string().url().nullable().default(null), countries: z.array(z.string()).nullable().default(null) })
      .default({ upstream: null, countries: null }),
    /** The sizes a viewer may give a session's display (the display follows the controlling viewer's area). */
    display: z
      .object({
        minWidth: z.number().int().min(200).max(8192).default(DEFAULT_DISPLAY_LIMITS.minWidth),
        minHeight: z.number().int().min(200).max(8192).default(DEFAULT_DISPLAY_LIMITS.minHeight),
        maxWidth: z.number().int().min(200).max(8192).default(DEFAULT_DISPLAY_LIMITS.maxWidth),
        maxHeight: z.number().int().min(200).max(8192).default(DEFAULT_DISPLAY_LIMITS.maxHeight),
      })
      .default(DEFAULT_DISPLAY_LIMITS)
      .refine((d) => d.minWidth <= d.maxWidth && d.minHeight <= d.maxHeight, 'the minimum must not be above the maximum'),
    /** The time zone of sessions without an exit location (and of v7 sessions whose location was not applied). */
    timeZone: timeZoneSchema.default('UTC'),
    /**
     * The warm pool (decisions.md 63, 64): ready browsers per session language, sized by the recent
     * creates under `memoryMb`, kept one each for `languages` even when quiet; ready displays for
     * sessions no warm browser fits. `memoryMb: 0` turns warm browsers off.
     */
    warm: z
      .object({
        memoryMb: z.number().int().min(0).default(DEFAULT_WARM.memoryMb),
        /** At most this many warm browsers; null: as many as the budget holds. */
        browsers: z.number().int().min(0).nullable().default(DEFAULT_WARM.browsers),
        displays: z.number().int().min(0).default(DEFAULT_WARM.displays),
        /** Session languages kept warm even when no session asked for them lately. */
        languages: z.array(z.string().regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/, 'must be a language tag such as en or pt-BR')).default(DEFAULT_WARM.languages),
        /** A language learned from creates is let go after this many minutes without one. */
        quietMinutes: z.number().positive().max(10_080).default(DEFAULT_WARM.quietMinutes),
      })
      .default(DEFAULT_WARM),
    /** Every session's caps and uid range (docs/security.md). */
    confinement: z
      .object({
        memoryMb: z.number().int().min(256).default(DEFAULT_CONFINEMENT.memoryMb),
        processes: z.number().int().min(64).default(DEFAULT_CONFINEMENT.processes),
        cpus: z.number().min(0.1).max(256).nullable().default(DEFAULT_CONFINEMENT.cpus),
        diskMb: z.number().int().min(16).default(DEFAULT_CONFINEMENT.diskMb),
        uids: z
          .object({ first: z.number().int().min(1000).max(4_000_000_000), count: z.number().int().min(1).max(1_000_000) })
          .default(DEFAULT_CONFINEMENT.uids),
      })
      .default(DEFAULT_CONFINEMENT),
    /**
     * Each session's sound (decisions.md 53): a sound server inside the session and an Opus encoder
     * while someone listens, at `bitrateKbps`; false runs no sound process at all. While only
     * recordings listen and nothing plays, the encoder rests (`pauseWhenSilent`, decisions.md 119).
     */
    sound: z
      .union([z.literal(false), z.object({ bitrateKbps: z.number().int().min(6).max(510).default(DEFAULT_SOUND.bitrateKbps), pauseWhenSilent: z.boolean().default(DEFAULT_SOUND.pauseWhenSilent) })])
      .default(DEFAULT_SOUND),
    /**
     * The display's motion as video (issue 25, decisions.md 65-70; on by default, decision 71): a
     * viewer in a browser with WebCodecs switches to an H.264 stream of the display while motion
     * lasts, encoded in the session only then; `false` offers no video (every viewer gets the RFB
     * stream alone).
     */
    video: z
      .union([
        z.literal(false),
        z.object({
          bitrateKbps: z.number().int().min(200).max(20_000).default(DEFAULT_VIDEO.bitrateKbps),
          fps: z.number().int().min(5).max(60).default(DEFAULT_VIDEO.fps),
          keyFrameSeconds: z.number().min(0.5).max(10).default(DEFAULT_VIDEO.keyFrameSeconds),
          dropUnchanged: z.boolean().default(DEFAULT_VIDEO.dropUnchanged),
          pauseWhenStill: z.boolean().default(DEFAULT_VIDEO.pauseWhenStill),
        }),
      ])
      .default(DEFAULT_VIDEO),
    /**
     * Programs driving sessions over DevTools (decisions.md 54): how long an automation address's
     * token is good for, and how many programs may drive one session at once.
     */
    automation: z
      .object({
        tokenSeconds: z.number().int().min(1).max(86_400).default(600),
        programsPerSession: z.number().int().min(1).max(64).default(4),
      })
      .default({ tokenSeconds: 600, programsPerSession: 4 }),
    /**
     * One driver at a time (issue 36, decisions.md 99): how long a driver may give no input
     * before a waiting request for control passes it on.
     */
    control: z
      .object({ idleSeconds: z.number().int().min(1).max(3600).default(30) })
      .default({ idleSeconds: 30 }),
    /**
     * Standby (issue 46, decisions.md 141): a running session with nothing attached (no viewer,
     * listener, watcher or program, no files or tabs call under way) and not recorded has its whole
     * process tree frozen after this many seconds; the first attachment thaws it. 0 or false: never.
     * A plan's `standby_after_seconds` overrides it. `hibernateAfterMinutes` (decisions.md 165): a
     * session in standby that long is hibernated (its state sealed in the store, its processes
     * ended; the first attachment resumes it); 0 or false: never; a plan's
     * `standby_hibernate_after_minutes` overrides it.
     */
    standby: z
      .object({
        afterSeconds: z.union([z.number().int().min(0).max(86_400), z.literal(false)]).default(10),
        hibernateAfterMinutes: z.union([z.number().min(0).max(10_080), z.literal(false)]).default(10),
      })
      .default({ afterSeconds: 10, hibernateAfterMinutes: 10 }),
    /**
     * What a v8 create that does not say `window` gets (decisions.md 176, 178): `app` (the
     * default), the page filling the display and the tabs in the viewer's strip, or `browser`, the
     * browser's own window with its tab strip and address bar. Chromium sessions only: a Firefox ESR session
     * keeps a browser window unless its create asks for `app`, since its app window runs the remote
     * agent, which pages see (navigator.webdriver, decisions.md 103). v7 and v6 creates, which have
     * no `window`, keep a browser window.
     */
    sessions: z
      .object({ defaultWindow: z.enum(['browser', 'app'], 'must be browser or app').default(DEFAULT_SESSIONS.defaultWindow) })
      .default(DEFAULT_SESSIONS),
    /**
     * Files in and out of sessions (decisions.md 55-57): whether downloads are handed out and
     * uploads taken at all, the caps on uploads (one file, and a session's uploads together; they
     * must fit in `confinement.diskMb`), and the pace of each transfer (bytes a second; null: as
     * fast as it goes).
     */
    files: z
      .object({
        downloads: z.boolean().default(DEFAULT_FILES.downloads),
        uploads: z.boolean().default(DEFAULT_FILES.uploads),
        maxFileMb: z.number().int().min(1).default(DEFAULT_FILES.maxFileMb),
        maxSessionMb: z.number().int().min(1).default(DEFAULT_FILES.maxSessionMb),
        bytesPerSecond: z.number().int().min(65_536).nullable().default(DEFAULT_FILES.bytesPerSecond),
      })
      .default(DEFAULT_FILES)
      .refine((f) => f.maxFileMb <= f.maxSessionMb, { message: 'maxFileMb must not be above maxSessionMb', path: ['maxFileMb'] }),
    /**
     * Saved profiles (decisions.md 85-89): whether offered at all, the key they are encrypted under
     * (32 bytes, base64 or hex; else RBK_PROFILE_KEY; else, on SQLite only, one made in the data
     * directory), one profile's cap, and how many days unused before one is forgotten (null: never).
     */
    profiles: z
      .object({
        enabled: z.boolean().default(DEFAULT_PROFILES.enabled),
        key: z.string().nullable().default(DEFAULT_PROFILES.key),
        maxProfileMb: z.number().int().min(1).max(4096).default(DEFAULT_PROFILES.maxProfileMb),
        expireDays: z.number().positive().nullable().default(DEFAULT_PROFILES.expireDays),
      })
      .default({ enabled: DEFAULT_PROFILES.enabled, key: DEFAULT_PROFILES.key, maxProfileMb: DEFAULT_PROFILES.maxProfileMb, expireDays: DEFAULT_PROFILES.expireDays }),
    /** The deprecated v6 interface: the day its answers' Sunset header names (decisions.md 35). */
    v6: z
      .object({ sunset: z.iso.date('must be a date of the form YYYY-MM-DD').default(DEFAULT_V6_SUNSET) })
      .default({ sunset: DEFAULT_V6_SUNSET }),
    /**
     * Where state lives: null = SQLite in the data directory (one machine); a postgres:// URL = a
     * Postgres database that several nodes share (docs/deployment.md). `--database` overrides it.
     */
    database: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL, or null for SQLite in the data directory')
      .nullable()
      .default(null),
    /**
     * Reverse proxies and load balancers in front of the engine (addresses or ranges): only from
     * them is X-Forwarded-For believed, for the client address that look-up limits count by.
     */
    trustedProxies: z
      .array(z.string())
      .default([])
      .superRefine((ranges, context) => {
        try {
          parseTrustedProxies(ranges);
        } catch (error) {
          context.addIssue({ code: 'custom', message: (error as Error).message.replace(/^trustedProxies: /, '') });
        }
      }),
    /** This engine as a node of a cluster (docs/deployment.md). */
    node: z
      .object({
        /** Stable id; default: one made at the first start and kept in the data directory. */
        id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, ".", "_" and "-", at most 64').nullable().default(null),
        /** How other nodes reach this one (node-to-node calls); default: the address it listens on. */
        internalUrl: z.string().url().nullable().default(null),
        /** Sessions this node runs at once (starting or running); null = no limit. */
        capacity: z.number().int().min(0).nullable().default(null),
      })
      .default({ id: null, internalUrl: null, capacity: null }),
    cluster: z
      .object({
        /** The secret every node of a cluster shares: node-to-node calls carry proof of it. */
        secret: z.string().min(32, 'must be at least 32 characters').nullable().default(null),
        /** How often a node says it is alive, and after how long without a word it counts as lost. */
        heartbeatMs: z.number().int().min(100).max(60_000).default(2000),
        lostAfterMs: z.number().int().min(500).max(600_000).default(6000),
      })
      .default({ secret: null, heartbeatMs: 2000, lostAfterMs: 6000 }),
    /**
     * The operator listener (decisions.md 60): /metrics, /readyz and /healthz on an address of their
     * own, loopback by default. `port` null: the public port + 1000 (8640 -> 9640; a public port 0
     * picks a free one here too). `metrics: false` records nothing and opens no listener.
     */
    operator: z
      .object({
        host: z.string().min(1).default('127.0.0.1'),
        port: z.number().int().min(0).max(65_535).nullable().default(null),
        metrics: z.boolean().default(true),
      })
      .default({ host: '127.0.0.1', port: null, metrics: true }),
    /** Structured logs (pino) on stderr: JSON lines, or readable lines when `pretty` (null: `RBK_LOG_PRETTY`, else when stderr is a terminal). */
    log: z
      .object({
        level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
        pretty: z.boolean().nullable().default(null),
      })
      .default({ level: 'info', pretty: null }),
    /**
     * Session webhooks (decisions.md 61): private ranges receivers may be at (none by default, as
     * for sessions' egress), plain http receivers, the retry schedule: the first retry after
     * `firstRetryMs`, each next one three times later (at most an hour apart), for `retryForMs`;
     * and `timeoutMs`, the deadline of a whole attempt (name check, connection, headers, body:
     * decisions.md 76).
     */
    webhooks: z
      .object({
        allow: z
          .array(z.string())
          .default([])
          .superRefine((ranges, context) => {
            try {
              parseAllowRanges(ranges);
            } catch (error) {
              context.addIssue({ code: 'custom', message: (error as Error).message.replace(/^remote-browser-kit egress: /, '') });
            }
          }),
        allowHttp: z.boolean().default(false),
        firstRetryMs: z.number().int().min(100).max(3_600_000).default(10_000),
        retryForMs: z.number().int().min(1000).max(7 * 86_400_000).default(86_400_000),
        timeoutMs: z.number().int().min(100).max(60_000).default(10_000),
      })
      .default({ allow: [], allowHttp: false, firstRetryMs: 10_000, retryForMs: 86_400_000, timeoutMs: 10_000 }),
    /** Settings that take protection away; each one is logged loudly at start. */
    insecure: z
      .object({
        /** Sessions run as the engine's own user, on the host's files and network: anyone with a share link can reach the host. */
        unconfined: z.boolean().default(false),
      })
      .default({ unconfined: false }),
  })
  .superRefine((config, context) => {
    const ids = new Set<string>();
    for (const plan of config.plans) {
      if (ids.has(plan.id)) context.addIssue({ code: 'custom', path: ['plans'], message: `plan id "${plan.id}" appears twice` });
      ids.add(plan.id);
    }
    if (config.cluster.lostAfterMs < 2 * config.cluster.heartbeatMs) {
      context.addIssue({ code: 'custom', path: ['cluster', 'lostAfterMs'], message: 'must be at least twice cluster.heartbeatMs' });
    }
    // Every exit city keeps a zone: its own, its country's, or the one that dominates its country.
    config.locations.forEach((location, i) => {
      location.cities.forEach((city, j) => {
        if (city.timeZone ?? location.timeZone ?? COUNTRY_TIME_ZONES[location.code.toLowerCase()]) return;
        context.addIssue({
          code: 'custom',
          path: ['locations', i, 'cities', j, 'timeZone'],
          message: `required: "${location.code}" has no single time zone; give ${city.code}'s IANA zone (for example America/Chicago), or the location's timeZone`,
        });
      });
    });
    if (config.files.maxSessionMb >= config.confinement.diskMb) {
      context.addIssue({ code: 'custom', path: ['files', 'maxSessionMb'], message: `must be below confinement.diskMb (${config.confinement.diskMb}): uploads share the session's disk with its browser` });
    }
    if (config.v6.sunset < V6_DEPRECATED_ON) {
      context.addIssue({ code: 'custom', path: ['v6', 'sunset'], message: `must not be before ${V6_DEPRECATED_ON}, the day v6 was deprecated` });
    }
  });
export type EngineConfig = z.infer<typeof engineConfigSchema>;
/** What a caller may write (a configuration file, createEngine's `config`): defaults fill what is left out. */
export type EngineConfigInput = z.input<typeof engineConfigSchema>;

export function parseEngineConfig(input: unknown, source = 'the configuration'): EngineConfig {
  const result = engineConfigSchema.safeParse(input ?? {});
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new Error(`${source}: ${issue.path.join('.') || '(top level)'}: ${issue.message}`);
  }
  return result.data;
}

export async function loadEngineConfig(file?: string): Promise<EngineConfig> {
  if (!file) return parseEngineConfig({});
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the configuration file ${file}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`the configuration file ${file} is not valid JSON: ${(error as Error).message}`);
  }
  return parseEngineConfig(json, file);
}

/**
 * The runtime's warm pool from the configuration: Chromium browsers by demand, and ready displays,
 * frozen while they wait when standby is on (issue 46).
 */
export function warmPoolOptions(config: EngineConfig): WarmPoolOptions | undefined {
  const { memoryMb, browsers, displays, languages, quietMinutes } = config.warm;
  if (memoryMb === 0 && displays === 0) return undefined;
  const demand = memoryMb > 0 && browsers !== 0
    ? { memoryMb, maxBrowsers: browsers, kept: languages.map((language) => ({ browser: 'chromium', language })), quietMs: quietMinutes * 60_000 }
    : undefined;
  const freeze = config.standby.afterSeconds !== false && config.standby.afterSeconds > 0;
  return { displays, ...(demand ? { demand } : {}), ...(freeze ? { freeze } : {}) };
}
