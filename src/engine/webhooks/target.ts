// Where a webhook may be delivered and the one HTTP POST that delivers it (decisions.md 61). The
// receiver's name is checked as the sessions' egress route checks a page's (egress-targets.ts):
// resolved once, every answer held to the address policy (no loopback, private, link-local or
// metadata address unless the operator's `webhooks.allow` names its range), and the checked
// addresses pinned for the connection, so a second lookup cannot lead elsewhere.
import dns from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AllowedRange } from '../runtime/address-policy.js';
import { canonicalHostAddresses, checkTarget, interfaceAddresses, pinnedLookup } from '../runtime/egress-targets.js';

export interface WebhookTargetSettings {
  allow: readonly AllowedRange[];
  allowHttp: boolean;
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

/** POSTs `body` to `url` at the checked addresses; answers the HTTP status, or throws why not. */
export function postWebhook(url: URL, addresses: dns.LookupAddress[], headers: Record<string, string>, body: string, timeoutMs: number): Promise<number> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'remote-browser-kit-webhooks' },
        lookup: pinnedLookup(addresses),
        timeout: timeoutMs,
        agent: false,
      },
      (response) => {
        // The answer's body is not read beyond a little: only the status counts.
        response.resume();
        response.once('end', () => resolve(response.statusCode ?? 0));
        response.once('error', reject);
      },
    );
    request.once('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.once('error', reject);
    request.end(body);
  });
}
