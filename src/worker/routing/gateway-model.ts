// The Gateway API part of the routing model, as templates see it (`routing.gateway`): one
// frontend per bind (address and port) of our Gateways' listeners, each with its listeners in
// the order a request picks them (most specific hostname first), the map entries of its plain
// routes and its conditional match lines in the order of the spec's precedence (gateway-routes.ts). Backends are the model's own (`routing.backends`, one per
// HTTPRoute rule and backendRef but shared by a route's references to one Service port under the
// same filters and timeout, with server slots like an Ingress backend); a rule's filters
// ride on its backends (`backend.gateway`). Plus the acceptance results a status writer needs,
// as plain data. No imports beyond types: the builder and templates both depend on it.
import type { RedirectCode } from '../store/gateway-fields.js';

/** A header set, added or removed by a RequestHeaderModifier or ResponseHeaderModifier. */
export interface HeaderEdit {
  /** Lower case: names are case-insensitive. */
  readonly name: string;
  /** Checked plain text, written between double quotes (absent for `remove`). */
  readonly value?: string | undefined;
}

export interface HeaderEdits {
  readonly set: readonly HeaderEdit[];
  readonly add: readonly HeaderEdit[];
  readonly remove: readonly HeaderEdit[];
}

/** What an HTTPRoute rule does to the requests it sends to one of its backends. */
export interface GatewayFilters {
  readonly requestHeaders?: HeaderEdits | undefined;
  readonly responseHeaders?: HeaderEdits | undefined;
  /** URLRewrite hostname: the Host header sent on. */
  readonly rewriteHost?: string | undefined;
  /** URLRewrite path: a `replace-path` regex and replacement (query string kept). */
  readonly rewritePath?: { readonly match: string; readonly replace: string } | undefined;
}

/** A RequestRedirect, as a backend of its own: `http-request redirect location <location> code <code>`. */
export interface GatewayRedirect {
  /** `gwr_<n>`. */
  readonly name: string;
  /** A log-format string: literal parts from checked values, `%[...]` for the request's own. */
  readonly location: string;
  readonly code: RedirectCode;
}

/** Where one match line sends a request: a backend, or weighted backends (`rand` picks one). */
export interface WeightedTarget {
  readonly backend: string;
  /** The line's condition and this share's pick (`{ rand(7) -m int lt 3 }`, none for the last share); '' for always. */
  readonly condition: string;
}

export interface GatewayMatchLine {
  /** ACL terms from checked values, ANDed: listener, host, path, method, headers, query parameters; '' for always. */
  readonly condition: string;
  /** Weighted shares, or the one redirect backend of a RequestRedirect rule. */
  readonly targets: readonly WeightedTarget[];
}

export interface GatewayListenerSlot {
  /** Index within its frontend, the value of `txn.gwl`. */
  readonly index: number;
  /** The ACL term that picks this listener (`{ var(txn.host) -m str a.example }`), '' for any host. */
  readonly hostCondition: string;
}

/** A certificate of an HTTPS listener, written as `certs/<name>`. */
export interface GatewayCertificate {
  /** `gw-<namespace>_<secret>.pem`. */
  readonly name: string;
  readonly pem: string;
}

/** TLS of an HTTPS bind: its crt-list (an auxiliary file) of certificates and SNI filters. */
export interface GatewayTls {
  /** The crt-list file name. */
  readonly crtList: string;
  /** crt-list lines: a certificate and its SNI filter ('' for the default, first, line). */
  readonly entries: readonly { readonly certificate: string; readonly filter: string }[];
  /** No listener without a hostname: an unknown SNI gets no certificate. */
  readonly strictSni: boolean;
}

/** A map file of a bind's plain routes (route-table.ts), written as `maps/<name>`. */
export interface GatewayRouteMap {
  /** `gateway-<n>-<table>.map`. */
  readonly name: string;
  readonly entries: readonly { readonly key: string; readonly backend: string }[];
}

/** Looked up in this order, with `lines` between the host maps and the host-less ones, `lateLines` after. */
export interface GatewayRouteMaps {
  /** `[<listener>@]host/path` keys. */
  readonly hostExact: GatewayRouteMap;
  /** `[<listener>@]host/prefix/` keys, longest first. */
  readonly hostPrefix: GatewayRouteMap;
  /** `[<listener>@]/path` keys of routes for any host. */
  readonly pathExact: GatewayRouteMap;
  readonly pathPrefix: GatewayRouteMap;
}

