// The backends of each HTTPRoute, kept from one build to the next while nothing they were built
// from changed: the route object itself, the Service and EndpointSlices behind each of its
// backendRefs (compared by identity: stored objects are never mutated), the ReferenceGrants,
// and the baseline's slots. An EndpointSlice edit then rebuilds only the routes behind it, and
// the other backends keep their objects, so the template's memo blocks reuse their text.
import type { KubeObject } from '../protocol.js';
import type { RouteBackends, RuleSpec } from './gateway-backends.js';
import type { ModelOptions } from './model.js';
import type { LogEntry, RecordedReads } from './recorded-reads.js';

interface Cached {
  readonly built: RouteBackends;
  /** Per backendRef: the Service and EndpointSlices read. */
  readonly inputs: readonly (readonly (KubeObject | undefined)[])[];
  readonly log: readonly LogEntry[];
}

export class RouteBackendCache {
  #entries = new WeakMap<KubeObject, Cached>();
  #grants = -1;
  #slots: string | undefined;

  /** Drops every entry when the grants or the baseline's slots are not those of the last build. */
  begin(grantsGeneration: number, slotText: string): void {
    if (grantsGeneration !== this.#grants || slotText !== this.#slots) this.#entries = new WeakMap();
    this.#grants = grantsGeneration;
  }

  /** The slot text this build produced: the next build's baseline, when it is this builder's own. */
  end(slotText: string): void {
    this.#slots = slotText;
  }

  get(route: KubeObject, reads: RecordedReads, options: ModelOptions, compute: () => RouteBackends): RouteBackends {
    const inputs = inputsOf(route, reads, options);
    const cached = this.#entries.get(route);
    if (cached !== undefined && sameInputs(cached.inputs, inputs)) {
      reads.log.push(...cached.log);
      return cached.built;
    }
    const logged = reads.log.length;
    const built = compute();
    this.#entries.set(route, { built, inputs, log: reads.log.slice(logged) });
    return built;
  }
}

function inputsOf(route: KubeObject, reads: RecordedReads, options: ModelOptions): (KubeObject | undefined)[][] {
  const ns = route.metadata.namespace ?? '';
  const inputs: (KubeObject | undefined)[][] = [];
  for (const rule of (route.spec as { rules?: (RuleSpec | null)[] }).rules ?? []) {
    for (const ref of rule?.backendRefs ?? []) {
      const target = ref.namespace ?? ns;
      inputs.push([reads.getSingle(options.stores.services, [target, ref.name]), ...reads.fetch(options.stores.endpointSlices, [target, ref.name])]);
    }
  }
  return inputs;
}

function sameInputs(a: readonly (readonly (KubeObject | undefined)[])[], b: readonly (readonly (KubeObject | undefined)[])[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as readonly (KubeObject | undefined)[];
    const y = b[i] as readonly (KubeObject | undefined)[];
    if (x.length !== y.length || x.some((object, j) => object !== y[j])) return false;
  }
  return true;
}
