// What the configuration offers accounts and their sessions beyond the engine's settings (config.ts
// reads them with the rest): the plans an account may hold, what each allows (sessions, minutes,
// sound, files, recordings, profiles, standby) with the plans an engine has when none are given,
// and the exit locations (countries and cities, each with its upstream and time zone) sessions
// may go out through.
import { z } from 'zod';
import { isTimeZone } from './runtime/index.js';

/** An IANA time zone name (decisions.md 43). */
export const timeZoneSchema = z.string().refine(isTimeZone, 'must be an IANA time zone name, for example Europe/Berlin or UTC');

export const planSchema = z.object({
  id: z.string().min(1).max(64),
  name: z.string().min(1).max(200),
  running_session_limit: z.number().int().min(0),
  cycle_session_limit: z.number().int().min(0).nullable(),
  residential_cycle_mb_limit: z.number().int().min(0).nullable(),
  location_access: z.boolean(),
  programmatic_access: z.boolean(),
  max_session_minutes: z.number().positive(),
  idle_timeout_minutes: z.number().positive(),
  /** Whether viewers of the plan's sessions may hear them (decisions.md 53); on unless a plan says false. */
  sound: z.boolean().default(true),
  /** Whether the plan's sessions hand out what their browser downloaded (decisions.md 56); on unless a plan says false. */
  downloads: z.boolean().default(true),
  /** Whether files may be given to the plan's sessions (decisions.md 56); on unless a plan says false. */
  uploads: z.boolean().default(true),
  /** Whether the plan's sessions may be recorded (`record: true` at create, issue 35); off unless a plan says true. */
  recording: z.boolean().default(false),
  /** Days a recording of the plan's sessions is kept after the session ended; default the service's `recordings.retentionDays`. */
  recording_days: z.number().int().min(1).max(3650).optional(),
  /** Whether the plan's recordings keep whole web addresses in their timeline (queries and fragments, where sign-in links and tokens live); off: origin and path only (decisions.md 127). */
  recording_full_urls: z.boolean().optional(),
  /**
   * The most megabytes the account's recordings keep together (`recording_mb_kept`, every node's;
   * decisions.md 131): past it the recording running stops and `record: true` creates are denied
   * until recordings are removed. Absent or null: no cap.
   */
  recording_mb_limit: z.number().int().min(0).nullable().optional(),
  /** The longest one recording runs, in minutes: then it stops, the session runs on (decisions.md 131). Absent or null: the session's own length. */
  recording_minutes_limit: z.number().int().min(1).nullable().optional(),
  /** Saved profiles (decisions.md 87): on unless a plan says false; how many, and their megabytes together (null: no cap). */
  profiles: z.boolean().optional(),
  profile_limit: z.number().int().min(0).nullable().optional(),
  profile_mb_limit: z.number().int().min(0).nullable().optional(),
  /** Seconds with nothing attached before the plan's sessions go into standby (issue 46, decisions.md 141); 0 or false: never. Default the service's `standby.afterSeconds`. */
  standby_after_seconds: z.union([z.number().int().min(0).max(86_400), z.literal(false)]).optional(),
  /** Minutes in standby before the plan's sessions are hibernated (decisions.md 165); 0 or false: never. Default the service's `standby.hibernateAfterMinutes`. */
  standby_hibernate_after_minutes: z.union([z.number().int().min(0).max(10_080), z.literal(false)]).optional(),
  /** Whether the plan's hibernated sessions fill its `running_session_limit` (decisions.md 167); default true. */
  hibernated_count_running: z.boolean().optional(),
});
export type Plan = z.infer<typeof planSchema>;

const citySchema = z.object({
  code: z.string().min(1),
  location: z.string().min(1),
  /** Upstream proxy that exits in this city; without one the city cannot take sessions. */
  upstream: z.string().url().nullable().default(null),
  /** Sessions this exit can carry at once. */
  capacity: z.number().int().min(0).default(10),
  /** The zone sessions through this exit keep; default the country's. */
  timeZone: timeZoneSchema.optional(),
});

export const locationSchema = z.object({
  code: z.string().min(1),
  name: z.string().min(1),
  default: z.string().min(1),
  /** The country's zone, for its cities that name none; default from its code where one zone dominates. */
  timeZone: timeZoneSchema.optional(),
  cities: z.array(citySchema).min(1),
});
export type ExitLocation = z.infer<typeof locationSchema>;
export type ExitCity = z.infer<typeof citySchema>;

export const DEFAULT_PLANS: Plan[] = [
  { id: 'free', name: 'Free', running_session_limit: 1, cycle_session_limit: 30, residential_cycle_mb_limit: null, location_access: false, programmatic_access: true, max_session_minutes: 120, idle_timeout_minutes: 15, sound: true, downloads: true, uploads: true, recording: false },
  { id: 'pro', name: 'Pro', running_session_limit: 5, cycle_session_limit: 1000, residential_cycle_mb_limit: 1024, location_access: true, programmatic_access: true, max_session_minutes: 480, idle_timeout_minutes: 30, sound: true, downloads: true, uploads: true, recording: false },
  { id: 'team', name: 'Team', running_session_limit: 20, cycle_session_limit: 10000, residential_cycle_mb_limit: 10240, location_access: true, programmatic_access: true, max_session_minutes: 1440, idle_timeout_minutes: 60, sound: true, downloads: true, uploads: true, recording: false },
  { id: 'unlimited', name: 'Unlimited', running_session_limit: 50, cycle_session_limit: null, residential_cycle_mb_limit: 102400, location_access: true, programmatic_access: true, max_session_minutes: 1440, idle_timeout_minutes: 60, sound: true, downloads: true, uploads: true, recording: false },
  { id: 'viewer', name: 'Viewer (no API)', running_session_limit: 1, cycle_session_limit: 30, residential_cycle_mb_limit: null, location_access: false, programmatic_access: false, max_session_minutes: 60, idle_timeout_minutes: 15, sound: true, downloads: true, uploads: true, recording: false },
];
