// What the proxy route needs from the service (RemoteBrowserService): the v8 calls an HTTP client
// (service-client.ts createServiceClient) and an in-process engine (engineService) both answer,
// with the options every call takes. The route's parts (proxy-*.ts) depend on this, not on a client.
import type {
  ControlAction,
  ControlAnswer,
  CreateRequest,
  CreateResponse,
  FilesListAnswer,
  FileUploadAnswer,
  ImageListResponse,
  RemoveResponse,
  SessionEntry,
  UserApiResponse,
  UserQuotaResponse,
  ViewerPassResponse,
} from '../protocol/index.js';
import type { EmbedCalls } from './service-embed.js';
import type { ProfileCalls } from './service-profiles.js';
import type { RecordingCalls } from './service-recordings.js';

export interface CallOptions {
  /** Ends the call early (the proxy route passes the browser's request signal). */
  signal?: AbortSignal;
}

/** Reading one session: optionally waiting, on the service, for a starting session to move on. */
export interface SessionReadOptions extends CallOptions {
  /**
   * Milliseconds the service may hold the answer while the session is `starting`: it answers the
   * moment the status moves on (vm/data's `wait`, decisions.md 82), so following a session to
   * `running` takes one call, not a poll. At most VM_DATA_WAIT_MAX_MS; the call's timeout grows by it.
   */
  wait?: number;
}

/** What the proxy route needs from the service: an HTTP client or an in-process engine alike. */
export interface RemoteBrowserService {
  /** GET /v8/image: browsers, exit locations, residential connections. Needs no API key. */
  images(options?: CallOptions): Promise<ImageListResponse>;
  /** POST /v8/vm/create. Repeated after a failure only when the request has an `idempotencyKey`. */
  create(request: CreateRequest, options?: CallOptions): Promise<CreateResponse>;
  /** GET /v8/vm/data?id=(&wait=): the session, or null when the service knows no such session. */
  session(vmId: string, options?: SessionReadOptions): Promise<SessionEntry | null>;
  /** GET /v8/vm/data: the account's sessions of the last month, newest first (ids masked). */
  list(options?: CallOptions): Promise<SessionEntry[]>;
  /** POST /v8/vm/remove. Ending an ended session also succeeds, so a repeat is safe. */
  remove(vmId: string, options?: CallOptions): Promise<RemoveResponse>;
  /** GET /v8/user/api: account contact, programmatic access, meters and pools. */
  userApi(options?: CallOptions): Promise<UserApiResponse>;
  /** GET /v8/user/quota: meters and pools. */
  userQuota(options?: CallOptions): Promise<UserQuotaResponse>;
  /** GET /v8/vm/files?id=: a running session's downloads and uploads (issue 23). Absent on older services' fakes. */
  files?(vmId: string, options?: CallOptions): Promise<FilesListAnswer['files']>;
  /** GET /v8/vm/files/download?id=&name=: one file, its bytes streamed (the timeout covers the answer's start only). */
  downloadFile?(vmId: string, name: string, options?: CallOptions): Promise<SessionFileDownload>;
  /** POST /v8/vm/files/upload?id=&name=: the body streamed into the session's uploads folder. */
  uploadFile?(vmId: string, name: string, body: FileBody, options?: CallOptions): Promise<FileUploadAnswer>;
  /** POST /v8/vm/control (issue 36): the owner takes control back, gives it, releases it, or changes the mode. Absent on older services' fakes. */
  control?(vmId: string, action: ControlAction, options?: CallOptions): Promise<ControlAnswer>;
  /** POST /v8/vm/viewer (issue 36): a pass that names the owner's viewer (`name`: the display name your app gives). */
  viewerPass?(vmId: string, name: string | undefined, options?: CallOptions): Promise<ViewerPassResponse>;
  /** Saved profiles (service-profiles.ts, issue 34). Absent on older services' fakes: the proxy route then offers none. */
  profiles?: ProfileCalls['profiles'];
  profile?: ProfileCalls['profile'];
  createProfile?: ProfileCalls['createProfile'];
  renameProfile?: ProfileCalls['renameProfile'];
  removeProfile?: ProfileCalls['removeProfile'];
  /** A session's recording (service-recordings.ts, issue 35). Absent on older services' fakes: the proxy route then offers none. */
  recording?: RecordingCalls['recording'];
  recordingMedia?: RecordingCalls['recordingMedia'];
  removeRecording?: RecordingCalls['removeRecording'];
  /** Absent on older services' fakes: the proxy route then makes no replay links. */
  recordingLink?: RecordingCalls['recordingLink'];
  /** The origins that may frame the account's share links (service-embed.ts, issue 44). Absent on older services' fakes: the proxy route then says framing is not offered. */
  embedOrigins?: EmbedCalls['embedOrigins'];
  setEmbedOrigins?: EmbedCalls['setEmbedOrigins'];
}

/** A file's bytes as they arrive from the service. */
export interface SessionFileDownload {
  name: string;
  size: number;
  body: ReadableStream<Uint8Array>;
}

/** What an upload may send: a stream (sent as it is read) or bytes at hand. */
export type FileBody = ReadableStream<Uint8Array> | Blob | ArrayBuffer | Uint8Array;
