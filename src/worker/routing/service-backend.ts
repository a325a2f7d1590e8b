// The servers behind one Ingress backend reference. A Service with endpoints resolves through its
// EndpointSlices (endpoints.ts); an ExternalName Service, when `externalNameServices` is on,
// becomes one server at its DNS name, resolved by HAProxy at run time, on the port the Ingress
// names. It is off by default because no check here can see what a name resolves to
// (`127.0.0.1.nip.io`, the ingress's own public host). The Service check judged the name against
// the ports the Service lists; the port used is only known here, so HAProxy's own host on one of
// HAProxy's own ports is refused here too. A Service that cannot be routed (missing, no such port,
// no ready endpoints, an unsupported type or external name, ExternalName while off) is a warning
// and an empty backend.
import { isIP } from 'node:net';
import type { KubeObject } from '../protocol.js';
import { addressProblem } from '../store/address-policy.js';
import { activeGuardContext } from '../store/guard-context.js';
import { isLoopbackName } from '../store/service-check.js';
import { resolveEndpoints, type BackendRef } from './endpoints.js';
import type { ModelOptions } from './model.js';
import type { RecordedReads } from './recorded-reads.js';

export interface ServiceServers {
  /** The Service, when it exists and passed the object checks. */
  readonly service: KubeObject | undefined;
  /** `address:port` of each server, sorted. */
  readonly addresses: readonly string[];
  /** The addresses are DNS names. */
  readonly dns: boolean;
}

const ENDPOINT_TYPES = new Set(['ClusterIP', 'NodePort', 'LoadBalancer']);
/** A lowercase DNS name of at most 253 characters; a trailing dot is dropped before the check. */
const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;

export function serviceServers(reads: RecordedReads, options: ModelOptions, ns: string, ref: BackendRef, owner: string, name?: string): ServiceServers {
  const service = reads.getSingle(options.stores.services, [ns, ref.service.name]);
  const spec = (service?.spec ?? {}) as { type?: unknown; externalName?: unknown; ports?: { name?: string; port: number }[] };
  const where = `${owner}: service ${ns}/${ref.service.name}`;
  if (service !== undefined && spec.type === 'ExternalName') {
    if (!options.externalNameServices) {
      reads.warn(`${where} is an ExternalName Service, which is not routed unless values.externalNameServices is true (--set externalNameServices=true); its backend has no servers`);
      return { service, addresses: [], dns: false };
    }
    const address = externalAddress(spec, ref, options, where, reads);
    return { service, addresses: address === undefined ? [] : [address], dns: true };
  }
  if (service !== undefined && spec.type !== undefined && !ENDPOINT_TYPES.has(spec.type as string)) {
    reads.warn(`${where} has the unsupported type ${JSON.stringify(spec.type)}; its backend has no servers`);
    return { service, addresses: [], dns: false };
  }
  const logged = reads.log.length;
  const addresses = resolveEndpoints(reads, options, ns, ref, owner, name, service);
  // resolveEndpoints warns about a missing Service or port; an empty result without a warning
  // is a Service without ready endpoints.
  if (addresses.length === 0 && reads.log.length === logged) reads.warn(`${where} has no ready endpoints; its backend has no servers`);
  return { service, addresses, dns: false };
}

/** `name:port` of an ExternalName Service, or undefined (with a warning) when it cannot be used. */
function externalAddress(
  spec: { externalName?: unknown; ports?: { name?: string; port: number }[] },
  ref: BackendRef,
  options: ModelOptions,
  where: string,
  reads: RecordedReads,
): string | undefined {
  const raw = typeof spec.externalName === 'string' ? spec.externalName.replace(/\.$/, '') : '';
  const problem = externalNameProblem(raw, options);
  if (problem !== undefined) {
    reads.warn(`${where}: externalName ${JSON.stringify(spec.externalName)} ${problem}; its backend has no servers`);
    return undefined;
  }
  const port = ref.service.port.number ?? (spec.ports ?? []).find((p) => p.name === ref.service.port.name)?.port;
  if (port === undefined || !Number.isInteger(port) || port < 1 || port > 65535) {
    reads.warn(`${where} has no port ${String(ref.service.port.number ?? ref.service.port.name)}; its backend has no servers`);
    return undefined;
  }
  const policy = activeGuardContext().policy;
  const own = isIP(raw) !== 0 ? addressProblem(raw, [port], policy) : isLoopbackName(raw) && policy.ownPorts.has(port) ? `is HAProxy's own host on HAProxy's own port ${port}` : null;
  if (own !== null) {
    reads.warn(`${where}: externalName ${JSON.stringify(spec.externalName)} on port ${port} ${own}; its backend has no servers`);
    return undefined;
  }
  return isIP(raw) === 6 ? `[${raw}]:${port}` : `${raw}:${port}`;
}

/** Why an external name is refused, or undefined. Loopback follows `allowLoopbackEndpoints`. */
function externalNameProblem(name: string, options: ModelOptions): string | undefined {
  if (name.includes('%')) return 'has a zone ID';
  const family = isIP(name);
  if (family === 0 && !DNS_NAME.test(name)) return 'is not a DNS name';
  const lower = name.toLowerCase();
  const loopback = isLoopbackName(lower) || (family === 4 && lower.startsWith('127.')) || lower === '::1';
  if (loopback && !options.allowLoopbackEndpoints) return 'is a loopback address (allowLoopbackEndpoints is off)';
  if (family === 4 && (lower === '0.0.0.0' || lower.startsWith('169.254.') || Number(lower.split('.')[0]) >= 224)) return 'is not a routable address';
  if (family === 6 && (lower === '::' || /^fe[89ab]/.test(lower) || lower.startsWith('ff'))) return 'is not a routable address';
  return undefined;
}
