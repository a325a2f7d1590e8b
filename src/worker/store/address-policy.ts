// Which endpoint addresses a tenant may point HAProxy at. Always refused: unspecified, link-local
// (cloud metadata included), multicast, reserved and broadcast addresses, IPv6 zone IDs (HAProxy
// refuses the whole config over `fe80::1%eth0`), and the known metadata addresses. Loopback is
// refused unless the policy allows it, and an address of HAProxy's own host on one of HAProxy's
// own ports always is. IPv4 embedded in IPv6 (::ffff:a.b.c.d, 64:ff9b::a.b.c.d) is judged as the
// IPv4 address it reaches.
import { isIP } from 'node:net';
import type { GuardPolicy } from './guard-context.js';

/** Cloud metadata services outside the link-local range (Alibaba; AWS over IPv6). */
const METADATA_ADDRESSES = new Set(['100.100.100.200', 'fd00:ec2::254']);

export type AddressClass = 'unicast' | 'loopback' | 'unspecified' | 'link-local' | 'multicast' | 'reserved' | 'metadata';

/** The problem with an endpoint address on `ports`, or null when HAProxy may be pointed at it. */
export function addressProblem(address: string, ports: readonly number[], policy: GuardPolicy): string | null {
  if (address.includes('%')) return 'has an IPv6 zone ID, which HAProxy refuses';
  if (isIP(address) === 0) return 'is not an IP address';
  const kind = classifyAddress(address);
  switch (kind) {
    case 'unicast':
    case 'loopback': {
      if (kind === 'loopback' && !policy.allowLoopbackEndpoints) return 'is a loopback address (set values.allowLoopbackEndpoints to allow it)';
      const own = ports.find((port) => policy.ownPorts.has(port));
      if (own !== undefined && (kind === 'loopback' || policy.localAddresses.has(canonical(address)))) {
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

/** The class of a valid IP address without a zone ID. */
export function classifyAddress(address: string): AddressClass {
  if (METADATA_ADDRESSES.has(canonical(address))) return 'metadata';
  if (isIP(address) === 4) return classifyV4(address.split('.').map(Number));
  const bytes = ipv6Bytes(address);
  const zeroTo = (n: number): boolean => bytes.slice(0, n).every((b) => b === 0);
  if (zeroTo(10) && bytes[10] === 0xff && bytes[11] === 0xff) return classifyEmbedded(bytes);
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && bytes.slice(4, 12).every((b) => b === 0)) {
    return classifyEmbedded(bytes);
  }
  if (zeroTo(15)) return bytes[15] === 0 ? 'unspecified' : bytes[15] === 1 ? 'loopback' : 'reserved';
  // Deprecated IPv4-compatible addresses (::a.b.c.d): nothing legitimate uses them.
  if (zeroTo(12)) return 'reserved';
  if (bytes[0] === 0xff) return 'multicast';
  if (bytes[0] === 0xfe && ((bytes[1] as number) & 0xc0) === 0x80) return 'link-local';
  return 'unicast';
}

function classifyEmbedded(bytes: readonly number[]): AddressClass {
  const v4 = bytes.slice(12, 16);
  return METADATA_ADDRESSES.has(v4.join('.')) ? 'metadata' : classifyV4(v4);
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

/** Lower case, and IPv6 in its compressed form as Node reports interface addresses. */
function canonical(address: string): string {
  if (isIP(address) !== 6) return address;
  const bytes = ipv6Bytes(address);
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] as number) << 8) | (bytes[i + 1] as number)).toString(16));
  // The longest run of zero groups (at least two) becomes '::'.
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
