// Where a request of the egress route may go: its host parsed as a browser would, the name
// resolved once (metadata names refused before any lookup), every answer checked against the
// address policy, this host's own interfaces and the engine's own ports (engine-ports.ts), and the
// checked addresses pinned for the connection, so a second lookup cannot lead elsewhere (DNS
// rebinding).
import dns from 'node:dns';
import net from 'node:net';
import os from 'node:os';
import { canonicalAddress, classifyAddress, isAllowedBy, MESSAGE_PREFIX, type AddressCategory, type AllowedRange } from './address-policy.js';
import type { EnginePorts } from './engine-ports.js';
import { categoryWords, type ShownRefusal } from './refusals.js';

const LOOKUP_TIMEOUT_MS = 10_000;

// Names that reach a metadata service even where it has no fixed address in our tables;
// refused before any lookup, so a resolver that knows them never gets the chance.
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata']);

/** What a refusal was for, in the operator's log: the address's category, a metadata name, or one of the engine's own listeners. */
export type RefusedFor = AddressCategory | 'metadata-name' | 'engine-listener';

/** The port a request goes to, and the engine's own ports, none of which a session reaches on this host. */
export interface TargetPort {
  port: number;
  enginePorts: EnginePorts;
}

export type TargetCheck =
  | { outcome: 'allowed'; addresses: dns.LookupAddress[] }
  /** `shown` is what the viewer's refusal page says: never what a name resolves to. */
  | { outcome: 'refused'; reason: string; shown: ShownRefusal; for: RefusedFor; address?: string }
  | { outcome: 'failed'; statusCode: number; reason: string };

// The same host parsing a browser applies to http URLs, so every IPv4 spelling becomes one
// canonical address and names become lower-case ASCII. CONNECT targets arrive unparsed.
function canonicalHost(hostname: string): string | null {
  let host = hostname;
  if (!host.startsWith('[') && net.isIPv6(host)) host = `[${host}]`;
  const bracketed = host.startsWith('[') && host.endsWith(']');
  if (host === '' || /[\s/?#@\\]/.test(host) || (!bracketed && host.includes(':'))) return null;
  let url: URL;
  try {
    url = new URL(`http://${host}/`);
  } catch {
    return null;
  }
  if (url.port !== '' || url.pathname !== '/' || url.hostname === '') return null;
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

function resolveName(lookup: typeof dns.lookup, name: string): Promise<dns.LookupAddress[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('lookup timed out')), LOOKUP_TIMEOUT_MS);
    try {
      lookup(name, { all: true }, (error, answers) => {
        clearTimeout(timer);
        if (error) {
          reject(error);
          return;
        }
        // A replaced lookup may ignore `all`; accept a single answer too.
        const list: unknown[] = Array.isArray(answers) ? answers : [answers];
        resolve(
          list.map((answer) => {
            const address =
              typeof answer === 'string' ? answer : String((answer as { address?: unknown } | null)?.address ?? '');
            return { address, family: net.isIP(address) };
          }),
        );
      });
    } catch (error) {
      clearTimeout(timer);
      reject(error);
    }
  });
}

/** The addresses of this host's network interfaces, read again at most every few seconds. */
export function interfaceAddresses(): () => readonly string[] {
  let read = 0;
  let addresses: string[] = [];
  return () => {
    if (Date.now() - read > 5_000) {
      addresses = Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((entry) => entry.address));
      read = Date.now();
    }
    return addresses;
  };
}

/**
 * The canonical forms of `hostAddresses()`, parsed again only when it answers with a new list
 * (the interfaces' list changes every few seconds at most), not on every request.
 */
export function canonicalHostAddresses(hostAddresses: () => readonly string[]): () => ReadonlySet<string> {
  let source: readonly string[] | undefined;
  let canonical = new Set<string>();
  return () => {
    const current = hostAddresses();
    if (current !== source) {
      source = current;
      canonical = new Set(current.map(canonicalAddress).filter((address): address is string => address !== null));
    }
    return canonical;
  };
}

/** What kind of address `ip` is for this route: non-public, this host's own, or null (public). */
function categorize(ip: string, hostAddresses: () => ReadonlySet<string>): AddressCategory | null {
  const category = classifyAddress(ip);
  if (category !== null) return category;
  const canonical = canonicalAddress(ip);
  return canonical !== null && hostAddresses().has(canonical) ? 'this-host' : null;
}

/**
 * Whether a connection to `ip` arrives at this host: its loopback, the unspecified address (which
 * the kernel takes for this host) or one of its interfaces' addresses, whatever the policy allows.
 */
function isThisHost(ip: string, category: AddressCategory | null, hostAddresses: () => ReadonlySet<string>): boolean {
  if (category === 'loopback' || category === 'unspecified' || category === 'this-host') return true;
  const canonical = canonicalAddress(ip);
  return canonical !== null && hostAddresses().has(canonical);
}

