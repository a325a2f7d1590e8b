// The addresses the leader publishes in `status.loadBalancer.ingress` of the Ingresses it serves:
// fixed ones from `--publish-address A[,B…]` (IPs or host names, checked), or those of the
// `--publish-service` Service: its load-balancer ingress IPs and host names, else its
// `externalIPs`, else its ClusterIP. Whatever comes from the Service is checked the same way, and
// capped, before it is written into other objects.
import { isIP } from 'node:net';
import type { KubeObject } from '../../worker/protocol.js';

/** One entry of `status.loadBalancer.ingress`. */
export interface LoadBalancerIngress {
  readonly ip?: string;
  readonly hostname?: string;
}

/** At most this many addresses are published (a Service is tenant-adjacent input). */
export const MAX_PUBLISHED_ADDRESSES = 32;
const HOST_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The entry for one address, or a message saying why it is neither an IP nor a host name. */
export function addressEntry(text: string): LoadBalancerIngress | string {
  if (isIP(text) !== 0) return { ip: text };
  const host = text.toLowerCase();
  if (host.length === 0 || host.length > 253 || !host.split('.').every((label) => HOST_LABEL.test(label))) {
    return `${JSON.stringify(text.slice(0, 100))} is neither an IP address nor a DNS host name`;
  }
  return { hostname: host };
}

/** `--publish-address A[,B…]`; throws a TypeError naming the flag and the bad entry. */
export function parsePublishAddresses(text: string): LoadBalancerIngress[] {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.some((part) => part === '')) throw new TypeError(`--publish-address ${JSON.stringify(text)}: an entry is empty`);
  if (parts.length > MAX_PUBLISHED_ADDRESSES) throw new TypeError(`--publish-address names ${parts.length} addresses, over the limit of ${MAX_PUBLISHED_ADDRESSES}`);
  return parts.map((part) => {
    const entry = addressEntry(part);
    if (typeof entry === 'string') throw new TypeError(`--publish-address: ${entry}`);
    return entry;
  });
}

/** `--publish-service NS/NAME`; throws a TypeError when it is not that. */
export function parseServiceRef(text: string): { readonly namespace: string; readonly name: string } {
  const match = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9]*[a-z0-9])?)$/.exec(text);
  if (match === null || text.length > 317) throw new TypeError(`--publish-service ${JSON.stringify(text.slice(0, 100))} is not NAMESPACE/NAME`);
  return { namespace: match[1] as string, name: match[3] as string };
}

/**
 * The addresses of a Service, as ingress-nginx publishes them: load-balancer ingress entries,
 * else `spec.externalIPs`, else `spec.clusterIP` (none for a headless Service). Entries that are
 * not valid addresses are skipped; at most MAX_PUBLISHED_ADDRESSES are kept.
 */
export function serviceAddresses(service: KubeObject): LoadBalancerIngress[] {
  const status = service.status as { loadBalancer?: { ingress?: unknown } } | undefined;
  const spec = service.spec as { externalIPs?: unknown; clusterIP?: unknown } | undefined;
  const fromBalancer: LoadBalancerIngress[] = [];
  for (const item of asArray(status?.loadBalancer?.ingress)) {
    const raw = item as { ip?: unknown; hostname?: unknown } | null;
    const text = typeof raw?.ip === 'string' && raw.ip !== '' ? raw.ip : typeof raw?.hostname === 'string' ? raw.hostname : undefined;
    const entry = text === undefined ? undefined : addressEntry(text);
    if (entry !== undefined && typeof entry !== 'string') fromBalancer.push(entry);
  }
  if (fromBalancer.length > 0) return capped(fromBalancer);
  const external = asArray(spec?.externalIPs).filter((ip): ip is string => typeof ip === 'string' && isIP(ip) !== 0);
  if (external.length > 0) return capped(external.map((ip) => ({ ip })));
  const clusterIP = spec?.clusterIP;
  return typeof clusterIP === 'string' && isIP(clusterIP) !== 0 ? [{ ip: clusterIP }] : [];
}

/** A stable text of a list of entries, for comparing what is written with what is wanted. */
export function addressesText(addresses: readonly LoadBalancerIngress[] | undefined): string {
  return (addresses ?? []).map((a) => (a.ip !== undefined ? `ip:${a.ip}` : `host:${a.hostname ?? ''}`)).join(',');
}

/** The entries in an Ingress's `status.loadBalancer.ingress` as read from the API. */
export function ingressStatusAddresses(ingress: KubeObject | undefined): LoadBalancerIngress[] {
  const status = ingress?.status as { loadBalancer?: { ingress?: unknown } } | undefined;
  const out: LoadBalancerIngress[] = [];
  for (const item of asArray(status?.loadBalancer?.ingress)) {
    const raw = item as { ip?: unknown; hostname?: unknown } | null;
    if (typeof raw?.ip === 'string' && raw.ip !== '') out.push({ ip: raw.ip });
    else if (typeof raw?.hostname === 'string' && raw.hostname !== '') out.push({ hostname: raw.hostname });
  }
  return out;
}

function asArray(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

function capped(entries: LoadBalancerIngress[]): LoadBalancerIngress[] {
  return entries.slice(0, MAX_PUBLISHED_ADDRESSES);
}
