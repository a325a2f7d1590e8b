import { describe, expect, it } from 'vitest';
import { parsePublishAddresses, parseServiceRef, serviceAddresses } from '../../../src/main/status/load-balancer-addresses.js';
import type { KubeObject } from '../../../src/worker/protocol.js';

const service = (spec: Record<string, unknown>, status?: unknown): KubeObject => ({ metadata: { name: 'lb', namespace: 'ingress' }, spec, ...(status === undefined ? {} : { status }) });

describe('published addresses', () => {
  it('takes a LoadBalancer Service ingress IPs and host names first, skipping entries that are not addresses', () => {
    const svc = service({ type: 'LoadBalancer', clusterIP: '10.0.0.5', externalIPs: ['192.0.2.9'] }, { loadBalancer: { ingress: [{ ip: '203.0.113.7' }, { hostname: 'LB.Example.com' }, { hostname: 'bad host\n' }, {}] } });
    expect(serviceAddresses(svc)).toEqual([{ ip: '203.0.113.7' }, { hostname: 'lb.example.com' }]);
  });

  it('falls back to externalIPs, then to the ClusterIP, and to nothing for a headless Service', () => {
    expect(serviceAddresses(service({ clusterIP: '10.0.0.5', externalIPs: ['192.0.2.9', 'nope'] }))).toEqual([{ ip: '192.0.2.9' }]);
    expect(serviceAddresses(service({ clusterIP: '10.0.0.5' }, { loadBalancer: {} }))).toEqual([{ ip: '10.0.0.5' }]);
    expect(serviceAddresses(service({ clusterIP: 'None' }))).toEqual([]);
  });

  it('parses --publish-address as IPs and host names and names a bad entry', () => {
    expect(parsePublishAddresses('203.0.113.7, 2001:db8::1,lb.example.com')).toEqual([{ ip: '203.0.113.7' }, { ip: '2001:db8::1' }, { hostname: 'lb.example.com' }]);
    expect(() => parsePublishAddresses('203.0.113.7,exa mple')).toThrow(/--publish-address: "exa mple" is neither an IP address nor a DNS host name/);
    expect(() => parsePublishAddresses('a,,b')).toThrow(/an entry is empty/);
  });

  it('parses --publish-service as NAMESPACE/NAME', () => {
    expect(parseServiceRef('ingress/haproxy')).toEqual({ namespace: 'ingress', name: 'haproxy' });
    expect(() => parseServiceRef('haproxy')).toThrow(/--publish-service "haproxy" is not NAMESPACE\/NAME/);
  });
});
