// Endpoint resolution: an Ingress backend reference (Service and port) to the ready addresses
// behind it, via the Service's port name and its EndpointSlices. Only accepted views are read, so
// an address the guard refused (address-policy.ts) never becomes a server, and at most
// `values.maxEndpointsPerService` addresses are taken (with a warning naming the Service). A
// missing Service or port is a warning and an empty backend, never an error.
import type { KubeObject } from '../protocol.js';
import { activeGuardContext } from '../store/guard-context.js';
import { acceptedView } from '../store/object-guard.js';
import type { ModelOptions } from './model.js';
import type { StoreReader } from './model-source.js';
import type { Finding } from './findings.js';

/** An Ingress backend: a Service and one of its ports, by number or by name. */
export interface BackendRef {
  service: { name: string; port: { number?: number; name?: string } };
}

interface SlicePort {
  name?: string;
  port: number;
}

interface SliceEndpoint {
  addresses: string[];
  conditions?: { ready?: boolean };
}

/**
 * Ready endpoint addresses for a backend reference, sorted, as `ip:port` (at most the cap).
 * `known` is the Service the caller has just read through `reader` at the same keys, when it
 * found one: reading it again would record nothing new.
 */
export function resolveEndpoints(reader: StoreReader & { warn(message: string, finding?: Finding): void }, options: ModelOptions, ns: string, ref: BackendRef, owner: string, name?: string, known?: KubeObject): string[] {
  // A Service or port that does not exist is a finding on the Ingress (BackendNotFound).
  const notFound: Finding | undefined = name === undefined ? undefined : { code: 'BackendNotFound', scope: 'path', namespace: ns, name };
  const found = known ?? reader.getSingle(options.stores.services, [ns, ref.service.name]);
  const service = found === undefined ? undefined : acceptedView(found);
  if (service === undefined) {
    reader.warn(`${owner}: service ${ns}/${ref.service.name} not found; its backend has no servers`, notFound);
    return [];
  }
  const ports = (service.spec as { ports?: SlicePort[] }).ports ?? [];
  const servicePort = ports.find((p) =>
    ref.service.port.number !== undefined ? p.port === ref.service.port.number : p.name === ref.service.port.name,
  );
  if (servicePort === undefined) {
    const wanted = ref.service.port.number ?? ref.service.port.name;
    reader.warn(`${owner}: service ${ns}/${ref.service.name} has no port ${String(wanted)}; its backend has no servers`, notFound);
    return [];
  }
  const portName = servicePort.name ?? '';
  const addresses = new Set<string>();
  for (const raw of reader.fetch(options.stores.endpointSlices, [ns, ref.service.name])) {
    const slice = acceptedView(raw);
    if (slice === undefined) continue;
    const slicePort = ((slice.ports as SlicePort[] | undefined) ?? []).find((p) => (p.name ?? '') === portName);
    if (slicePort === undefined) continue;
    for (const endpoint of (slice.endpoints as SliceEndpoint[] | undefined) ?? []) {
      if (endpoint.conditions?.ready === false) continue;
      for (const address of endpoint.addresses) {
        addresses.add(address.includes(':') ? `[${address}]:${slicePort.port}` : `${address}:${slicePort.port}`);
      }
    }
  }
  const sorted = [...addresses].sort();
  const cap = activeGuardContext().policy.maxEndpointsPerService;
  if (sorted.length <= cap) return sorted;
  reader.warn(`${owner}: service ${ns}/${ref.service.name} has ${sorted.length} ready endpoints, over values.maxEndpointsPerService (${cap}); only the first ${cap} are used`);
  return sorted.slice(0, cap);
}
