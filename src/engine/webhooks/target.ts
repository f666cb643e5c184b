// Where a webhook may be delivered and the one HTTP POST that delivers it, within its attempt's
// deadline (decisions.md 61, 76). The receiver's name is checked as the sessions' egress route
// checks a page's (egress-targets.ts): resolved once, every answer held to the address policy (no
// loopback, private, link-local or metadata address unless the operator's `webhooks.allow` names
// its range), and the checked addresses pinned for the connection, so a second lookup cannot lead
// elsewhere.
import dns from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { type AllowedRange, canonicalHostAddresses, checkTarget, interfaceAddresses, pinnedLookup } from '../runtime/index.js';

export interface WebhookTargetSettings {
  allow: readonly AllowedRange[];
  allowHttp: boolean;
  /** The deadline of a whole attempt. */
  timeoutMs: number;
  /** The resolver (tests answer names themselves). */
  lookup?: typeof dns.lookup;
}

export type TargetVerdict = { ok: true; addresses: dns.LookupAddress[] } | { ok: false; refused: boolean; message: string };

const hostAddresses = canonicalHostAddresses(interfaceAddresses());

/** Whether `url` may receive webhooks now: its scheme, then where its name leads. */
export async function checkWebhookTarget(url: URL, settings: WebhookTargetSettings): Promise<TargetVerdict> {
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && settings.allowHttp)) {
    return { ok: false, refused: true, message: settings.allowHttp ? 'url: must be an http or https address' : 'url: must be an https address (this service does not deliver to plain http)' };
  }
  if (url.username || url.password) return { ok: false, refused: true, message: 'url: must not carry a user name or password' };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const check = await checkTarget(host, settings.allow, settings.lookup ?? dns.lookup, hostAddresses);
  if (check.outcome === 'allowed') return { ok: true, addresses: check.addresses };
  if (check.outcome === 'refused') {
    // The caller learns that the address is not allowed, never what the name resolves to.
    return { ok: false, refused: true, message: `url: ${host} is not a public address (or leads to one); this service does not deliver webhooks there` };
  }
  return { ok: false, refused: false, message: `url: ${check.reason}` };
}

/**
 * The deadline of one delivery attempt (decisions.md 76): one timer over the whole attempt, the
 * name's check, the connection, the answer's headers and its body. A socket's idle timeout is not
 * one: a receiver that sends a byte a second is never idle, and would hold its attempt for ever.
 */
export interface AttemptDeadline {
  readonly signal: AbortSignal;
  /** Stops the timer once the attempt is over. */
  clear(): void;
}

export function attemptDeadline(ms: number): AttemptDeadline {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no complete answer within ${ms} ms (the attempt's deadline)`)), ms);
  // A deadline keeps no engine alive on its own.
  timer.unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/** `work`'s answer, or the deadline's reason if it passes first (a name lookup cannot be called off, only left). */
export function beforeDeadline<T>(work: Promise<T>, deadline: AbortSignal): Promise<T> {
  if (deadline.aborted) return Promise.reject(deadline.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const passed = () => reject(deadline.reason as Error);
    deadline.addEventListener('abort', passed, { once: true });
    work.then(resolve, reject).finally(() => deadline.removeEventListener('abort', passed));
  });
}

/**
 * POSTs `body` to `url` at the checked addresses; answers the HTTP status once the whole answer has
 * come, or throws why not. When `deadline` aborts, the connection is destroyed wherever the
 * attempt is: connecting, waiting for headers, or reading a body that never ends.
 */
export function postWebhook(url: URL, addresses: dns.LookupAddress[], headers: Record<string, string>, body: string, deadline: AbortSignal): Promise<number> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  if (deadline.aborted) return Promise.reject(deadline.reason as Error);
  return new Promise((resolve, reject) => {
    const request = send(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'remote-browser-kit-webhooks' },
      lookup: pinnedLookup(addresses),
      agent: false,
    });
    const passed = () => {
      reject(deadline.reason as Error);
      request.destroy(deadline.reason as Error);
    };
    deadline.addEventListener('abort', passed, { once: true });
    const settle = () => deadline.removeEventListener('abort', passed);
    request.once('response', (response) => {
      // The answer's body is read and dropped: only the status counts, once the answer is whole.
      response.resume();
      response.once('end', () => {
        settle();
        resolve(response.statusCode ?? 0);
      });
      response.once('error', (error) => {
        settle();
        reject(error);
      });
      response.once('close', () => {
        settle();
        if (!response.complete) reject(new Error('the receiver closed the connection before its answer was whole'));
      });
    });
    request.once('error', (error) => {
      settle();
      reject(error);
    });
    request.end(body);
  });
}
