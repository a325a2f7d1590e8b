// A small cluster and a long-lived engine over it for the focused incremental render tests: every
// render is checked against a cold render of the same stores and baseline.
import { expect } from 'vitest';
import { GuardedReader } from '../../src/worker/store/guarded-reader.js';
import type { IndexedStore } from '../../src/worker/store/indexed-store.js';
import type { KubeObject, RenderBaseline, TemplateSetSource } from '../../src/worker/protocol.js';
import { renderAndValidate } from '../../src/worker/render/renderer.js';
import { TemplateEngine } from '../../src/worker/templates/template-engine.js';
import { defaultTemplateSet, endpointSlice, indexedStores, ingress, rule, service, tlsSecret } from './cluster.js';
import { asBaseline, comparable, outcomeDifference, summary, type Success } from './render-outcomes.js';

export const NS = 'shop';

export function smallCluster(): KubeObject[] {
  return [
    ingress(NS, 'front', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }),
    ingress(NS, 'api', { rules: [rule('api.example.com', { path: '/v1', service: 'api' }, { path: '/v1/health', pathType: 'Exact', service: 'api' })] }),
    ingress(NS, 'admin', {
      rules: [rule('admin.example.com', { path: '/', service: 'admin', port: 'http' })],
      tls: [{ hosts: ['admin.example.com'], secretName: 'admin-tls' }],
    }),
    service(NS, 'web'),
    service(NS, 'api'),
    service(NS, 'admin'),
    endpointSlice(NS, 'web', ['10.0.0.1', '10.0.0.2']),
    endpointSlice(NS, 'api', ['10.0.1.1']),
    endpointSlice(NS, 'admin', ['10.0.2.1', { address: '10.0.2.2', ready: false }]),
    tlsSecret(NS, 'admin-tls'),
  ];
}

/** One long-lived engine over stores that tests change; every render is checked against a cold one. */
export class Harness {
  stores: Map<string, IndexedStore>;
  readonly engine = new TemplateEngine();
  baseline: RenderBaseline | undefined;
  #version = 0;

  constructor(
    readonly set: TemplateSetSource,
    objects: readonly KubeObject[],
  ) {
    this.stores = indexedStores(set, objects);
  }

  store(name: string): IndexedStore {
    return this.stores.get(name) as IndexedStore;
  }

  get cachedIngresses(): number {
    return this.engine.compile(this.set).builder.cachedIngresses;
  }

  /** Renders incrementally and cold, expects them equal and successful, and keeps the output as the baseline. */
  render(): Success {
    const request = { set: this.set, lookup: (name: string) => this.stores.get(name), storeVersion: ++this.#version, baseline: this.baseline };
    const incremental = renderAndValidate(this.engine, request);
    const cold = renderAndValidate(new TemplateEngine(), request);
    expect(outcomeDifference(incremental, cold)).toBeUndefined();
    expect(comparable(incremental)).toEqual(comparable(cold));
    if (!incremental.ok) throw new Error(`expected the render to succeed: ${summary(incremental)}`);
    this.baseline = asBaseline(incremental);
    return incremental;
  }
}

export async function harness(objects: readonly KubeObject[] = smallCluster()): Promise<Harness> {
  return new Harness(await defaultTemplateSet(), objects);
}

/** The lines of `after` that are not at the same place in `before`, by a plain line diff. */
export function changedLines(before: string, after: string): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  return [...a.slice(start, endA).map((l) => `- ${l}`), ...b.slice(start, endB).map((l) => `+ ${l}`)];
}

export function backendSection(config: string, backend: string): string | undefined {
  return config.split(/\n(?=backend |frontend )/).find((s) => s.startsWith(`backend ${backend}\n`));
}

export function modelSource(stores: ReadonlyMap<string, IndexedStore>, warnings: string[] = []): GuardedReader {
  return new GuardedReader(
    (name) => stores.get(name),
    (message) => {
      warnings.push(message);
    },
  );
}
