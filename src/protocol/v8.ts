// The v8 HTTP interface, the current one: response shapes and the request checks that the engine,
// the proxy route and the components all run, so a field is refused with the same words everywhere.
import { z } from 'zod';
import { SESSION_STATUSES } from './statuses.js';
import { VIEWER_STATES, isWebAddress, type ViewerState } from './share.js';
import { SHARE_LANGUAGES, isKeyboardLayout, isSessionLanguage } from './languages.js';
import {
  CALLBACK_URL_MAX,
  IDEMPOTENCY_KEY_MAX,
  IDEMPOTENCY_KEY_MIN,
  URL_MAX,
  V6_SHORT_URL_ID_DIGITS,
  VM_DATA_WAIT_MAX_MS,
} from './limits.js';
import { profileMetersSchema, sessionProfileSchema } from './profile-fields.js';
import { CONTROL_MODES, VIEWER_NAME_MAX } from './control.js';
import { embedRequestSchema, sessionEmbedSchema, type EmbedRequest } from './embed.js';

// ---------------------------------------------------------------------------------------------
// Envelope and failures

export const RESPONSE_STATUSES = ['ok', 'denied', 'upgrade', 'insecure', 'error'] as const;
export type ResponseStatus = (typeof RESPONSE_STATUSES)[number];

/** Every answer has this shape; callers branch on `status`, never on the HTTP code. */
export const envelopeSchema = z.looseObject({
  status: z.enum(RESPONSE_STATUSES),
  message: z.string().optional(),
  reason: z.string().optional(),
});
export type Envelope = z.infer<typeof envelopeSchema>;

export const failureSchema = z.discriminatedUnion('status', [
  z.object({ status: z.enum(['denied', 'upgrade', 'error']), message: z.string() }),
  z.object({ status: z.literal('insecure'), message: z.string(), reason: z.string() }),
]);
export type Failure = z.infer<typeof failureSchema>;

/** An endpoint's answer as a client reads it: the `ok` shape or a failure. */
export function orFailure<Ok extends z.ZodType>(ok: Ok) {
  return z.union([ok, failureSchema]);
}

// ---------------------------------------------------------------------------------------------
// GET /v8/image

export const imageEntrySchema = z.object({
  id: z.string(),
  name: z.string(),
  enabled: z.boolean(),
});
export type ImageEntry = z.infer<typeof imageEntrySchema>;

export const locationEntrySchema = z.object({
  code: z.string(),
  name: z.string(),
  default: z.string(),
  cities: z.array(z.object({ code: z.string(), location: z.string() })),
});
export type LocationEntry = z.infer<typeof locationEntrySchema>;

export const residentialSchema = z.object({
  configured: z.boolean(),
  /** Country codes; `null` means every country. */
  countries: z.array(z.string()).nullable(),
});
export type Residential = z.infer<typeof residentialSchema>;

export const imageListResponseSchema = z.object({
  status: z.literal('ok'),
  images: z.array(imageEntrySchema),
  vpnLocations: z.array(locationEntrySchema),
  residential: residentialSchema,
});
export type ImageListResponse = z.infer<typeof imageListResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Meters and pools

const count = z.int().nonnegative();

/** The session meters; create answers with these as `quota`, counting the new session. */
export const sessionMetersSchema = z.object({
  running_session_limit: count,
  running_sessions_used: count,
  running_sessions_remaining: count,
  cycle_session_limit: count.nullable(),
  cycle_sessions_used: count,
  cycle_sessions_remaining: count.nullable(),
  cycle_start: z.iso.date(),
  /**
   * The day the cycle ends, one calendar month after cycle_start (day clamped): the next cycle's
   * start. Every engine since this field exists sends it; optional so that clients (the proxy
   * route's service client, <UsageMeters>) keep working with an engine from before it.
   */
  cycle_end: z.iso.date().optional(),
});
export type SessionMeters = z.infer<typeof sessionMetersSchema>;

export const usageMetersSchema = sessionMetersSchema.extend({
  residential_cycle_mb_limit: count.nullable(),
  residential_bytes_used_cycle: count,
});
export type UsageMeters = z.infer<typeof usageMetersSchema>;

/** One subscription's meters; the account's meters are the sums over its pools. */
export const poolSchema = usageMetersSchema.extend({
  subscription_id: z.string(),
  plan_id: z.string(),
  plan_name: z.string(),
});
export type Pool = z.infer<typeof poolSchema>;

