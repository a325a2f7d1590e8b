// The routing model behind the default template set, as templates see it: backends with their
// server slots, host and path route tables, and TLS certificates; plus the options it is built
// with. Plain data and no imports, so the builder and the route index can both depend on it
// without depending on each other.

export interface Server {
  readonly name: string;
  /** `ip:port`, `[ipv6]:port`, or the parking address of an empty slot. */
  readonly address: string;
  readonly enabled: boolean;
}

export interface Backend {
  readonly name: string;
  readonly namespace: string;
  readonly ingress: string;
  readonly service: string;
  readonly port: string;
  readonly servers: readonly Server[];
}

export interface RouteEntry {
  readonly key: string;
  readonly backend: string;
}

/** The five route tables of the model, kept up to date by the route index. */
export interface RouteTables {
  /** `host/path` keys. */
  readonly hostExact: readonly RouteEntry[];
  /** `host/prefix/` keys, longest first (map_beg takes the first match). */
  readonly hostPrefix: readonly RouteEntry[];
  /** Regular expressions for wildcard hosts, longest path first. */
  readonly hostRegex: readonly RouteEntry[];
  /** Rules without a host: path keys. */
  readonly pathExact: readonly RouteEntry[];
  readonly pathPrefix: readonly RouteEntry[];
}

export interface Certificate {
  /** File name under the certificates directory. */
  readonly name: string;
  readonly pem: string;
  readonly hosts: readonly string[];
}

export interface RoutingModel extends RouteTables {
  readonly backends: readonly Backend[];
  readonly certificates: readonly Certificate[];
  /** The slot assignment, written as an auxiliary file and read back as the next baseline. */
  readonly serverSlotsFile: string;
}

export interface ModelOptions {
  /** Accept Ingresses of this class. @default 'haproxy' */
  readonly ingressClass: string;
  /** Also accept Ingresses without a class. @default true */
  readonly watchIngressWithoutClass: boolean;
  /** Slots per backend, and the block size by which a backend grows. @default 10 */
  readonly serverSlots: number;
  readonly stores: { readonly ingresses: string; readonly services: string; readonly endpointSlices: string; readonly secrets: string };
}

export function modelOptions(values: Readonly<Record<string, unknown>>): ModelOptions {
  const slots = Number(values.serverSlots ?? 10);
  return {
    ingressClass: String(values.ingressClass ?? 'haproxy'),
    watchIngressWithoutClass: values.watchIngressWithoutClass !== false && values.watchIngressWithoutClass !== 'false',
    serverSlots: Number.isInteger(slots) && slots > 0 ? slots : 10,
    stores: { ingresses: 'ingresses', services: 'services', endpointSlices: 'endpointslices', secrets: 'secrets' },
  };
}
