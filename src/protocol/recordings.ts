// A session's recording as the v8 interface tells it (issue 35, decisions.md 96):
// `GET /v8/vm/recording?id=` answers `{status:"ok", recording}`; the media itself is
// `GET /v8/vm/recording/media?id=` (MP4 with the picture as H.264 and the sound as Opus).
import { z } from 'zod';
import { parseRequest, removeRequestSchema, type RequestCheck } from './v8.js';

/** One thing that happened in the session, with its time (ISO 8601). No page content, typed text or secret. */
export const recordingTimelineEntrySchema = z.object({
  time: z.string(),
  /**
   * `navigation` (a tab showed a web address: `url`, `title`), `tab-opened`, `tab-closed`,
   * `viewer-joined` / `viewer-left` (`channel`, `rights`), `program-attached` / `program-left`,
   * `refused` (`target`, `category`), `ended` (`status`, `reason`), `stopped` (`reason`:
   * `recording_mb_limit`, `recording_minutes_limit` or `free_space_floor`: the recording stopped,
   * the session ran on; decisions.md 131-132), `dropped` (`reason`: `rate`,
   * more than 10 entries a second came from `tab`; `total`, the timeline is full: from here on such
   * entries are left out; said once each); `title` only in the stored file. A `url` is its origin
   * and path unless the plan keeps whole addresses (`recording_full_urls`), at most 2,048
   * characters; a `title` at most 200.
   */
  type: z.string(),
  tab: z.string().optional(),
  url: z.string().optional(),
  title: z.string().optional(),
  channel: z.string().optional(),
  rights: z.enum(['control', 'view']).optional(),
  target: z.string().optional(),
  category: z.string().optional(),
  status: z.string().optional(),
  reason: z.string().optional(),
});
export type RecordingTimelineEntry = z.infer<typeof recordingTimelineEntrySchema>;

export const recordingInfoSchema = z.object({
  /** `starting`, `recording` (the session runs), `ending` (it ended; the last of it is being written), or `ended` (the recording is whole). */
  state: z.enum(['starting', 'recording', 'ending', 'ended']),
  started: z.string(),
  duration_ms: z.number(),
  bytes: z.number(),
  timeline: z.array(recordingTimelineEntrySchema),
});
export type RecordingInfo = z.infer<typeof recordingInfoSchema>;

export const recordingResponseSchema = z.object({ status: z.literal('ok'), recording: recordingInfoSchema });
export type RecordingResponse = z.infer<typeof recordingResponseSchema>;

/** The longest a replay link may live, whatever is asked (it is also cut at the recording's removal). */
export const REPLAY_LINK_MAX_S = 365 * 86_400;
/** A replay link's life when none is asked: a week. */
export const REPLAY_LINK_DEFAULT_S = 7 * 86_400;

const EXPIRES_IN = `expires_in_s: must be a whole number of seconds from 60 to ${REPLAY_LINK_MAX_S}`;

/**
 * `POST /v8/vm/recording/link` (decisions.md 110): a signed, expiring link to watch a session's
 * recording on the service's viewer site without an API key. `expires_in_s` is cut at the day the
 * recording is removed.
 */
export const recordingLinkRequestSchema = z.object({
  id: removeRequestSchema.shape.id,
  expires_in_s: z.number(EXPIRES_IN).int(EXPIRES_IN).min(60, EXPIRES_IN).max(REPLAY_LINK_MAX_S, EXPIRES_IN).optional(),
});
export type RecordingLinkRequest = z.infer<typeof recordingLinkRequestSchema>;

/** The link (`<share base>/replay/<token>`) and when it stops working (ISO 8601). */
export const recordingLinkResponseSchema = z.object({ status: z.literal('ok'), url: z.string(), expires: z.string() });
export type RecordingLinkResponse = z.infer<typeof recordingLinkResponseSchema>;

export function parseRecordingLinkRequest(body: unknown): RequestCheck<RecordingLinkRequest> {
  return parseRequest(recordingLinkRequestSchema, body);
}