export const userQuotaResponseSchema = usageMetersSchema.extend({
  status: z.literal('ok'),
  has_plan: z.boolean(),
  pools: z.array(poolSchema),
  // The saved profiles' meters (decisions.md 87); absent where profiles are not offered, and from engines before them.
  ...profileMetersSchema.partial().shape,
  /** Megabytes the account's recordings keep on this service (issue 35); absent from engines before recordings. */
  recording_mb_kept: z.number().optional(),
  /**
   * The most megabytes the account's recordings may keep (its plan's `recording_mb_limit`, the
   * largest of its plans that record; null: no cap): at it, a running recording stops and
   * `record: true` is denied until recordings are removed (decisions.md 131). Absent when no plan records.
   */
  recording_mb_limit: z.number().nullable().optional(),
});
export type UserQuotaResponse = z.infer<typeof userQuotaResponseSchema>;

export const userApiResponseSchema = userQuotaResponseSchema.extend({
  contact: z.string(),
  feature_programmatic_access: z.boolean(),
});
export type UserApiResponse = z.infer<typeof userApiResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Sessions

export { SESSION_STATUSES, ENDED_SESSION_STATUSES, isSessionEnded, type SessionStatus } from './statuses.js';
export const sessionStatusSchema = z.enum(SESSION_STATUSES);

/** Entry of `data[]` in vm/data; `id` is masked, so it identifies the session only to its owner. */
export const sessionEntrySchema = z.object({
  id: z.string(),
  status: sessionStatusSchema,
  name: z.string(),
  created: z.iso.datetime({ precision: 3 }),
  /** An addition to the spec (decisions.md 141): present and true while the running session is in standby, its processes frozen until the next attachment; absent otherwise. The status stays `running`. */
  standby: z.literal(true).optional().describe('Added by this service: true while the running session is in standby (nothing attached; its processes are frozen and wake on the next viewer, program, files or tabs call). Absent otherwise; the status stays running.'),
  /** An addition (decisions.md 165): present and true while the running session is hibernated, its processes ended and its state saved until the next attachment resumes it; with `standby`. */
  hibernated: z.literal(true).optional().describe('Added by this service: true while the running session is hibernated (in standby long enough: its state, tabs and logins are saved and its processes ended; the next viewer, program, files or tabs call resumes it, in seconds, on a fresh browser with the same tabs). Comes with standby: true. Absent otherwise; the status stays running.'),
});
export type SessionEntry = z.infer<typeof sessionEntrySchema>;

export const vmDataResponseSchema = z.object({
  status: z.literal('ok'),
  data: z.array(sessionEntrySchema),
});
export type VmDataResponse = z.infer<typeof vmDataResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Request checks

/** A v6 short-URL id, which `url` may carry instead of an address. */
export const SHORT_URL_ID_PATTERN = new RegExp(`^url_\\d{${V6_SHORT_URL_ID_DIGITS}}$`);

/** One message per field, naming it, whatever the failed check: callers show it as it is. */
function textField(message: string, accepts: (value: string) => boolean) {
  return z.string(message).refine(accepts, message);
}

const characters = (n: number) => n.toLocaleString('en-US');

