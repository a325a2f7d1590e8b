// The guard's context for one template set: the policy its values set (which endpoint addresses
// are allowed, HAProxy's own ports, the endpoints cap) and the kind of each store it declares.
// A render enters its set's context for its synchronous duration (withGuardContext), so a check
// made without an explicit context (a routing module calling guardObject) applies the policy of
// the render in progress; outside any render the default context applies. Contexts are cached
// per template set and per values object, so verdicts cached per context stay valid.
import { networkInterfaces } from 'node:os';
import type { TemplateSetSource } from '../protocol.js';
import type { StoreKind } from './store-admission.js';
import { DEFAULT_MAX_ENDPOINTS_PER_SERVICE } from './value-limits.js';

export interface GuardPolicy {
  /** `values.allowLoopbackEndpoints`: loopback endpoints (127.0.0.0/8, ::1) are allowed. @default false */
  readonly allowLoopbackEndpoints: boolean;
  /** HAProxy's own bind ports (`httpPort`, `httpsPort`, `statusPort`, and the ports of `stats` and `runtimeSocket` when they are TCP addresses). */
  readonly ownPorts: ReadonlySet<number>;
  /**
   * Addresses of this machine's interfaces. HAProxy binds its ports on every address by default,
   * so `<own address>:<own port>` reaches HAProxy itself, as `127.0.0.1:<own port>` does.
   */
  readonly localAddresses: ReadonlySet<string>;
  /** `values.maxEndpointsPerService`. */
  readonly maxEndpointsPerService: number;
}

export interface GuardContext {
  readonly policy: GuardPolicy;
  /** The kind each store name holds, for stores created without a definition. */
  readonly definitions: ReadonlyMap<string, StoreKind>;
}

/** The stores the routing model reads, with the kinds it reads them as. */
export const MODEL_STORE_KINDS: ReadonlyMap<string, StoreKind> = new Map([
  ['ingresses', { kind: 'Ingress', apiVersion: 'networking.k8s.io/v1' }],
  ['services', { kind: 'Service', apiVersion: 'v1' }],
  ['endpointslices', { kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' }],
  ['secrets', { kind: 'Secret', apiVersion: 'v1' }],
]);

const policies = new WeakMap<object, GuardPolicy>();
const contexts = new WeakMap<object, GuardContext>();

/** The policy of a template set's values (cached per values object). */
export function policyOf(values: Readonly<Record<string, unknown>>): GuardPolicy {
  let policy = policies.get(values);
  if (policy === undefined) {
    const admin = [values.stats, values.runtimeSocket].map(tcpPortOf);
    const ports = [values.httpPort ?? 80, values.httpsPort ?? 443, values.statusPort ?? 8404, ...admin].map(Number).filter((p) => Number.isInteger(p));
    const max = Number(values.maxEndpointsPerService ?? DEFAULT_MAX_ENDPOINTS_PER_SERVICE);
    policy = Object.freeze({
      allowLoopbackEndpoints: values.allowLoopbackEndpoints === true || values.allowLoopbackEndpoints === 'true',
      ownPorts: new Set(ports),
      localAddresses: localAddresses(),
      maxEndpointsPerService: Number.isInteger(max) && max > 0 ? max : DEFAULT_MAX_ENDPOINTS_PER_SERVICE,
    });
    policies.set(values, policy);
  }
  return policy;
}

/** The context of a template set: its values' policy and its stores' kinds (cached per set). */
export function contextOf(set: TemplateSetSource): GuardContext {
  let context = contexts.get(set);
  if (context === undefined) {
    const definitions = new Map(MODEL_STORE_KINDS);
    for (const def of set.stores) definitions.set(def.name, { kind: def.kind, apiVersion: def.apiVersion });
    context = Object.freeze({ policy: policyOf(set.values), definitions });
    contexts.set(set, context);
  }
  return context;
}

/** Outside any render: the default values, and the routing model's stores. */
export const DEFAULT_CONTEXT: GuardContext = Object.freeze({ policy: policyOf(Object.freeze({})), definitions: MODEL_STORE_KINDS });

let active: GuardContext | undefined;

/** The context of the render in progress, or the default one. */
export function activeGuardContext(): GuardContext {
  return active ?? DEFAULT_CONTEXT;
}

/**
 * Runs `fn` (synchronous: a render never yields) with `context` as the active context, and
 * restores the previous one after, even when `fn` throws.
 */
export function withGuardContext<T>(context: GuardContext, fn: () => T): T {
  const previous = active;
  active = context;
  try {
    return fn();
  } finally {
    active = previous;
  }
}

/** The port of a bind address such as `127.0.0.1:8405` or `ipv4@*:9999`; undefined for a socket path or nothing. */
function tcpPortOf(value: unknown): number | undefined {
  const port = typeof value === 'string' ? /:(\d{1,5})$/.exec(value.trim())?.[1] : undefined;
  return port === undefined ? undefined : Number(port);
}

function localAddresses(): ReadonlySet<string> {
  const found = new Set<string>();
  try {
    for (const list of Object.values(networkInterfaces())) {
      for (const info of list ?? []) found.add(info.address.toLowerCase());
    }
  } catch {
    // No interface list (a sandbox): loopback and unspecified addresses are still covered.
  }
  return found;
}