export interface GatewayFrontend {
  /** `gw_<n>`, unique. */
  readonly name: string;
  /** `address:port`, `[v6]:port` or `*:port`. */
  readonly bind: string;
  /** `http` or `https` (TLS terminated here, `tls` set). */
  readonly scheme: 'http' | 'https';
  readonly tls?: GatewayTls | undefined;
  /** Listeners to pick from, most specific first; empty when the bind has only one. */
  readonly listeners: readonly GatewayListenerSlot[];
  /** The plain routes (a hostname and a path, one target): map entries. */
  readonly maps: GatewayRouteMaps;
  /** Conditional rules looked at after the host maps, in precedence order. */
  readonly lines: readonly GatewayMatchLine[];
  /** Conditional rules of the routes for any host, after the host-less maps. */
  readonly lateLines: readonly GatewayMatchLine[];
  /**
   * The label counts of the wildcard hostnames in the host maps, most first: after `lines`, the
   * maps are looked up once per count with the key of the Host's last labels (route-table.ts).
   */
  readonly wildcardLabels: readonly WildcardLookup[];
}

/** A wildcard lookup: `labels` last labels of the Host when it has more (`guard` = labels + 1). */
export interface WildcardLookup {
  readonly labels: number;
  readonly guard: number;
}

/** A condition of the spec, as a status writer would write it. */
export interface GatewayCondition {
  readonly type: string;
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message?: string | undefined;
}

export interface ListenerStatus {
  readonly name: string;
  readonly attachedRoutes: number;
  readonly conditions: readonly GatewayCondition[];
}

export interface GatewayStatus {
  readonly namespace: string;
  readonly name: string;
  readonly generation: number | undefined;
  readonly conditions: readonly GatewayCondition[];
  readonly listeners: readonly ListenerStatus[];
}

export interface RouteParentStatus {
  /** `namespace/name` of the Gateway, and the parentRef's sectionName and port when given. */
  readonly gateway: string;
  readonly sectionName?: string | undefined;
  readonly port?: number | undefined;
  readonly conditions: readonly GatewayCondition[];
}

export interface RouteStatus {
  readonly namespace: string;
  readonly name: string;
  readonly generation: number | undefined;
  readonly parents: readonly RouteParentStatus[];
}

export interface GatewayClassStatus {
  readonly name: string;
  readonly generation: number | undefined;
  readonly conditions: readonly GatewayCondition[];
}

export interface GatewayStatusReport {
  readonly gatewayClasses: readonly GatewayClassStatus[];
  readonly gateways: readonly GatewayStatus[];
  readonly httpRoutes: readonly RouteStatus[];
}

export interface GatewayModel {
  readonly frontends: readonly GatewayFrontend[];
  /** Certificates of the HTTPS listeners, sorted by name. */
  readonly certificates: readonly GatewayCertificate[];
  readonly redirects: readonly GatewayRedirect[];
  readonly status: GatewayStatusReport;
}

/** The Gateway options of the template values. */
export interface GatewayOptions {
  /** GatewayClasses whose spec.controllerName is this are ours. @default 'haptic-reconciler.io/gateway-controller' */
  readonly controllerName: string;
  /** Where listeners bind when their Gateway names no usable address. @default '*' */
  readonly bindAddress: string;
  /** Addresses a Gateway may bind through spec.addresses; empty: none (every Gateway binds bindAddress). */
  readonly addresses: ReadonlySet<string>;
  /** Ports of the Ingress frontends and the status frontend: a listener there is Conflicted. */
  readonly reservedPorts: readonly number[];
  readonly stores: {
    readonly gatewayClasses: string;
    readonly gateways: string;
    readonly httpRoutes: string;
    readonly referenceGrants: string;
    readonly namespaces: string;
    readonly secrets: string;
  };
}

export const EMPTY_GATEWAY_MODEL: GatewayModel = Object.freeze({
  frontends: Object.freeze([]),
  certificates: Object.freeze([]),
  redirects: Object.freeze([]),
  status: Object.freeze({ gatewayClasses: Object.freeze([]), gateways: Object.freeze([]), httpRoutes: Object.freeze([]) }),
});

export function gatewayOptions(values: Readonly<Record<string, unknown>>): GatewayOptions {
  const port = (value: unknown, fallback: number): number => (Number.isInteger(Number(value)) ? Number(value) : fallback);
  const addresses = String(values.gatewayAddresses ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
  return {
    controllerName: String(values.gatewayControllerName ?? 'haptic-reconciler.io/gateway-controller'),
    bindAddress: String(values.bindAddress ?? '*'),
    addresses: new Set(addresses),
    reservedPorts: [port(values.httpPort, 80), port(values.httpsPort, 443), port(values.statusPort, 8404)],
    stores: { gatewayClasses: 'gatewayclasses', gateways: 'gateways', httpRoutes: 'httproutes', referenceGrants: 'referencegrants', namespaces: 'namespaces', secrets: 'secrets' },
  };
}
