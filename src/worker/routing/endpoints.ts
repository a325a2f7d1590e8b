// Endpoint resolution: an Ingress backend reference (Service and port) to the ready addresses
// behind it, via the Service's port name and its EndpointSlices. A missing Service or port is a
// warning and an empty backend, never an error, so one bad Ingress cannot fail the render.
import type { ModelOptions } from './model.js';
import type { StoreReader } from './model-source.js';

/** An Ingress backend: a Service and one of its ports, by number or by name. */
export interface BackendRef {
  service: { name: string; port: { number?: number; name?: string } };
}

/** Ready endpoint addresses for a backend reference, sorted, as `ip:port`. */
export function resolveEndpoints(reader: StoreReader & { warn(message: string): void }, options: ModelOptions, ns: string, ref: BackendRef, owner: string): string[] {
  const service = reader.getSingle(options.stores.services, [ns, ref.service.name]);
  if (service === undefined) {
    reader.warn(`${owner}: service ${ns}/${ref.service.name} not found; its backend has no servers`);
    return [];
  }
  const ports = ((service.spec as { ports?: { name?: string; port: number }[] }).ports ?? []);
  const servicePort = ports.find((p) =>
    ref.service.port.number !== undefined ? p.port === ref.service.port.number : p.name === ref.service.port.name,
  );
  if (servicePort === undefined) {
    const wanted = ref.service.port.number ?? ref.service.port.name;
    reader.warn(`${owner}: service ${ns}/${ref.service.name} has no port ${String(wanted)}; its backend has no servers`);
    return [];
  }
  const portName = servicePort.name ?? '';
  const addresses = new Set<string>();
  for (const slice of reader.fetch(options.stores.endpointSlices, [ns, ref.service.name])) {
    const slicePort = ((slice.ports as { name?: string; port: number }[] | undefined) ?? []).find((p) => (p.name ?? '') === portName);
    if (slicePort === undefined) continue;
    for (const endpoint of (slice.endpoints as { addresses: string[]; conditions?: { ready?: boolean } }[] | undefined) ?? []) {
      if (endpoint.conditions?.ready === false) continue;
      for (const address of endpoint.addresses) {
        addresses.add(address.includes(':') ? `[${address}]:${slicePort.port}` : `${address}:${slicePort.port}`);
      }
    }
  }
  return [...addresses].sort();
}
