// The proxy route's options (createProxyRoute in proxy-route.ts): who the signed-in end user is,
// the policy that narrows what they may do (browsers, create requests, meters, framing, their
// display name), the per-user rate limits, the secret that signs their session handles and the
// origins that may call the route. Types only: what a customer's server writes, documented here.
import type { CreateRequest } from '../protocol/index.js';
import type { RemoteBrowserService } from './remote-browser-service.js';

/** The signed-in end user; `id` is what handles, idempotency keys and rate limits are bound to. */
export interface EndUser {
  id: string;
}

type Awaitable<T> = T | Promise<T>;

/** A policy's refusal, sent to the browser in the envelope (denied: HTTP 403, upgrade: 402). */
export interface PolicyRefusal {
  status: 'denied' | 'upgrade';
  message: string;
}

export interface PolicyContext<User extends EndUser> {
  user: User;
  /** The browser's request to the route (headers, cookies). */
  request: Request;
}

export interface ProxyPolicy<User extends EndUser> {
  /**
   * Browsers this user may start (image ids); the image list shows only these. Default: all.
   */
  browsers?: readonly string[] | ((context: PolicyContext<User>) => Awaitable<readonly string[] | undefined>);
  /**
   * Restrict or fill in a create request: return the request to send (changed or not), or a
   * refusal. URL rules, a forced callbackUrl, a fixed language... The result is checked again.
   * Keep it deterministic: a retried launch must send the same request for its idempotency key.
   */
  create?: (request: CreateRequest, context: PolicyContext<User>) => Awaitable<CreateRequest | PolicyRefusal>;
  /**
   * Whether this user may read the account's usage meters. Default: nobody, since the meters are
   * the whole account's, not the user's.
   */
  usage?: (context: PolicyContext<User>) => Awaitable<boolean>;
  /**
   * Whether this user may read and set the origins that may frame the account's share links
   * (`<base>/embed`, issue 44). Default: nobody, since the list is the whole account's.
   */
  embed?: (context: PolicyContext<User>) => Awaitable<boolean>;
  /**
   * The display name the other viewers see for this user when they watch their own session
   * (issue 36): your app's name for them, 1 to 64 characters. Default: none, so they show as "Guest N".
   */
  viewerName?: (context: PolicyContext<User>) => Awaitable<string | undefined>;
}

/** What a limiter must do: rate-limiter-flexible's limiters (memory, Redis, Postgres...) all fit. */
export interface RouteLimiter {
  consume(key: string, points?: number): Promise<unknown>;
}

export interface ProxyRateLimit {
  /** Requests per end user in each window, every endpoint together. Default 120. */
  requests?: number;
  /** Session creations per end user in each window, counted in addition. Default 10. */
  creates?: number;
  /** The window, in seconds. Default 60. */
  perSeconds?: number;
  /** Your own limiter for all requests, e.g. RateLimiterRedis when several servers share the count. */
  limiter?: RouteLimiter;
  /** Your own limiter for creations. */
  createLimiter?: RouteLimiter;
}

export interface ProxyRouteOptions<User extends EndUser = EndUser> {
  /** `createServiceClient({ baseUrl, apiKey })`, or `engineService(engine, { apiKey })` in-process. */
  service: RemoteBrowserService;
  /** The signed-in end user of this request, or null (throwing also refuses): HTTP 401. */
  authorize: (request: Request) => Awaitable<User | null | undefined>;
  /**
   * Signs the session handles: at least 32 characters, the same on every server behind the app.
   * Default: the `REMOTE_BROWSER_SECRET` environment variable, read at the first request.
   */
  secret?: string;
  /** Where the route is mounted. Default `/api/remote-browser`. */
  basePath?: string;
  policy?: ProxyPolicy<User>;
  /** Per-user rate limits; `false` turns them off (when a gateway in front does it). */
  rateLimit?: ProxyRateLimit | false;
  /**
   * Origins besides the request's own that may call the route (`https://app.example.com`):
   * needed when a proxy in front changes the host or scheme the route sees.
   */
  allowedOrigins?: readonly string[];
  /**
   * Failures the browser only sees as "try again later" (service unreachable, configuration,
   * authorize throwing), with their details. Default: console.error.
   */
  onError?: (error: unknown, request: Request) => void;
}
