// What a Gateway build decides before it looks at any HTTPRoute: our GatewayClasses, our
// Gateways with their listeners bound or refused, each bind's listeners in the order a request
// picks them. It reads only the stores named by contextStores, and is kept while each of them is
// the same store at the same generation (a route's attachment and ownership are computed again
// whenever it is not). The Ingress host claims that route hostnames meet are kept apart
// (ingressClaims): the same claims after an Ingress change keep the routes' ownership.
import type { IndexedStore } from '../store/indexed-store.js';
import { bindGateways, ourClasses, type BoundListener, type GatewayEntry } from './gateway-attachment.js';
import { compareHostnames } from './gateway-hostnames.js';
import type { GatewayClassStatus, GatewayOptions } from './gateway-model.js';
import { HostOwnership } from './gateway-ownership.js';
import type { ModelOptions } from './model.js';
import type { ModelSource } from './model-source.js';
import { RecordedReads, type LogEntry } from './recorded-reads.js';

export interface GatewayContext {
  /** The stores it was built from and their generations. */
  readonly key: string;
  readonly stores: readonly (IndexedStore | undefined)[];
  readonly classStatus: readonly GatewayClassStatus[];
  readonly classes: ReadonlySet<string>;
  readonly entries: readonly GatewayEntry[];
  readonly gateways: ReadonlyMap<string, GatewayEntry>;
  /** The bound listeners of each bind, most specific hostname first. */
  readonly byBind: ReadonlyMap<string, readonly BoundListener[]>;
  readonly listenerTerm: ReadonlyMap<BoundListener, string>;
  readonly listenerKey: ReadonlyMap<BoundListener, string>;
  readonly log: readonly LogEntry[];
}

export interface IngressClaims {
  readonly key: string;
  readonly stores: readonly (IndexedStore | undefined)[];
  /** The claims of our Ingresses' rule hosts; routes' claims go on a fork of it. The same object while the claims are the same. */
  readonly ownership: HostOwnership;
  readonly log: readonly LogEntry[];
}

/** The stores a context reads. */
export function contextStores(options: GatewayOptions): string[] {
  const s = options.stores;
  return [s.gatewayClasses, s.gateways, s.namespaces, s.secrets, s.referenceGrants];
}

/** `previous` when the Ingress stores are unchanged; else the claims read again, with `previous`'s ownership when they are the same claims. */
export function ingressClaims(previous: IngressClaims | undefined, source: ModelSource, model: ModelOptions): IngressClaims {
  const names = [model.stores.ingresses, model.stores.ingressClasses];
  const { key, stores } = storesKey(source, names);
  if (previous?.key === key && stores.every((store, i) => store === previous.stores[i])) return previous;
  const reads = new RecordedReads(source);
  const fresh = new HostOwnership(reads, model);
  const ownership = previous !== undefined && previous.ownership.sameClaims(fresh) ? previous.ownership : fresh;
  return { key, stores, ownership, log: reads.log };
}

function storesKey(source: ModelSource, names: readonly string[]): { key: string; stores: (IndexedStore | undefined)[] } {
  const stores = names.map((n) => source.store(n));
  return { key: names.map((n, i) => `${n}:${stores[i]?.generation ?? -1}`).join(','), stores };
}

/** `previous` when none of its stores changed, else a context built afresh. */
export function gatewayContext(previous: GatewayContext | undefined, source: ModelSource, options: GatewayOptions): GatewayContext {
  const { key, stores } = storesKey(source, contextStores(options));
  if (previous?.key === key && stores.every((store, i) => store === previous.stores[i])) return previous;
  const reads = new RecordedReads(source);
  const classes = ourClasses(reads, options);
  const classStatus = [...classes].sort().map((name) => ({
    name,
    generation: generationOf(reads.getSingle(options.stores.gatewayClasses, [name])?.metadata),
    conditions: [{ type: 'Accepted', status: 'True' as const, reason: 'Accepted' }],
  }));
  const entries = classes.size === 0 ? [] : bindGateways(reads, options, classes);
  const gateways = new Map<string, GatewayEntry>(entries.map((e) => [`${e.gateway.metadata.namespace ?? ''}/${e.gateway.metadata.name}`, e]));
  const byBind = new Map<string, BoundListener[]>();
  for (const entry of entries) {
    for (const listener of entry.bound.values()) {
      const list = byBind.get(listener.bind);
      if (list === undefined) byBind.set(listener.bind, [listener]);
      else list.push(listener);
    }
  }
  const listenerTerm = new Map<BoundListener, string>();
  const listenerKey = new Map<BoundListener, string>();
  for (const listeners of byBind.values()) {
    listeners.sort((a, b) => compareHostnames(a.spec.hostname ?? '', b.spec.hostname ?? ''));
    listeners.forEach((l, i) => listenerTerm.set(l, listeners.length > 1 ? `{ var(txn.gwl) -m int eq ${i} }` : ''));
    listeners.forEach((l, i) => listenerKey.set(l, listeners.length > 1 ? `${i}@` : ''));
  }
  return { key, stores, classStatus, classes, entries, gateways, byBind, listenerTerm, listenerKey, log: reads.log };
}

export function generationOf(metadata: unknown): number | undefined {
  const generation = (metadata as { generation?: unknown } | undefined)?.generation;
  return typeof generation === 'number' ? generation : undefined;
}
