// What a Gateway build decides before it looks at any HTTPRoute: our GatewayClasses, our
// Gateways with their listeners bound or refused, each bind's listeners in the order a request
// picks them, and the Ingress host claims that route hostnames meet. It reads only the stores
// named in CONTEXT_STORES, and is kept while each of them is the same store at the same
// generation (a route's attachment and ownership are computed again whenever it is not).
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
  /** The Ingress claims; routes' claims go on a fork of it. */
  readonly ownership: HostOwnership;
  readonly log: readonly LogEntry[];
}

/** The stores a context reads. */
export function contextStores(model: ModelOptions, options: GatewayOptions): string[] {
  const s = options.stores;
  return [s.gatewayClasses, s.gateways, s.namespaces, s.secrets, s.referenceGrants, model.stores.ingresses, model.stores.ingressClasses];
}

/** `previous` when none of its stores changed, else a context built afresh. */
export function gatewayContext(previous: GatewayContext | undefined, source: ModelSource, model: ModelOptions, options: GatewayOptions): GatewayContext {
  const names = contextStores(model, options);
  const stores = names.map((n) => source.store(n));
  const key = names.map((n, i) => `${n}:${stores[i]?.generation ?? -1}`).join(',');
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
  const ownership = classes.size === 0 ? new HostOwnership(undefined, model) : new HostOwnership(reads, model);
  return { key, stores, classStatus, classes, entries, gateways, byBind, listenerTerm, listenerKey, ownership, log: reads.log };
}

export function generationOf(metadata: unknown): number | undefined {
  const generation = (metadata as { generation?: unknown } | undefined)?.generation;
  return typeof generation === 'number' ? generation : undefined;
}
