// remote-browser-kit/server: the proxy route that keeps the API key on your server, and the typed
// client of the service it calls. Framework adapters live in /node, /express, /next and /hono.
export { createProxyRoute, DEFAULT_BASE_PATH, SECRET_VARIABLE } from './proxy-route.js';
export type { ProxyRoute } from './proxy-route.js';
export type { EndUser, PolicyContext, PolicyRefusal, ProxyPolicy, ProxyRateLimit, ProxyRouteOptions, RouteLimiter } from './proxy-options.js';
export { API_KEY_VARIABLE, createServiceClient, engineService } from './service-client.js';
export type { EngineServiceOptions, InProcessEngine, ServiceClient, ServiceClientOptions, ServiceFetch } from './service-client.js';
export type { CallOptions, RemoteBrowserService } from './remote-browser-service.js';
export type { RecordingCalls, RecordingMedia } from './service-recordings.js';
export { isRemoteBrowserError, RemoteBrowserError } from './errors.js';
export type { RemoteBrowserErrorCode, RemoteBrowserErrorOptions } from './errors.js';
export { SECRET_MIN_CHARS } from './session-handles.js';
export { verifyWebhook, WEBHOOK_SIGNATURE_HEADER } from './webhooks.js';
export type { VerifyWebhookOptions } from './webhooks.js';
export {
  IDEMPOTENCY_HEADER,
  PROXY_INSECURE_REASONS,
  PROXY_PATHS,
  proxyCreateResponseSchema,
  proxyEndResponseSchema,
  proxySessionResponseSchema,
  proxySessionSchema,
} from './wire.js';
export type { ProxyCreateResponse, ProxyEndResponse, ProxySession, ProxySessionResponse } from './wire.js';
export type { ProxyRecording, ProxyRecordingRefusal } from '../protocol/proxy.js';