export const createRequestSchema = z.object({
  browser: textField('browser: required; must be a browser id listed by GET /v8/image', (v) => v !== ''),
  url: textField(
    `url: must be an http or https address of at most ${characters(URL_MAX)} characters, or a short-URL id`,
    (v) => v.length <= URL_MAX && (isWebAddress(v) || SHORT_URL_ID_PATTERN.test(v)),
  ).optional(),
  language: textField(
    'language: must be a browser interface language the service supports, for example en, de or pt-BR, or one with a region such as de-AT',
    isSessionLanguage,
  ).optional(),
  layout: textField(
    'layout: must be a keyboard layout the service supports, for example us, de or gb',
    isKeyboardLayout,
  ).optional(),
  country: textField('country: must be a location code listed by GET /v8/image, or auto', (v) => v !== '').optional(),
  egress: z.literal('residential', 'egress: the only allowed value is residential').optional(),
  record: z.boolean('record: must be true or false').optional(),
  /**
   * v8 only (issue 36, decisions.md 104, 175, 176, 178): `app` runs the browser as an app window,
   * filling the screen without its own tab strip and address bar, its tabs shown and switched in
   * the viewer's strip; `browser` the browser's own window. Default for Chromium the operator's
   * `sessions.defaultWindow` (`app` unless set), for Firefox ESR `browser`.
   */
  window: z
    .enum(['browser', 'app'], 'window: must be browser or app')
    .describe('`app`: the browser fills the screen without its own tab strip and address bar; its tabs are shown and switched in the viewer\'s strip (the share state\'s `tabs`, `appWindow: true`), and the viewer shows the shown tab\'s address for editing. Chromium takes a warm browser and makes its window fullscreen; a Chromium on a saved profile, and Firefox ESR, start in kiosk mode on a warm display. Firefox ESR tells its tabs only in an app window, where its remote agent runs and pages read navigator.webdriver as true. `browser`: the browser\'s own window, with its tab strip and address bar (a program or a person that types into the address bar or uses the browser\'s own tabs asks for it). Default for Chromium `app` (an operator may make it `browser`: `sessions.defaultWindow`), for Firefox ESR `browser`.')
    .optional(),
  /**
   * v8 only (issue 45, decisions.md 143): programs may drive this Firefox ESR session over
   * WebDriver BiDi (`GET /v8/vm/automation`). Default false.
   */
  automation: z
    .boolean('automation: must be true or false')
    .describe('`true`: programs may drive this session (`GET /v8/vm/automation`). A Firefox ESR session then starts its remote agent (WebDriver BiDi), and its pages read navigator.webdriver as true; without it a Firefox ESR session\'s automation address is denied. Chromium sessions can be driven either way and ignore it. Starts on a warm display, not a warm browser, for Firefox ESR. Denied with `window: app` for Firefox ESR, whose one WebDriver BiDi session the engine keeps for the app window\'s tabs. Default `false`.')
    .optional(),
  /** v8 only (issue 36): everyone with the share link controls at once (`shared`, the default), or one driver at a time (`one`). */
  control: z.enum(CONTROL_MODES, `control: must be one of ${CONTROL_MODES.join(', ')}`).optional(),
  shareLanguage: z.enum(SHARE_LANGUAGES, `shareLanguage: must be one of ${SHARE_LANGUAGES.join(', ')}`).optional(),
  callbackUrl: textField(
    `callbackUrl: must be an http or https address of at most ${characters(CALLBACK_URL_MAX)} characters`,
    (v) => v.length <= CALLBACK_URL_MAX && isWebAddress(v),
  ).optional(),
  idempotencyKey: textField(
    `idempotencyKey: must be a string of ${IDEMPOTENCY_KEY_MIN} to ${IDEMPOTENCY_KEY_MAX} characters, without NUL (U+0000)`,
    (v) => v.length >= IDEMPOTENCY_KEY_MIN && v.length <= IDEMPOTENCY_KEY_MAX && !v.includes('\u0000'),
  ).optional(),
  /** v8 only (decisions.md 85): the saved profile the session starts on. */
  profile: sessionProfileSchema.optional(),
  /** v8 only (issue 44, decisions.md 134): the origins that may frame this session's links, a subset of the account's (POST /v8/user/embed). */
  embed: sessionEmbedSchema
    .describe("Narrows, for this session, the origins that may frame its share and view-only links to these (each one of the account's, POST /v8/user/embed; `[]`: not framed at all). Without it, the account's list applies.")
    .optional(),
});
export type CreateRequest = z.infer<typeof createRequestSchema>;

export const removeRequestSchema = z.object({
  id: textField('id: required; must be the vmId returned by vm/create', (v) => v !== ''),
});
export type RemoveRequest = z.infer<typeof removeRequestSchema>;

export type RequestCheck<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * Checks a request against one of the request schemas. Unknown fields are dropped; on failure the
 * message names the first failing field, ready to send back as a `denied` message.
 */
export function parseRequest<T>(schema: z.ZodType<T>, body: unknown): RequestCheck<T> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, message: 'request body must be a JSON object' };
  }
  const result = schema.safeParse(body);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, message: result.error.issues[0]?.message ?? 'request body is invalid' };
}

export function parseCreateRequest(body: unknown): RequestCheck<CreateRequest> {
  return parseRequest(createRequestSchema, body);
}

/** POST /v8/user/embed (issue 44): the origins that may frame the account's share links. */
export function parseEmbedRequest(body: unknown): RequestCheck<EmbedRequest> {
  return parseRequest(embedRequestSchema, body);
}

export function parseRemoveRequest(body: unknown): RequestCheck<RemoveRequest> {
  return parseRequest(removeRequestSchema, body);
}

/**
 * `wait` of `vm/data` (decisions.md 82): absent is 0 (answer at once); a whole number of ms, from 0
 * up, capped at VM_DATA_WAIT_MAX_MS; only with `id`. Anything else is refused, naming the field.
 */
export function parseVmDataWait(wait: string | null, id: string | null): RequestCheck<number> {
  if (wait === null) return { ok: true, value: 0 };
  if (!/^\d{1,9}$/.test(wait)) return { ok: false, message: `wait: must be a whole number of milliseconds, 0 to ${VM_DATA_WAIT_MAX_MS} (longer waits ${VM_DATA_WAIT_MAX_MS})` };
  if (id === null || id === '') return { ok: false, message: 'wait: only with id: the list of sessions answers at once' };
  return { ok: true, value: Math.min(Number(wait), VM_DATA_WAIT_MAX_MS) };
}

// ---------------------------------------------------------------------------------------------
// Answers to create and remove

