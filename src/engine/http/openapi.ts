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
  userApiResponseSchema,
  userQuotaResponseSchema,
  vmDataResponseSchema,
  webhookEventSchema,
  webhookRequestSchema,
  webhookResponseSchema,
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
          security: secured,
          parameters: [{ name: 'id', in: 'query', required: false, schema: { type: 'string' }, description: 'vmId from create' }],
          responses: answer(vmDataResponseSchema, 'session entries'),
        },
      },
      '/v8/vm/remove': {
        post: { summary: 'End a session', security: secured, requestBody: { required: true, content: { 'application/json': { schema: schema(removeRequestSchema) } } }, responses: answer(removeResponseSchema, 'ended') },
      },
      '/v8/vm/automation': {
        get: {
          summary: 'A DevTools address for a program to drive a running Chromium session (Playwright connectOverCDP, Puppeteer connect)',
          description: 'The address carries a short-lived token for this one session (default 10 minutes; never the API key). Refused (denied) for an unknown or another account\'s session, a session that is not running, and Firefox ESR sessions; upgrade when the plan has no programmatic access. Every DevTools command passes the service\'s allow-list (docs/security.md, "Automation").',
          security: secured,
          parameters: [{ name: 'id', in: 'query', required: true, schema: { type: 'string' }, description: 'vmId from create' }],
          responses: answer(automationResponseSchema, 'the DevTools address and when it expires'),
        },
      },
      '/v8/user/api': { get: { summary: 'Account, access and usage meters', security: secured, responses: answer(userApiResponseSchema, 'account and meters') } },
      '/v8/user/quota': { get: { summary: 'Usage meters', security: secured, responses: answer(userQuotaResponseSchema, 'meters') } },
      // Session webhooks (decisions.md 61).
      '/v8/user/webhook': {
        get: { summary: "The account's session webhook (never its secret), or null", security: secured, responses: answer(webhookResponseSchema, 'the webhook') },
        post: {
          summary: 'Set the address that receives session events (https); the answer shows its signing secret, only this once',
          description: 'Events (session.running, session.error, session.ended) are POSTed as JSON with the header RBK-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under the secret>; retried with back-off for a day until the receiver answers 2xx; an event may come more than once, drop repeats by its id. Addresses that are not public are refused (denied) unless the operator allows their range.',
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