/** Whether `ip` on the request's port is one of the engine's own listeners (engine-ports.ts). */
function isEngineListener(ip: string, category: AddressCategory | null, hostAddresses: () => ReadonlySet<string>, target: TargetPort | undefined): boolean {
  return target !== undefined && target.enginePorts.has(target.port) && isThisHost(ip, category, hostAddresses);
}

/**
 * The verdict on a request to `hostname`. With `target`, this host's addresses on the engine's own
 * ports are refused too, after the allow list: no range opens them (decisions.md 120).
 */
export async function checkTarget(
  hostname: string,
  allowed: readonly AllowedRange[],
  lookup: typeof dns.lookup,
  hostAddresses: () => ReadonlySet<string>,
  target?: TargetPort,
): Promise<TargetCheck> {
  const host = canonicalHost(hostname);
  if (host === null) {
    return { outcome: 'failed', statusCode: 400, reason: `${JSON.stringify(hostname)} is not a valid host` };
  }
  const literalFamily = net.isIP(host);
  if (literalFamily !== 0) {
    const category = categorize(host, hostAddresses);
    if (!isAllowedBy(host, category, allowed)) {
      const reason = `${host} is ${categoryWords(category ?? 'invalid')} and is not allowed`;
      return { outcome: 'refused', reason, shown: { kind: 'address', host, category: category ?? 'invalid' }, for: category ?? 'invalid', address: host };
    }
    if (isEngineListener(host, category, hostAddresses, target)) {
      const port = target!.port;
      const reason = `${literalFamily === 6 ? `[${host}]` : host}:${port} is one of the engine's own listeners and is not allowed`;
      return { outcome: 'refused', reason, shown: { kind: 'engine-listener', host, port }, for: 'engine-listener', address: host };
    }
    return { outcome: 'allowed', addresses: [{ address: host, family: literalFamily }] };
  }
  if (METADATA_NAMES.has(host.replace(/\.+$/, ''))) {
    const reason = `${host} is a cloud metadata name and is not allowed`;
    return { outcome: 'refused', reason, shown: { kind: 'metadata-name', host }, for: 'metadata-name' };
  }
  let answers: dns.LookupAddress[];
  try {
    answers = await resolveName(lookup, host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    return { outcome: 'failed', statusCode: 502, reason: `could not resolve ${host}${code ? ` (${code})` : ''}` };
  }
  if (answers.length === 0) {
    return { outcome: 'failed', statusCode: 502, reason: `could not resolve ${host} (no addresses)` };
  }
  // One bad answer refuses the name: which answer a connection would use is not ours to choose.
  for (const { address } of answers) {
    const category = categorize(address, hostAddresses);
    if (!isAllowedBy(address, category, allowed)) {
      return {
        outcome: 'refused',
        reason: `${host} resolves to ${address}, ${categoryWords(category ?? 'invalid')}, and is not allowed`,
        // The operator's internal addresses stay unknown to whoever is in the session.
        shown: { kind: 'leads-to-address', host },
        for: category ?? 'invalid',
        address,
      };
    }
    if (isEngineListener(address, category, hostAddresses, target)) {
      return {
        outcome: 'refused',
        reason: `${host} resolves to ${address}, where port ${target!.port} is one of the engine's own listeners, and is not allowed`,
        shown: { kind: 'leads-to-address', host },
        for: 'engine-listener',
        address,
      };
    }
  }
  return { outcome: 'allowed', addresses: answers };
}

// Answers every lookup of the connection with the addresses that were checked: a second, real
// lookup could return something else (DNS rebinding).
export function pinnedLookup(addresses: readonly dns.LookupAddress[]): typeof dns.lookup {
  const lookup = (hostname: string, options: unknown, callback?: unknown): void => {
    const done = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
    const settings: dns.LookupOptions =
      typeof options === 'number' ? { family: options } : typeof options === 'object' && options ? options : {};
    const family = settings.family === 'IPv4' ? 4 : settings.family === 'IPv6' ? 6 : (settings.family ?? 0);
    const candidates = family === 0 ? addresses : addresses.filter((answer) => answer.family === family);
    process.nextTick(() => {
      const first = candidates[0];
      if (!first) {
        const error: NodeJS.ErrnoException = new Error(`${MESSAGE_PREFIX}no checked IPv${family} address for ${hostname}`);
        error.code = 'ENOTFOUND';
        done(error);
      } else if (settings.all) {
        done(null, candidates.map((answer) => ({ ...answer })));
      } else {
        done(null, first.address, first.family);
      }
    });
  };
  return lookup as unknown as typeof dns.lookup;
}