export const createResponseSchema = z.object({
  status: z.literal('ok'),
  vmId: z.string(),
  /** Present only when the share link could be made; `shareUrlPath` comes with it. */
  shareUrl: z.string().optional(),
  shareUrlPath: z.string().optional(),
  quota: sessionMetersSchema,
});
export type CreateResponse = z.infer<typeof createResponseSchema>;

export const removeResponseSchema = z.object({ status: z.literal('ok') });
export type RemoveResponse = z.infer<typeof removeResponseSchema>;

/**
 * GET /v8/vm/automation?id=: a running session's address for a program (decisions.md 54, 143):
 * `browserWSEndpoint` (DevTools) for a Chromium session, `webDriverBiDiEndpoint` (WebDriver BiDi)
 * for a Firefox ESR session; exactly one of the two.
 */
export const automationResponseSchema = z.object({
  status: z.literal('ok'),
  /** Chromium: `ws(s)://<service>/automation/<token>`, for Playwright's connectOverCDP and Puppeteer's connect; never the API key. */
  browserWSEndpoint: z.string().optional(),
  /** Firefox ESR: `ws(s)://<service>/automation/<token>`, a WebDriver BiDi endpoint (Puppeteer's connect with `protocol: 'webDriverBiDi'`, Selenium's BiDi); never the API key. */
  webDriverBiDiEndpoint: z.string().optional(),
  /** When the address stops opening new connections (ISO 8601); connections already open go on. */
  expires: z.string(),
}).refine((answer) => (answer.browserWSEndpoint === undefined) !== (answer.webDriverBiDiEndpoint === undefined), {
  message: 'exactly one of browserWSEndpoint and webDriverBiDiEndpoint',
});
export type AutomationResponse = z.infer<typeof automationResponseSchema>;

/** One file of a session (decisions.md 55; src/protocol/files.ts). */
export const sessionFileSchema = z.object({
  name: z.string(),
  size: z.number().int().min(0),
  kind: z.enum(['download', 'upload']),
  /** When it was last written (ISO 8601 UTC). */
  created: z.string(),
  /** `downloading` while the remote browser still writes it (not fetchable yet). */
  state: z.enum(['complete', 'downloading']),
});

/** GET /v8/vm/files?id=: a running session's downloads and uploads (decisions.md 55). */
export const filesListResponseSchema = z.object({ status: z.literal('ok'), files: z.array(sessionFileSchema) });
export type FilesListAnswer = z.infer<typeof filesListResponseSchema>;

/** POST /v8/vm/files/upload?id=&name=: the file written into the session's uploads folder. */
export const fileUploadResponseSchema = z.object({ status: z.literal('ok'), name: z.string(), size: z.number().int().min(0) });
export type FileUploadAnswer = z.infer<typeof fileUploadResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Who drives (issue 36): POST /v8/vm/control and POST /v8/vm/viewer

const personSchema = z.object({
  id: z.string(),
  kind: z.enum(['person', 'program']),
  name: z.string().optional(),
  guest: z.number().optional(),
  owner: z.literal(true).optional(),
  watching: z.literal(true).optional(),
  asks: z.literal(true).optional(),
});

/**
 * POST /v8/vm/control: what the owner does (the same checks as parseControlAction in control.ts,
 * which the engine and the proxy route run; this one describes them in docs/openapi.json).
 */
export const controlRequestSchema = z.discriminatedUnion('action', [
  z.object({ id: z.string().min(1), action: z.literal('take') }),
  z.object({ id: z.string().min(1), action: z.literal('give'), to: z.string().min(1).max(64) }),
  z.object({ id: z.string().min(1), action: z.literal('release') }),
  z.object({ id: z.string().min(1), action: z.literal('mode'), mode: z.enum(CONTROL_MODES) }),
]);

/** POST /v8/vm/viewer: a pass naming the owner's viewer (`name` trimmed; without it, "Guest N"). */
export const viewerPassRequestSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1).max(VIEWER_NAME_MAX).optional(),
});

export const controlAnswerSchema = z.object({
  status: z.literal('ok'),
  mode: z.enum(CONTROL_MODES),
  driver: personSchema.omit({ watching: true, asks: true }).nullable(),
  people: z.array(personSchema),
});

export const viewerPassResponseSchema = z.object({ status: z.literal('ok'), pass: z.string(), expires: z.number() });
export type ViewerPassResponse = z.infer<typeof viewerPassResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Share API

/** What GET /share/<link_id> answers besides `status` (see share.ts for the plain type). */
export const viewerStateSchema = z.object({
  state: z.enum(VIEWER_STATES),
  language: z.enum(SHARE_LANGUAGES),
  browserName: z.string(),
  leaveUrl: z.string().nullable(),
  /** The channels the link's session is offered, by name (decisions.md 150); absent from an engine before it. */
  channels: z.record(z.string(), z.literal(true)).optional(),
}) satisfies z.ZodType<ViewerState>;
