// A session's recording as the v8 interface tells it (issue 35, decisions.md 96):
// `GET /v8/vm/recording?id=` answers `{status:"ok", recording}`; the media itself is
// `GET /v8/vm/recording/media?id=` (MP4 with the picture as H.264 and the sound as Opus).
import { z } from 'zod';

/** One thing that happened in the session, with its time (ISO 8601). No page content, typed text or secret. */
export const recordingTimelineEntrySchema = z.object({
  time: z.string(),
  /**
   * `navigation` (a tab showed a web address: `url`, `title`), `tab-opened`, `tab-closed`,
   * `viewer-joined` / `viewer-left` (`channel`, `rights`), `program-attached` / `program-left`,
   * `refused` (`target`, `category`), `ended` (`status`, `reason`); `title` only in the stored file.
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
