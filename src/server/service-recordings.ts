// The service client's recording calls (issue 35, decisions.md 96, 97 and 110): `vm/recording` (the
// description and timeline), `vm/recording/media` (the MP4, streamed, a byte range passed on),
// `vm/recording/remove` and `vm/recording/link` (a signed, expiring replay link), over the client's one checked request and its streaming transfer
// (service-client.ts): the same key, timeout, retries where safe, and typed errors.
import type { z } from 'zod';
import { recordingLinkResponseSchema, recordingResponseSchema, removeResponseSchema, type RecordingInfo, type RecordingLinkResponse } from '../protocol/index.js';

type Request = <T>(call: { method: 'GET' | 'POST'; path: string; what: string; schema: z.ZodType<T>; body?: unknown; authenticated: boolean; repeatable: boolean; signal: AbortSignal | undefined }) => Promise<T>;
type Transfer = (path: string, what: string, headers: Record<string, string>, options: { signal?: AbortSignal } | undefined) => Promise<Response>;
type Options = { signal?: AbortSignal } | undefined;

/** A recording's media as the service answered it: 200 (all of it), 206 (the range asked) or 416 (a range past its end). */
export interface RecordingMedia {
  httpStatus: 200 | 206 | 416;
  /** The answer's `content-type`, `content-length`, `content-range` and `accept-ranges`, where the service sent them. */
  headers: Record<string, string>;
  body: ReadableStream<Uint8Array> | null;
}

export interface RecordingCalls {
  /** GET /v8/vm/recording?id=: the recording's state, start, length, bytes and timeline. */
  recording(vmId: string, options?: Options): Promise<RecordingInfo>;
  /**
   * GET /v8/vm/recording/media?id=: the MP4, its bytes streamed (the timeout covers the answer's
   * start only). `range` is the browser's Range header: a whole recording answers it (206); one
   * still being made streams from its start (200, no ranges). A busy service throws
   * `service_error` with `httpStatus` 503 and `retryAfter`.
   */
  recordingMedia(vmId: string, options?: Options & { range?: string | null }): Promise<RecordingMedia>;
  /** POST /v8/vm/recording/remove: removes an ended session's recording. */
  removeRecording(vmId: string, options?: Options): Promise<void>;
  /**
   * POST /v8/vm/recording/link: a replay link (`url`, on the service's viewer site) good until
   * `expires` (a week unless `expiresInS` says otherwise; never past the recording's removal).
   */
  recordingLink(vmId: string, options?: Options & { expiresInS?: number }): Promise<Omit<RecordingLinkResponse, 'status'>>;
}

const PASSED_HEADERS = ['content-type', 'content-length', 'content-range', 'accept-ranges'];

export function recordingCalls(request: Request, transfer: Transfer): RecordingCalls {
  return {
    recording: async (vmId, options) =>
      (await request({ method: 'GET', path: `vm/recording?id=${encodeURIComponent(vmId)}`, what: 'the recording', schema: recordingResponseSchema, authenticated: true, repeatable: true, signal: options?.signal })).recording,
    recordingMedia: async (vmId, options) => {
      const range = options?.range;
      // Only a plain byte range goes on: anything else would be the service's to refuse, so it is not asked.
      const headers: Record<string, string> = range && /^bytes=\d*-\d*$/.test(range) ? { range } : {};
      const response = await transfer(`vm/recording/media?id=${encodeURIComponent(vmId)}`, 'the recording\'s media', headers, options);
      const passed: Record<string, string> = {};
      for (const name of PASSED_HEADERS) {
        const value = response.headers.get(name);
        if (value !== null) passed[name] = value;
      }
      return { httpStatus: response.status as RecordingMedia['httpStatus'], headers: passed, body: response.body };
    },
    removeRecording: async (vmId, options) => {
      await request({ method: 'POST', path: 'vm/recording/remove', what: 'removing the recording', schema: removeResponseSchema, body: { id: vmId }, authenticated: true, repeatable: true, signal: options?.signal });
    },
    recordingLink: async (vmId, options) => {
      const body = { id: vmId, ...(options?.expiresInS === undefined ? {} : { expires_in_s: options.expiresInS }) };
      const { url, expires } = await request({ method: 'POST', path: 'vm/recording/link', what: 'the replay link', schema: recordingLinkResponseSchema, body, authenticated: true, repeatable: true, signal: options?.signal });
      return { url, expires };
    },
  };
}
