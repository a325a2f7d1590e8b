// Address classes as the endpoint policy sees them: IPv4 and IPv6 ranges, IPv4 embedded in IPv6
// (mapped, translated, NAT64, 6to4) judged as the IPv4 address it reaches, the known metadata
// addresses (WireServer, Alibaba, Oracle, AWS IPv6), and the own-port check in every spelling.
import { describe, expect, it } from 'vitest';
import { isIP } from 'node:net';
import { addressProblem, canonicalAddress, classifyAddress, ipv4Octets } from '../../../src/worker/store/address-policy.js';

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
    ['168.63.129.16', 'metadata'],
    ['192.0.0.192', 'metadata'],
    ['::ffff:168.63.129.16', 'metadata'],
    ['::ffff:a83f:8110', 'metadata'],
    ['64:ff9b::100.100.100.200', 'metadata'],
    ['2002:a83f:8110::1', 'metadata'],
    ['::ffff:0:a9fe:a9fe', 'link-local'],
    ['2002:7f00:1::', 'loopback'],
    ['::FFFF:7F00:1', 'loopback'],
    ['FD00:EC2:0:0:0:0:0:254', 'metadata'],
    ['2002:a00:1::1', 'unicast'],
  ])('classifies %s as %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });
});

describe('canonicalAddress', () => {
  it.each([
    ['192.0.2.2', '192.0.2.2'],
    ['::ffff:192.0.2.2', '192.0.2.2'],
    ['::ffff:c000:202', '192.0.2.2'],
    ['0:0:0:0:0:FFFF:C000:0202', '192.0.2.2'],
    ['::ffff:0:c000:202', '192.0.2.2'],
    ['64:ff9b::c000:202', '192.0.2.2'],
    ['2002:c000:202::1', '192.0.2.2'],
    ['2001:DB8:0:0::1', '2001:db8::1'],
    ['::1', '::1'],
  ])('reads %s as %s', (address, canonical) => {
    expect(canonicalAddress(address)).toBe(canonical);
  });
});

describe('the own-port check', () => {
  const policy = { allowLoopbackEndpoints: false, ownPorts: new Set([80, 8404]), localAddresses: new Set(['192.0.2.2', '2001:db8::2']), maxEndpointsPerService: 1000 };

  it.each(['192.0.2.2', '::ffff:192.0.2.2', '::ffff:c000:202', '64:ff9b::c000:202', '2002:c000:202::', '2001:0db8:0000::0002'])(
    "refuses HAProxy's own host written as %s on HAProxy's own port",
    (address) => {
      expect(addressProblem(address, [8404], policy)).toBe("is HAProxy's own host on HAProxy's own port 8404");
      expect(addressProblem(address, [8080], policy)).toBeNull();
    },
  );

  it('refuses WireServer and the other metadata addresses on any port, in any spelling', () => {
    for (const address of ['168.63.129.16', '::ffff:168.63.129.16', '100.100.100.200', '192.0.0.192', 'fd00:ec2::254']) {
      expect(addressProblem(address, [80], policy), address).toBe('is a cloud metadata address');
    }
  });
});

describe('ipv4Octets', () => {
  it.each(['10.0.0.1', '0.0.0.0', '255.255.255.255', '1.22.133.9', '01.2.3.4', '1.2.3.04', '256.1.1.1', '1.2.3', '1.2.3.4.5', '1.2.3.', '.1.2.3', '1..2.3', '1.2.3.4 ', ' 1.2.3.4', '1.2.3.4\n', '1.2.3.-4', '1e1.2.3.4', '::ffff:1.2.3.4', '', '1000.1.1.1', '00.1.1.1', '1.2.3.4%eth0', '١.2.3.4'])(
    'accepts %j exactly when node:net takes it for an IPv4 address, with its octets',
    (address) => {
      const octets = ipv4Octets(address);
      expect(octets !== undefined).toBe(isIP(address) === 4);
      if (octets !== undefined) expect(octets.join('.')).toBe(address);
    },
  );
});
