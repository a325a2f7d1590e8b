// Which endpoint addresses a tenant may point HAProxy at. Always refused: unspecified, link-local
// (cloud metadata included), multicast, reserved and broadcast addresses, IPv6 zone IDs (HAProxy
// refuses the whole config over `fe80::1%eth0`), and the known metadata addresses. Loopback is
// refused unless the policy allows it, and an address of HAProxy's own host on one of HAProxy's
// own ports always is. Every check reads the address in its canonical form (canonicalAddress):
// IPv4 embedded in IPv6 (IPv4-mapped ::ffff:a.b.c.d in any spelling, IPv4-translated
// ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002:aabb:ccdd::/48) is judged as the IPv4 address
// it reaches, so `::ffff:c000:202` is HAProxy's own host 192.0.2.2 as much as `192.0.2.2` is.
// IPv4-compatible addresses (::a.b.c.d, deprecated and unrouted) are refused as reserved.
import { isIP } from 'node:net';
import type { GuardPolicy } from './guard-context.js';

/**
 * Cloud metadata and platform services outside the link-local range (AWS, GCP and OpenStack use
 * 169.254.169.254, refused as link-local): Alibaba's metadata service, Azure's WireServer (which
 * hands out VM extension settings and certificates), Oracle Cloud's, and AWS's IMDS over IPv6.
 * Canonical forms (see canonicalAddress).
 */
const METADATA_ADDRESSES = new Set(['100.100.100.200', '168.63.129.16', '192.0.0.192', 'fd00:ec2::254']);

export type AddressClass = 'unicast' | 'loopback' | 'unspecified' | 'link-local' | 'multicast' | 'reserved' | 'metadata';

/** The problem with an endpoint address on `ports`, or null when HAProxy may be pointed at it. */
export function addressProblem(address: string, ports: readonly number[], policy: GuardPolicy): string | null {
  if (address.includes('%')) return 'has an IPv6 zone ID, which HAProxy refuses';
  // Nearly every endpoint is a plain IPv4 address: parsed once, it is its own canonical form.
  const octets = ipv4Octets(address);
  if (octets === undefined && isIP(address) === 0) return 'is not an IP address';
  const kind = octets === undefined ? classifyAddress(address) : METADATA_ADDRESSES.has(address) ? 'metadata' : classifyV4(octets);
  const normal = octets === undefined ? canonicalAddress(address) : address;
  switch (kind) {
    case 'unicast':
    case 'loopback': {
      if (kind === 'loopback' && !policy.allowLoopbackEndpoints) return 'is a loopback address (set values.allowLoopbackEndpoints to allow it)';
      const own = ports.find((port) => policy.ownPorts.has(port));
      if (own !== undefined && (kind === 'loopback' || canonicalLocal(policy.localAddresses).has(normal))) {
        return `is HAProxy's own host on HAProxy's own port ${own}`;
      }
      return null;
    }
    case 'unspecified':
      return 'is an unspecified address';
    case 'link-local':
      return 'is a link-local address (cloud metadata lives there)';
    case 'multicast':
      return 'is a multicast address';
    case 'reserved':
      return 'is a reserved or broadcast address';
    case 'metadata':
      return 'is a cloud metadata address';
    default: {
      const never: never = kind;
      return `is of unknown class ${String(never)}`;
    }
  }
}

const canonicalSets = new WeakMap<ReadonlySet<string>, ReadonlySet<string>>();

/** The canonical forms of the host's own addresses (as the policy lists them), computed once per set. */
function canonicalLocal(addresses: ReadonlySet<string>): ReadonlySet<string> {
  let canonical = canonicalSets.get(addresses);
  if (canonical === undefined) {
    canonical = new Set([...addresses].filter((a) => isIP(a) !== 0).map(canonicalAddress));
    canonicalSets.set(addresses, canonical);
  }
  return canonical;
}

