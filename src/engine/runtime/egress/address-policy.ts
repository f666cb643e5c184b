// The remote browser's address policy: which addresses are not public (loopback, private, link-local,
// metadata, every IPv4 and IPv6 spelling of them) and which ranges an operator allows anyway
// (decisions.md 25). Pure: no network, no DNS; the egress route applies it (egress-targets.ts).
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/** Every message of the egress route and its settings starts so. */
export const MESSAGE_PREFIX = 'remote-browser-kit egress: ';

/** Which addresses the remote browser may reach beyond the public internet. */
export interface EgressPolicy {
  /**
   * CIDR ranges (or single addresses) the operator allows even though they are not public,
   * e.g. `['127.0.0.0/8', '::1/128']` for tests and the local demo. A cloud metadata address
   * is only allowed by a range naming that exact address (a /32 or /128): a broad range such as
   * `169.254.0.0/16` or `0.0.0.0/0` is almost always meant for something else, and the metadata
   * service hands out the host's credentials.
   */
  allow: string[];
}

export type AddressCategory =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unique-local'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'carrier-grade-nat'
  | 'metadata'
  | 'reserved'
  | 'this-host'
  | 'invalid';

/** One parsed entry of `EgressPolicy.allow`. */
export interface AllowedRange {
  /** Normalised CIDR text; IPv4-mapped IPv6 ranges are rewritten as IPv4. */
  readonly cidr: string;
  readonly family: 4 | 6;
  readonly prefixLength: number;
  contains(ip: string): boolean;
}

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Address, number];

function cidrs(...texts: string[]): Cidr[] {
  return texts.map((text) => ipaddr.parseCIDR(text));
}

// First match wins: metadata addresses sit inside link-local, private and unique-local ranges
// but deserve their own, louder name.
const IPV4_CATEGORIES: ReadonlyArray<readonly [AddressCategory, Cidr[]]> = [
  ['metadata', cidrs('169.254.169.254/32', '168.63.129.16/32', '100.100.100.200/32')],
  ['unspecified', cidrs('0.0.0.0/8')],
  ['loopback', cidrs('127.0.0.0/8')],
  ['private', cidrs('10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16')],
  ['link-local', cidrs('169.254.0.0/16')],
  ['carrier-grade-nat', cidrs('100.64.0.0/10')],
  ['multicast', cidrs('224.0.0.0/4')],
  ['broadcast', cidrs('255.255.255.255/32')],
  [
    'reserved',
    cidrs(
      '240.0.0.0/4',
      '192.0.0.0/24',
      '192.0.2.0/24',
      '192.88.99.0/24',
      '198.18.0.0/15',
      '198.51.100.0/24',
      '203.0.113.0/24',
    ),
  ],
];

const IPV6_CATEGORIES: ReadonlyArray<readonly [AddressCategory, Cidr[]]> = [
  ['metadata', cidrs('fd00:ec2::254/128')],
  ['unspecified', cidrs('::/128')],
  ['loopback', cidrs('::1/128')],
  ['link-local', cidrs('fe80::/10')],
  ['unique-local', cidrs('fc00::/7')],
  ['multicast', cidrs('ff00::/8')],
  [
    'reserved',
    cidrs(
      'fec0::/10', // deprecated site-local: still routed internally on some old networks
      '64:ff9b:1::/48', // local-use NAT64
      '2001::/23', // IETF protocol assignments, Teredo included
      '2001:db8::/32',
      '3fff::/20',
    ),
  ],
];

// Only 2000::/3 is handed out as global unicast; anything else not named above is not the internet.
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
const IPV4_MAPPED = ipaddr.parseCIDR('::ffff:0:0/96');
const IPV4_TRANSLATED = ipaddr.parseCIDR('::ffff:0:0:0/96');
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');
const SIX_TO_FOUR = ipaddr.parseCIDR('2002::/16');

function matches(address: Address, range: Cidr): boolean {
  return address.kind() === range[0].kind() && address.match(range);
}

function parseAddress(ip: string): Address | null {
  const text = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  try {
    if (!net.isIPv6(text)) return ipaddr.IPv4.parse(text);
    // ipaddr.js reads the deprecated ::a.b.c.d as ::ffff:a.b.c.d; the URL parser keeps it as what
    // the kernel sees. The zone only picks an interface and cannot change the category.
    const canonical = new URL(`http://[${text.replace(/%.*$/, '')}]/`).hostname.slice(1, -1);
    return ipaddr.IPv6.parse(canonical);
  } catch {
    return null;
  }
}

// The kernel sends ::ffff:a.b.c.d to the IPv4 address itself, so it is that address.
function unwrapMapped(address: Address): Address {
  return address.kind() === 'ipv6' && matches(address, IPV4_MAPPED)
    ? ipv4FromBytes((address as ipaddr.IPv6).toByteArray(), 12)
    : address;
}

