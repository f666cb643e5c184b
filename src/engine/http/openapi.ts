// The OpenAPI document of the v8 interface, generated from the same zod schemas the engine
// validates with (served at /v8/openapi.json, checked in as docs/openapi.json).
import { z } from 'zod';
import {
  createRequestSchema,
  createResponseSchema,
  failureSchema,
  imageListResponseSchema,
  removeRequestSchema,
  removeResponseSchema,
  automationResponseSchema,
  fileUploadResponseSchema,
  filesListResponseSchema,
  userApiResponseSchema,
  userQuotaResponseSchema,
  vmDataResponseSchema,
  webhookEventSchema,
  webhookRequestSchema,
  webhookResponseSchema,
  recordingResponseSchema,
  recordingLinkRequestSchema,
  recordingLinkResponseSchema,
  REPLAY_LINK_DEFAULT_S,
  VM_DATA_WAIT_MAX_MS,
  profileCreateRequestSchema,
  profileListResponseSchema,
  profileRemoveRequestSchema,
  profileRenameRequestSchema,
  profileResponseSchema,
  controlRequestSchema,
  controlAnswerSchema,
  viewerPassRequestSchema,
  viewerPassResponseSchema,
  VIEWER_NAME_MAX,
  embedRequestSchema,
  embedResponseSchema,
  EMBED_ORIGINS_MAX,
} from '../../protocol/index.js';

const schema = (s: z.ZodType) => z.toJSONSchema(s, { target: 'openapi-3.0', unrepresentable: 'any', io: 'output' });

function answer(ok: z.ZodType, description: string) {
  return {
    '200': { description, content: { 'application/json': { schema: { oneOf: [schema(ok), schema(failureSchema)] } } } },
    '401': { description: 'missing, unknown or revoked API key', content: { 'application/json': { schema: schema(failureSchema) } } },
    '403': { description: 'the request came from a web browser (reason client_side_key)', content: { 'application/json': { schema: schema(failureSchema) } } },
    '429': { description: 'rate limited (reason rate_limited); see Retry-After', headers: { 'Retry-After': { schema: { type: 'integer' } } }, content: { 'application/json': { schema: schema(failureSchema) } } },
  };
}