/** The class of a valid IP address without a zone ID, judged by its canonical form. */
export function classifyAddress(address: string): AddressClass {
  const normal = canonicalAddress(address);
  if (METADATA_ADDRESSES.has(normal)) return 'metadata';
  if (isIP(normal) === 4) return classifyV4(normal.split('.').map(Number));
  const bytes = ipv6Bytes(normal);
  const zeroTo = (n: number): boolean => bytes.slice(0, n).every((b) => b === 0);
  if (zeroTo(15)) return bytes[15] === 0 ? 'unspecified' : bytes[15] === 1 ? 'loopback' : 'reserved';
  // Deprecated IPv4-compatible addresses (::a.b.c.d): nothing legitimate uses them.
  if (zeroTo(12)) return 'reserved';
  if (bytes[0] === 0xff) return 'multicast';
  if (bytes[0] === 0xfe && ((bytes[1] as number) & 0xc0) === 0x80) return 'link-local';
  return 'unicast';
}

/**
 * The form every address check reads: an IPv4 address as it is; an IPv6 address that embeds
 * an IPv4 address it reaches (IPv4-mapped, IPv4-translated, NAT64's 64:ff9b::/96, 6to4's
 * 2002::/16) as that IPv4 address; any other IPv6 address lower case and compressed, as Node
 * reports interface addresses. `address` must be a valid IP address without a zone ID.
 */
export function canonicalAddress(address: string): string {
  if (isIP(address) !== 6) return address;
  const bytes = ipv6Bytes(address);
  const zero = (from: number, to: number): boolean => bytes.slice(from, to).every((b) => b === 0);
  const mapped = zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff;
  const translated = zero(0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zero(10, 12);
  const nat64 = bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(4, 12);
  if (mapped || translated || nat64) return bytes.slice(12, 16).join('.');
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return bytes.slice(2, 6).join('.');
  return compressed(bytes);
}

/**
 * The octets of a dotted-quad IPv4 address, exactly as node:net's isIP accepts one (four decimal
 * numbers up to 255, no leading zeros), or undefined for anything else.
 */
export function ipv4Octets(address: string): number[] | undefined {
  const octets: number[] = [];
  const len = address.length;
  let i = 0;
  for (;;) {
    const start = i;
    let value = 0;
    while (i < len) {
      const c = address.charCodeAt(i);
      if (c < 48 || c > 57) break;
      value = value * 10 + (c - 48);
      i++;
    }
    const digits = i - start;
    if (digits === 0 || digits > 3 || value > 255 || (digits > 1 && address.charCodeAt(start) === 48)) return undefined;
    octets.push(value);
    if (octets.length === 4) return i === len ? octets : undefined;
    if (address.charCodeAt(i) !== 46) return undefined;
    i++;
  }
}

function classifyV4(octets: readonly number[]): AddressClass {
  const [a, b] = octets as [number, number, number, number];
  if (a === 0) return 'unspecified';
  if (a === 127) return 'loopback';
  if (a === 169 && b === 254) return 'link-local';
  if (a >= 224 && a <= 239) return 'multicast';
  if (a >= 240) return 'reserved';
  return 'unicast';
}

/** IPv6 bytes as text: lower case, the longest run of two or more zero groups as '::'. */
function compressed(bytes: readonly number[]): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] as number) << 8) | (bytes[i + 1] as number)).toString(16));
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLength) {
      best = i;
      bestLength = j - i;
    }
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLength).join(':')}`;
}

/** The 16 bytes of a valid IPv6 address (no zone ID), with an IPv4 tail when it has one. */
function ipv6Bytes(address: string): number[] {
  let text = address.toLowerCase();
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    const [a = 0, b = 0, c = 0, d = 0] = text.slice(lastColon + 1).split('.').map(Number);
    tail = [(a << 8) | b, (c << 8) | d];
    text = text.slice(0, lastColon + 1);
    if (!text.endsWith('::')) text = text.slice(0, -1);
  }
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const split = text.indexOf('::');
  const front = parse(split < 0 ? text : text.slice(0, split));
  const back = split < 0 ? [] : parse(text.slice(split + 2));
  const zeros = split < 0 ? 0 : Math.max(0, 8 - tail.length - front.length - back.length);
  const groups = [...front, ...new Array<number>(zeros).fill(0), ...back, ...tail];
  const bytes: number[] = [];
  for (const group of groups.slice(0, 8)) bytes.push((group >> 8) & 0xff, group & 0xff);
  while (bytes.length < 16) bytes.push(0);
  return bytes;
}
