// Source address lists (`allow-list`, alias `whitelist`; `deny-list`, alias `blacklist`):
// comma-separated IPv4 and IPv6 addresses and CIDR blocks, validated and normalized (host bits
// cleared, IPv6 compressed, /32 and /128 written as the address), duplicates dropped. A bad
// entry refuses the whole list, and with it the Ingress: an access rule is never half applied.
import { isIP, SocketAddress } from 'node:net';
import { bad, ok, type Parsed } from './values.js';

/** Entries of one list (a 4,096-character annotation holds fewer). */
export const MAX_SOURCES = 1000;
/** Patterns per `acl` line: HAProxy reads at most 64 words a line. */
export const SOURCES_PER_LINE = 32;

/** The normalized entries of a source list, in the order given. */
export function parseSourceList(raw: string): Parsed<readonly string[]> {
  const items = raw.split(',').map((item) => item.trim());
  if (items.length === 1 && items[0] === '') return bad('is empty; give IP addresses or CIDR blocks, comma-separated');
  if (raw.trim().startsWith('patterns/')) return bad('pattern files are not supported; list the addresses');
  if (items.length > MAX_SOURCES) return bad(`has ${items.length} entries, over the limit of ${MAX_SOURCES}`);
  const seen = new Set<string>();
  const list: string[] = [];
  for (const item of items) {
    const entry = normalizeSource(item);
    if (!entry.ok) return bad(`entry ${JSON.stringify(item)} ${entry.reason}`);
    if (!seen.has(entry.value)) {
      seen.add(entry.value);
      list.push(entry.value);
    }
  }
  return ok(list);
}

/** A list cut into `acl` lines of at most SOURCES_PER_LINE patterns (lines of one ACL name are ORed). */
export function sourceLines(list: readonly string[]): readonly (readonly string[])[] {
  const lines: (readonly string[])[] = [];
  for (let i = 0; i < list.length; i += SOURCES_PER_LINE) lines.push(Object.freeze(list.slice(i, i + SOURCES_PER_LINE)));
  return Object.freeze(lines);
}

/** One address or CIDR block, normalized. */
export function normalizeSource(item: string): Parsed<string> {
  if (item === '') return bad('is empty (a stray comma?)');
  const slash = item.indexOf('/');
  const address = slash < 0 ? item : item.slice(0, slash);
  const lengthText = slash < 0 ? undefined : item.slice(slash + 1);
  if (address.includes('%')) return bad('has a zone ID');
  const family = isIP(address);
  if (family === 0) return bad('is not an IPv4 or IPv6 address (or CIDR block)');
  const bits = family === 4 ? 32 : 128;
  let length = bits;
  if (lengthText !== undefined) {
    if (!/^(0|[1-9]\d{0,2})$/.test(lengthText) || Number(lengthText) > bits) return bad(`has a prefix length that is not 0 to ${bits}`);
    length = Number(lengthText);
  }
  const bytes = family === 4 ? address.split('.').map(Number) : ipv6Bytes(address);
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, length - i * 8));
    bytes[i] = (bytes[i] as number) & (0xff << (8 - keep)) & 0xff;
  }
  const text = family === 4 ? bytes.join('.') : compressIpv6(bytes);
  return ok(length === bits ? text : `${text}/${length}`);
}

/** The 16 bytes of an IPv6 address that `isIP` accepted (`::` and an IPv4 tail included). */
function ipv6Bytes(address: string): number[] {
  let text = address.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4 !== null) {
    const [a, b, c, d] = (v4[1] as string).split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.flatMap((group) => {
    const value = parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
}

function compressIpv6(bytes: readonly number[]): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] as number) << 8) | (bytes[i + 1] as number)).toString(16));
  return new SocketAddress({ address: groups.join(':'), family: 'ipv6' }).address;
}
