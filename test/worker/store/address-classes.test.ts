// Address classes as the endpoint policy sees them: IPv4 and IPv6 ranges, IPv4 embedded in IPv6
// (mapped and NAT64) judged as the IPv4 address it reaches, and the known metadata addresses.
import { describe, expect, it } from 'vitest';
import { classifyAddress } from '../../../src/worker/store/address-policy.js';

describe('classifyAddress', () => {
  it.each([
    ['10.0.0.1', 'unicast'],
    ['2001:db8::1', 'unicast'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::10.0.0.1', 'reserved'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
  ])('classifies %s as %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });
});
