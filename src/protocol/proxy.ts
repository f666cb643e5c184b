// The proxy route's wire as plain data and types: its paths, its idempotency header and the
// answers the browser reads. Shared by the route (src/server) and its browser-side client
// (src/core), which must not pull in the schema library; reached through those two entries.
import type { CreateResponse, SessionEntry } from './v8.js';
import type { Profile } from './profiles.js';
import type { RecordingInfo } from './recordings.js';

/** The route's paths under its base path. */
export const PROXY_PATHS = {
  images: '/images',
  sessions: '/sessions',
  session: (handle: string) => `/sessions/${encodeURIComponent(handle)}`,
  /** A session's files (issue 23): the list, one file's download, an upload. */
  files: (handle: string) => `/sessions/${encodeURIComponent(handle)}/files`,
  fileDownload: (handle: string, name: string) => `/sessions/${encodeURIComponent(handle)}/files/download?name=${encodeURIComponent(name)}`,
  usage: '/usage',
  /** The signed-in user's saved profiles (issue 34): list and create; one by its handle: rename (POST) and remove (DELETE). */
  profiles: '/profiles',
  profile: (handle: string) => `/profiles/${encodeURIComponent(handle)}`,
  /** A session's recording (issue 35): its description and timeline (GET), its removal (DELETE), and its MP4. */
  recording: (handle: string) => `/sessions/${encodeURIComponent(handle)}/recording`,
  recordingMedia: (handle: string) => `/sessions/${encodeURIComponent(handle)}/recording/media`,
  /** A replay link to it (POST; decisions.md 110): signed and expiring, for people outside the app. */
  recordingLink: (handle: string) => `/sessions/${encodeURIComponent(handle)}/recording/link`,
  /** The origins that may frame the account's share links (issue 44): read (GET) and set (POST), for the users `policy.embed` allows. */
  embed: '/embed',
} as const;

/** The header a browser sends with create so that a retried launch starts no second session. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** Reasons of the route's own `insecure` answers (next to the service's `rate_limited`). */
export const PROXY_INSECURE_REASONS = ['cross_site', 'content_type', 'rate_limited'] as const;

/** POST /sessions: the service's create answer with the session's handle instead of its vmId. */
export type ProxyCreateResponse = Omit<CreateResponse, 'vmId'> & { handle: string };

/** A session as the browser sees it: the service's entry with the handle in place of the masked id. */
export type ProxySession = Omit<SessionEntry, 'id'> & { handle: string };

/**
 * A saved profile as the browser sees it: a handle sealed to the signed-in user in place of its
 * id, and the name the user gave it. A create sends this handle as `profile.id`.
 */
export type ProxyProfile = Omit<Profile, 'id'> & { handle: string };

/** GET /sessions/:handle/recording: the session's recording as the service tells it (its timeline's web addresses included: the session is the user's own). */
export type ProxyRecording = RecordingInfo;

/**
 * Why the route refused a recording (404, in the envelope's `reason`): the session was not
 * recorded, or its recording was removed (by request or after its days were over). A replay
 * link's API (`<engine>/replay/<token>/recording`) adds `invalid` (404: not a link the service
 * made) and `expired` (410).
 */
export type ProxyRecordingRefusal = 'not_recorded' | 'removed' | 'invalid' | 'expired';

/** POST /sessions/:handle/recording/link: a replay link (`url`) and when it stops working (`expires`, ISO 8601). */
export interface ProxyRecordingLink {
  url: string;
  expires: string;
}