function ipv4FromBytes(bytes: number[], start: number): ipaddr.IPv4 {
  return new ipaddr.IPv4(bytes.slice(start, start + 4));
}

// IPv6 forms that carry an IPv4 address and, through a translator or relay, reach it.
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const bytes = address.toByteArray();
  if (matches(address, IPV4_MAPPED) || matches(address, IPV4_TRANSLATED) || matches(address, NAT64)) {
    return ipv4FromBytes(bytes, 12);
  }
  if (matches(address, SIX_TO_FOUR)) return ipv4FromBytes(bytes, 2);
  return null;
}

function categoryFrom(address: Address, table: ReadonlyArray<readonly [AddressCategory, Cidr[]]>): AddressCategory | null {
  for (const [category, ranges] of table) {
    if (ranges.some((range) => matches(address, range))) return category;
  }
  return null;
}

function classifyParsed(address: Address): AddressCategory | null {
  if (address.kind() === 'ipv4') return categoryFrom(address, IPV4_CATEGORIES);
  const v6 = address as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) return categoryFrom(embedded, IPV4_CATEGORIES);
  const category = categoryFrom(v6, IPV6_CATEGORIES);
  if (category) return category;
  return matches(v6, IPV6_GLOBAL_UNICAST) ? null : 'reserved';
}

/**
 * What kind of non-public address `ip` is, or `null` for a public one. Accepts IPv4 in any
 * spelling `inet_aton` accepts (`0x7f.0.0.1`, `2130706433`, `127.1`), IPv6 with or without
 * brackets, and IPv6 forms that embed IPv4 (mapped, NAT64, 6to4), which are judged by the IPv4.
 * Anything unparseable is `'invalid'`, never public.
 */
export function classifyAddress(ip: string): AddressCategory | null {
  const address = parseAddress(ip);
  return address ? classifyParsed(address) : 'invalid';
}

/** Parses `EgressPolicy.allow`; throws an error naming the first entry that is not a range. */
export function parseAllowRanges(ranges: readonly string[]): AllowedRange[] {
  return ranges.map((entry) => {
    const text = typeof entry === 'string' ? entry.trim() : '';
    const isRange = text.includes('/')
      ? ipaddr.IPv4.isValidCIDRFourPartDecimal(text) || ipaddr.IPv6.isValidCIDR(text)
      : ipaddr.IPv4.isValidFourPartDecimal(text) || ipaddr.IPv6.isValid(text);
    if (!isRange) {
      throw new Error(
        `${MESSAGE_PREFIX}allowed range ${JSON.stringify(entry)} is not an IP range; ` +
          `write it in CIDR form, e.g. "127.0.0.0/8" or "::1/128"`,
      );
    }
    let [address, prefixLength] = text.includes('/')
      ? ipaddr.parseCIDR(text)
      : ([ipaddr.parse(text), text.includes(':') ? 128 : 32] as Cidr);
    // Addresses are unwrapped before matching, so a mapped range must be unwrapped too to match anything.
    if (address.kind() === 'ipv6' && prefixLength >= 96 && matches(address, IPV4_MAPPED)) {
      address = ipv4FromBytes(address.toByteArray(), 12);
      prefixLength -= 96;
    }
    return makeAllowedRange([address, prefixLength]);
  });
}

function makeAllowedRange(range: Cidr): AllowedRange {
  const [address, prefixLength] = range;
  const network =
    address.kind() === 'ipv4'
      ? ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${prefixLength}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${prefixLength}`);
  return {
    cidr: `${network.toString()}/${prefixLength}`,
    family: address.kind() === 'ipv4' ? 4 : 6,
    prefixLength,
    contains(ip: string): boolean {
      const parsed = parseAddress(ip);
      return parsed !== null && matches(unwrapMapped(parsed), range);
    },
  };
}

export function isAllowedBy(ip: string, category: AddressCategory | null, ranges: readonly AllowedRange[]): boolean {
  if (category === null) return true;
  if (category === 'invalid') return false;
  return ranges.some(
    (range) =>
      range.contains(ip) && (category !== 'metadata' || range.prefixLength === (range.family === 4 ? 32 : 128)),
  );
}

/** Whether the route would connect to `ip`: public, or inside a range the policy allows. */
export function isAddressAllowed(ip: string, policy: EgressPolicy | readonly AllowedRange[]): boolean {
  const ranges = Array.isArray(policy)
    ? (policy as readonly AllowedRange[])
    : parseAllowRanges((policy as EgressPolicy).allow);
  return isAllowedBy(ip, classifyAddress(ip), ranges);
}

/** One spelling per address: IPv4-mapped IPv6 as IPv4, IPv6 in full; null when unparseable. */
export function canonicalAddress(ip: string): string | null {
  const address = parseAddress(ip);
  if (!address) return null;
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) return (address as ipaddr.IPv6).toIPv4Address().toString();
  return address.kind() === 'ipv6' ? (address as ipaddr.IPv6).toNormalizedString() : address.toString();
}