export function openApiDocument(serverUrl?: string): Record<string, unknown> {
  const secured = [{ apiKey: [] }];
  return {
    openapi: '3.0.3',
    info: { title: 'Remote Browser Session Service', version: '8', description: 'Start, follow, share and end remote browser sessions. Every answer is HTTP 200 with a status envelope, except authentication (401), browser origin (403) and rate limit (429).' },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'API key; never in client-side code' } } },
    paths: {
      '/v8/image': { get: { summary: 'List browsers and exit locations', responses: { '200': { description: 'images, locations, residential', content: { 'application/json': { schema: schema(imageListResponseSchema) } } } } } },
      '/v8/vm/create': {
        post: { summary: 'Start a session', security: secured, requestBody: { required: true, content: { 'application/json': { schema: schema(createRequestSchema) } } }, responses: answer(createResponseSchema, 'the session is starting') },
      },
      '/v8/vm/data': {
        get: {
          summary: 'List sessions (last 31 days) or read one',
          description: `With \`id\` and \`wait\`, a read of a \`starting\` session is held until its status moves on (running, error, stopping...), then answered at once; after \`wait\` ms it is answered as it is (still \`starting\`). A session in any other status, or an unknown id, is answered at once. Follow a start with this instead of polling. A \`wait\` that is not a whole number of milliseconds, or comes without \`id\`, is refused (denied, naming \`wait\`).`,
          security: secured,
          parameters: [
            { name: 'id', in: 'query', required: false, schema: { type: 'string' }, description: 'vmId from create' },
            { name: 'wait', in: 'query', required: false, schema: { type: 'integer', minimum: 0, maximum: VM_DATA_WAIT_MAX_MS }, description: `only with id: hold the answer while the session is starting, at most this many ms (longer waits ${VM_DATA_WAIT_MAX_MS}); default 0, answer at once` },
          ],
          responses: answer(vmDataResponseSchema, 'session entries'),
        },
      },
      '/v8/vm/remove': {
        post: { summary: 'End a session', security: secured, requestBody: { required: true, content: { 'application/json': { schema: schema(removeRequestSchema) } } }, responses: answer(removeResponseSchema, 'ended') },
      },
      '/v8/vm/automation': {
        get: {
          summary: 'An address for a program to drive a running session: DevTools for Chromium (browserWSEndpoint: Playwright connectOverCDP, Puppeteer connect), WebDriver BiDi for Firefox ESR (webDriverBiDiEndpoint: Puppeteer connect with protocol webDriverBiDi)',
          description: 'The answer has browserWSEndpoint for a Chromium session and webDriverBiDiEndpoint for a Firefox ESR session, never both. The address carries a short-lived token for this one session (default 10 minutes; never the API key). Refused (denied) for an unknown or another account\'s session, a session that is not running, and a Firefox ESR session not created with automation: true (its remote agent runs only then); upgrade when the plan has no programmatic access. Every DevTools or BiDi command passes the service\'s allow-list (docs/security.md, "Automation"); in a Firefox session each program opens a session of its own (session.new) on the browser\'s one BiDi session, up to the programs per session (decisions.md 169).',
          security: secured,
          parameters: [{ name: 'id', in: 'query', required: true, schema: { type: 'string' }, description: 'vmId from create' }],
          responses: answer(automationResponseSchema, 'the DevTools or WebDriver BiDi address and when it expires'),
        },
      },
      '/v8/vm/files': {
        get: {
          summary: "A running session's files: what its browser downloaded and what was given to it",
          description: 'Downloads are listed while the plan and the service let them move; one still arriving is `downloading` with its size so far. Refused (denied) for an unknown or another account\'s session and a session that is not running (its files went with it).',
          security: secured,
          parameters: [{ name: 'id', in: 'query', required: true, schema: { type: 'string' }, description: 'vmId from create' }],
          responses: answer(filesListResponseSchema, 'the files'),
        },
      },
      '/v8/vm/files/download': {
        get: {
          summary: "One of a session's files, as a download (streamed)",
          description: 'The file\'s bytes with `Content-Disposition: attachment` (its own name, RFC 5987 `filename*`). A name that is not one plain file name (1-255 bytes of UTF-8, no `/`, no NUL, not `.` or `..`) answers 400; a file that is not there 404; anything refused (a link or device in the folder, a download still arriving, another account\'s session, downloads off: denied; the plan: upgrade) 403; always in the envelope, naming the field.',
          security: secured,
          parameters: [
            { name: 'id', in: 'query', required: true, schema: { type: 'string' }, description: 'vmId from create' },
            { name: 'name', in: 'query', required: true, schema: { type: 'string' }, description: 'the file\'s name, as listed' },
            { name: 'kind', in: 'query', required: false, schema: { type: 'string', enum: ['download', 'upload'] }, description: 'which folder (default: downloads, then uploads)' },
          ],
          responses: {
            '200': { description: 'the file', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
            ...Object.fromEntries(['400', '403', '404'].map((code) => [code, { description: 'refused (envelope)', content: { 'application/json': { schema: schema(failureSchema) } } }])),
            '401': { description: 'missing, unknown or revoked API key', content: { 'application/json': { schema: schema(failureSchema) } } },
            '429': { description: 'rate limited (reason rate_limited); see Retry-After', content: { 'application/json': { schema: schema(failureSchema) } } },
          },
        },
      },
      '/v8/vm/files/upload': {
        post: {
          summary: "Give a file to a running session: it lands in its uploads folder, where the browser's file dialog opens",
          description: 'The request body is the file (streamed). The same name again replaces it. Refused (denied, naming the field) for a name that is not one plain file name, a file over the per-file cap or uploads over the session\'s cap (the cap in the message; nothing is written), uploads switched off; upgrade when the plan leaves uploads out.',
          security: secured,
          parameters: [
            { name: 'id', in: 'query', required: true, schema: { type: 'string' }, description: 'vmId from create' },
            { name: 'name', in: 'query', required: true, schema: { type: 'string' }, description: 'the file\'s name in the session' },
          ],
          requestBody: { required: true, content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
          responses: answer(fileUploadResponseSchema, 'written'),
        },
      },
      // Recordings (issue 35, decisions.md 96).
      '/v8/vm/recording': {
        get: {
          summary: "A session's recording: its state, start, length, bytes and timeline",
          description: "Only for a session created with `record: true` on a plan that records. The timeline holds what happened, each with its time: navigations (`url`, `title`), tabs opened and closed, viewers and programs coming and going (`channel`, `rights`), refusals (`target`, `category`), the end (`status`, `reason`), a recording stopped while its session ran on (`stopped`: `reason` `recording_mb_limit`, the account's recordings keep the plan's megabytes; `recording_minutes_limit`, it ran the plan's minutes; `free_space_floor`, the service's disk is nearly full; the recording is then whole and its timeline ends there, the share state no longer says `recording`, and the session goes on) and, once per reason, that entries were left out (`dropped`: `reason` `rate`, more than 10 a second from one tab, or `total`, the timeline is full); never page content, typed text or a secret. A create with `record: true` is denied (naming `record` and why) while the account's recordings keep its plan's `recording_mb_limit` (user/quota says both) or the service's disk is under its free-space floor. An address is its origin and path (no query or fragment) unless the plan keeps whole addresses (`recording_full_urls`), at most 2,048 characters; a title at most 200. Refused (denied) for an unknown or another account's session, a session that was not recorded, and a removed recording.",
          security: secured,
          parameters: [{ name: 'id', in: 'query', required: true, schema: { type: 'string' }, description: 'vmId from create' }],
          responses: answer(recordingResponseSchema, 'the recording'),
        },
      },
      '/v8/vm/recording/media': {
        get: {
          summary: "A session's recording as MP4 (H.264 picture, Opus sound)",
          description: "Once the session has ended: the whole recording (fragmented MP4), with byte ranges. While it runs: fragmented MP4 of what there is up to now (with its `Content-Length`). 503 with `Retry-After` while the engine's conversions are busy (at most 2 at once for one account, 4 in all); a client that stops reading for 20 s is cut off. Refused in the envelope (403 for an unknown or another account's session, 404 for a session that was not recorded or a recording removed).",
          security: secured,
          parameters: [{ name: 'id', in: 'query', required: true, schema: { type: 'string' }, description: 'vmId from create' }],
          responses: {
            '200': { description: 'the recording', content: { 'video/mp4': { schema: { type: 'string', format: 'binary' } } } },
            '206': { description: 'the range asked for', content: { 'video/mp4': { schema: { type: 'string', format: 'binary' } } } },
            ...Object.fromEntries(['403', '404'].map((code) => [code, { description: 'refused (envelope)', content: { 'application/json': { schema: schema(failureSchema) } } }])),
            '401': { description: 'missing, unknown or revoked API key', content: { 'application/json': { schema: schema(failureSchema) } } },
          },
        },
      },
      '/v8/vm/recording/remove': {
        post: { summary: "Remove an ended session's recording", security: secured, requestBody: { required: true, content: { 'application/json': { schema: schema(removeRequestSchema) } } }, responses: answer(removeResponseSchema, 'removed') },
      },
      '/v8/vm/recording/link': {
        post: {
          summary: "A link to watch a session's recording on the service's viewer site, without an API key, until it expires",
          description: `Answers \`url\` (\`<share base>/replay/<token>\`: a page that plays the recording with its timeline, in the viewer's browser language) and \`expires\` (ISO 8601). The token is signed by the service and carries the session and the expiry: whoever holds the link can watch the whole recording until then. \`expires_in_s\` defaults to ${REPLAY_LINK_DEFAULT_S} (a week) and is cut at the day the recording is removed (its retention). Links cannot be revoked one by one: removing the recording (vm/recording/remove) ends every link to it. Refused (denied) for an unknown or another account's session, a session that was not recorded, and a removed recording.`,
          security: secured,
          requestBody: { required: true, content: { 'application/json': { schema: schema(recordingLinkRequestSchema) } } },
          responses: answer(recordingLinkResponseSchema, 'the link'),
        },
      },
      // Who drives (issue 36, decisions.md 99-101).
      '/v8/vm/control': {
        post: {
          summary: "Who drives a running session: take control back, give it, release it, or change the mode",
          description: "`mode`: `shared` (everyone with the share link controls at once) or `one` (one driver at a time; the first share-link viewer to press a key or a button drives, others ask). `take`: the owner's own viewer drives, or, with none attached, the owner holds control and nobody types. `give`: to the person (or program) with that id in `people`. `release`: nobody drives until someone asks or presses. The answer is the picture after the change: the mode, the driver (null: nobody) and everyone attached (`name` as the owner's app gave it, else `guest` N; `watching`: a view-only link, never drives; `asks`: waits for control). Decided on the node that runs the session (forwarded there in a cluster). Refused (denied, naming the field) for an unknown or another account's session, a session that is not running, and a `give` to nobody there; upgrade when the plan has no programmatic access.",
          security: secured,
          requestBody: { required: true, content: { 'application/json': { schema: schema(controlRequestSchema) } } },
          responses: answer(controlAnswerSchema, 'the mode, the driver and the people after the change'),
        },
      },
      '/v8/vm/viewer': {
        post: {
          summary: "A viewer pass that names the owner's viewer of a running session",
          description: `Give \`pass\` to the viewer (the proxy route does: ShareViewer's \`viewerPass\`); it says it when it joins, and the others see \`name\` (1 to ${VIEWER_NAME_MAX} characters, trimmed) instead of "Guest N", and that it is the owner (may take control). Good for this session only, 24 hours (\`expires\`, ms since 1970); a pass for another session names nobody. Never put a name the browser sent here: it is shown to everyone watching. Refused (denied) for an unknown or another account's session and a session that is not running.`,
          security: secured,
          requestBody: { required: true, content: { 'application/json': { schema: schema(viewerPassRequestSchema) } } },
          responses: answer(viewerPassResponseSchema, 'the pass and when it expires'),
        },
      },
      // Saved profiles (decisions.md 85-89).
      '/v8/profile/create': {
        post: {
          summary: "Make an empty saved profile for a browser family: a later session started with `profile: {id}` in vm/create begins on it and, with `save` (default true), writes its state back when it ends normally",
          description: 'A profile keeps cookies, localStorage, IndexedDB, service workers and their caches, saved logins and site permissions (and the open tabs when a session asks with `tabs: true`); never caches that can be fetched again. It is the account\'s alone, encrypted at rest, one session at a time (a second create on it while one runs is denied), capped per profile (the service\'s, default 300 MB: a save over it keeps the earlier version, and the profile says why in `save_error`) and by the plan (`profile_limit`, `profile_mb_limit` in user/quota), and forgotten after the service\'s days unused.',
          security: secured,
          requestBody: { required: true, content: { 'application/json': { schema: schema(profileCreateRequestSchema) } } },
          responses: answer(profileResponseSchema, 'the profile'),
        },
      },
      '/v8/profile/data': {
        get: {
          summary: "The account's saved profiles, or the one with `id` (an unknown id: an empty list)",
          security: secured,
          parameters: [{ name: 'id', in: 'query', required: false, schema: { type: 'string' }, description: 'profile id from profile/create' }],
          responses: answer(profileListResponseSchema, 'profiles'),
        },
      },
      '/v8/profile/rename': { post: { summary: 'Rename a saved profile', security: secured, requestBody: { required: true, content: { 'application/json': { schema: schema(profileRenameRequestSchema) } } }, responses: answer(profileResponseSchema, 'the profile') } },
      '/v8/profile/remove': { post: { summary: 'Remove a saved profile and its state (denied while a session runs on it)', description: 'Right after its session is removed (vm/remove) or ends, the session is still writing the profile back: the remove waits for that last save, up to 20 s, then removes the profile and answers ok. A save still under way after that is answered `denied` with a Retry-After header (5 s) and a message saying so; the same call then removes it.', security: secured, requestBody: { required: true, content: { 'application/json': { schema: schema(profileRemoveRequestSchema) } } }, responses: answer(removeResponseSchema, 'removed') } },
      '/v8/user/api': { get: { summary: 'Account, access and usage meters', security: secured, responses: answer(userApiResponseSchema, 'account and meters') } },
      '/v8/user/quota': { get: { summary: 'Usage meters', security: secured, responses: answer(userQuotaResponseSchema, 'meters') } },
      // Framing share links on the account's sites (issue 44, decisions.md 134).
      '/v8/user/embed': {
        get: { summary: 'The origins that may frame the account\'s share links in an iframe ([]: none, the default)', security: secured, responses: answer(embedResponseSchema, 'the origins') },
        post: {
          summary: 'Set the origins that may frame the account\'s share links (and view-only links) in an iframe; [] turns framing off',
          description: `The whole list, replacing the account's: at most ${EMBED_ORIGINS_MAX} exact origins, each \`https://host[:port]\` as a browser serializes it (lower case, no path, query, user or trailing slash); plain \`http\` only for localhost, 127.0.0.1 and [::1]; no wildcard. A share page then answers \`Content-Security-Policy: frame-ancestors <those origins>\` and no X-Frame-Options; without any, \`frame-ancestors 'self'\` and \`X-Frame-Options: SAMEORIGIN\` (no other site may frame it). It applies at once to every link of the account, live sessions too; a create's \`embed.origins\` narrows it for one session (each must be in this list). Repeats are kept once. A refused list (denied, naming the field and the origin, such as \`origins[1]\`) changes nothing.`,
          security: secured,
          requestBody: { required: true, content: { 'application/json': { schema: schema(embedRequestSchema) } } },
          responses: answer(embedResponseSchema, 'the origins as kept'),
        },
      },
      // Session webhooks (decisions.md 61).
      '/v8/user/webhook': {
        get: { summary: "The account's session webhook (never its secret), or null", security: secured, responses: answer(webhookResponseSchema, 'the webhook') },
        post: {
          summary: 'Set the address that receives session events (https); the answer shows its signing secret, only this once',
          description: 'Events (session.running, session.error, session.ended; session.standby and session.resumed each time a session with nothing attached goes into standby and is woken by its first touch, or resumed from hibernation) are POSTed as JSON with the header RBK-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under the secret>; retried with back-off for a day until the receiver answers 2xx; an event may come more than once, drop repeats by its id. Addresses that are not public are refused (denied) unless the operator allows their range.',
          security: secured,
          requestBody: { required: true, content: { 'application/json': { schema: schema(webhookRequestSchema) } } },
          responses: answer(webhookResponseSchema, 'the webhook, with its secret'),
        },
        delete: { summary: 'Remove the webhook (events not yet delivered are dropped)', security: secured, responses: answer(webhookResponseSchema, 'removed: webhook null') },
      },
    },
    // OpenAPI 3.0 has no webhooks section (3.1 has): the events are described as an extension.
    'x-webhooks': {
      sessionEvent: {
        post: {
          summary: 'A session became running, failed to start, or ended',
          parameters: [{ name: 'RBK-Signature', in: 'header', required: true, schema: { type: 'string' }, description: 't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">' }],
          requestBody: { required: true, content: { 'application/json': { schema: schema(webhookEventSchema) } } },
          responses: { '200': { description: 'received (any 2xx); anything else is retried' } },
        },
      },
    },
  };
}
