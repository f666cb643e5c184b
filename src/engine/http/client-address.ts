// The address of the client behind a request: the connection's peer, or, when that peer is one
// of the operator's trusted proxies (`trustedProxies`, address ranges), the address the proxies
// report in X-Forwarded-For, read from the right: the first address that is not itself a trusted
// proxy. A client cannot choose its own address by sending the header: from any peer that is not
// trusted the header is ignored. (Share-link look-up limits and v6's keyless budget count by it.)
import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

function parse(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  try {
    const parsed = ipaddr.parse(address.trim());
    // IPv4-mapped IPv6 (::ffff:10.0.0.1) is the IPv4 address it carries.
    return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? (parsed as ipaddr.IPv6).toIPv4Address() : parsed;
  } catch {
    return undefined;
  }
}

/** Checks the operator's ranges ("10.0.0.0/8", "::1/128", or a single address); throws naming a bad one. */
export function parseTrustedProxies(ranges: readonly string[]): Range[] {
  return ranges.map((range) => {
    try {
      return range.includes('/') ? ipaddr.parseCIDR(range) : ([ipaddr.parse(range), ipaddr.parse(range).kind() === 'ipv4' ? 32 : 128] as Range);
    } catch {
      throw new Error(`trustedProxies: "${range}" is not an address or a range such as 10.0.0.0/8`);
    }
  });
}

export function clientAddressResolver(ranges: readonly string[]): (request: IncomingMessage) => string {
  const trusted = parseTrustedProxies(ranges);
  const isTrusted = (address: string): boolean => {
    const parsed = parse(address);
    return parsed !== undefined && trusted.some(([base, bits]) => base.kind() === parsed.kind() && parsed.match(base, bits));
  };
  return (request) => {
    const peer = request.socket.remoteAddress ?? 'unknown';
    if (trusted.length === 0 || !isTrusted(peer)) return peer;
    const header = request.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : header ?? '').split(',').map((hop) => hop.trim()).filter(Boolean);
    for (let index = hops.length - 1; index >= 0; index--) {
      const hop = hops[index]!;
      if (parse(hop) === undefined) return peer; // a malformed hop: count the proxy, not a made-up address
      if (!isTrusted(hop)) return parse(hop)!.toString();
    }
    return peer;
  };
}
