// A seeded synthetic cluster for the demo, the load test and the benchmarks: N Ingresses, each
// with a Service and an EndpointSlice of 3 endpoints, and a churn generator that mostly moves
// endpoints (as rolling deploys and autoscaling do) and sometimes edits, adds or removes an
// Ingress. The same seed gives the same cluster and the same sequence of changes.
import type { KubeObject } from '../../../worker/protocol.js';
import type { StoreProvider } from '../../stores/store-provider.js';

/**
 * Template values for rendering a synthetic cluster whole. Its thousands of backends hold more
 * health-checked server slots than the default fdHardLimit lets the routing model keep (it then
 * leaves the newest Ingresses without servers, with a warning), so the benchmarks, the load test
 * and the soak render as a host with a raised descriptor limit would; at 50,000 Ingresses the
 * output (about 43 MB) is also over the default maxOutputBytes.
 */
export const SYNTHETIC_CLUSTER_VALUES: Readonly<Record<string, unknown>> = Object.freeze({ fdHardLimit: 1_048_576, maxOutputBytes: 268_435_456 });

export interface SyntheticOptions {
  readonly ingresses: number;
  readonly seed?: number;
  readonly endpointsPerService?: number;
  /** Ingresses per namespace. @default 50 */
  readonly perNamespace?: number;
  /** Where a pod listens: its address for (app, pod, endpoint slot). @default a stable address in 10.0.0.0/8 */
  readonly podAddress?: (index: number, pod: number, slot: number) => string;
  /** The port every pod listens on (the EndpointSlice's port). @default 8080 */
  readonly podPort?: number;
  /** Apps 0 .. stable-1 are never deleted by `change` (traffic can rely on their hosts). @default 0 */
  readonly stable?: number;
  /** Annotations every Ingress carries. @default none */
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface SyntheticChange {
  readonly store: 'ingresses' | 'services' | 'endpointslices';
  readonly kind: 'created' | 'modified' | 'deleted';
}

/** Mulberry32: a small, fast, seedable PRNG; good enough for workload generation. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class SyntheticCluster {
  readonly #random: () => number;
  readonly #endpoints: number;
  readonly #perNamespace: number;
  /** Indices of the apps that currently exist; `#next` is the next index to create. */
  readonly #live: number[] = [];
  #next = 0;
  #generation = 0;

  constructor(readonly options: SyntheticOptions) {
    this.#random = seededRandom(options.seed ?? 1);
    this.#endpoints = options.endpointsPerService ?? 3;
    this.#perNamespace = options.perNamespace ?? 50;
  }

  get size(): number {
    return this.#live.length;
  }

  /** Adds the initial N apps (Ingress + Service + EndpointSlice each). */
  populate(stores: StoreProvider): void {
    for (let i = 0; i < this.options.ingresses; i++) this.#create(stores);
  }

  /** Applies one random change and says what it touched. */
  change(stores: StoreProvider): SyntheticChange {
    const roll = this.#random();
    if (roll < 0.85 || this.#live.length < 2) {
      const index = this.#pick();
      stores.store('endpointslices').upsert(this.endpointSlice(index, ++this.#generation));
      return { store: 'endpointslices', kind: 'modified' };
    }
    if (roll < 0.95) {
      const index = this.#pick();
      stores.store('ingresses').upsert(this.ingress(index, ++this.#generation));
      return { store: 'ingresses', kind: 'modified' };
    }
    if (roll < 0.975) {
      this.#create(stores);
      return { store: 'ingresses', kind: 'created' };
    }
    const position = Math.floor(this.#random() * this.#live.length);
    const index = this.#live[position] as number;
    if (index < (this.options.stable ?? 0)) return this.change(stores);
    this.#live.splice(position, 1);
    const ns = this.namespace(index);
    stores.store('ingresses').delete(`${ns}/app-${index}`);
    stores.store('services').delete(`${ns}/app-${index}`);
    stores.store('endpointslices').delete(`${ns}/app-${index}-slice`);
    return { store: 'ingresses', kind: 'deleted' };
  }

  namespace(index: number): string {
    return `team-${Math.floor(index / this.#perNamespace)}`;
  }

  /** The host of app `index`'s Ingress. */
  host(index: number): string {
    return `app-${index}.${this.namespace(index)}.example.com`;
  }

  /** App `index`'s Ingress edited with annotations of its own (an edit that changes a backend's options). */
  editIngress(stores: StoreProvider, index: number, annotations: Readonly<Record<string, string>>): void {
    stores.store('ingresses').upsert(this.ingress(index, ++this.#generation, annotations));
  }

  ingress(index: number, generation = 0, annotations: Readonly<Record<string, string>> = {}): KubeObject {
    const ns = this.namespace(index);
    const name = `app-${index}`;
    const paths = [
      { path: '/', pathType: 'Prefix', backend: { service: { name, port: { number: 80 } } } },
      { path: `/api/v${1 + (generation % 3)}`, pathType: 'Prefix', backend: { service: { name, port: { number: 80 } } } },
    ];
    return {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, namespace: ns, resourceVersion: resourceVersion(generation), annotations: { ...this.options.annotations, ...annotations, 'synthetic/generation': String(generation) } },
      spec: { ingressClassName: 'haproxy', rules: [{ host: this.host(index), http: { paths } }] },
    };
  }

  service(index: number): KubeObject {
    return {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: `app-${index}`, namespace: this.namespace(index), resourceVersion: resourceVersion(0) },
      spec: { ports: [{ name: 'http', port: 80, targetPort: this.options.podPort ?? 8080 }] },
    };
  }

  endpointSlice(index: number, generation = 0): KubeObject {
    const endpoints = [];
    for (let e = 0; e < this.#endpoints; e++) {
      // A rolling deploy replaces one pod at a time: one address moves per generation.
      const pod = e === generation % this.#endpoints ? generation : e;
      endpoints.push({ addresses: [(this.options.podAddress ?? podAddress)(index, pod, e)], conditions: { ready: true } });
    }
    return {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: `app-${index}-slice`,
        namespace: this.namespace(index),
        resourceVersion: resourceVersion(generation),
        labels: { 'kubernetes.io/service-name': `app-${index}` },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: this.options.podPort ?? 8080, protocol: 'TCP' }],
      endpoints,
    };
  }

  #create(stores: StoreProvider): void {
    const index = this.#next++;
    this.#live.push(index);
    stores.store('services').upsert(this.service(index));
    stores.store('endpointslices').upsert(this.endpointSlice(index));
    stores.store('ingresses').upsert(this.ingress(index));
  }

  #pick(): number {
    return this.#live[Math.floor(this.#random() * this.#live.length)] as number;
  }
}

/**
 * As the API server gives every object: a resourceVersion, distinct for each generation of an
 * object (every change here makes a new generation), so that versions are read, not digested.
 */
function resourceVersion(generation: number): string {
  return String(generation + 1);
}

/** A stable pod address in 10.0.0.0/8 for (app, pod). */
function podAddress(index: number, pod: number): string {
  const n = (index * 977 + pod * 7919) % 16_777_214 + 1;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}
