// The Gateway build that attaches, compares and measures only the routes that changed
// (gateway-route-attacher.ts, RouteOrder's replaced places, the patched pass's items and served
// lists) against a fresh computation: after any sequence of renders, each with a few random
// route or Gateway edits (a path, hostnames, a parent that attaches or not, a backend that
// exists or not, a creation time that reorders, a route deleted, added or handed again with
// equal content, an EndpointSlice moved, the Gateway's listeners changed), one long-lived
// engine renders exactly what a fresh engine renders from the same stores and baseline: config,
// auxiliary files, checksum, warnings in order and the Gateway status.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderAndValidate } from '../../../src/worker/render/renderer.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import type { KubeObject, RenderBaseline, RenderOutcome, TemplateSetSource } from '../../../src/worker/protocol.js';
import type { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import { defaultTemplateSet, endpointSlice, indexedStores, service } from '../../helpers/cluster.js';
import { gateway, gatewayClass, httpRoute, namespace, ref } from '../../helpers/gateway-objects.js';

const ROUTES = 12;
const NAMESPACES = ['a', 'b'];
const SERVICES = ['s0', 's1', 's2'];
const HOSTS = ['one.example.com', 'two.example.com', 'x.wild.example.com'];
const PATHS = ['/', '/api', '/api/v1', '/static'];

/** What a route is made of; every edit changes one field. */
interface RouteSpec {
  readonly hosts: readonly string[];
  readonly path: string;
  readonly parent: 'gw' | 'other' | 'missing-section' | 'missing-gateway';
  readonly service: string;
  readonly minute: number;
}

const namespaceOf = (i: number): string => NAMESPACES[i % NAMESPACES.length] as string;

function routeOf(i: number, spec: RouteSpec): KubeObject {
  const parent =
    spec.parent === 'gw' ? { name: 'gw', namespace: 'infra' }
    : spec.parent === 'other' ? { name: 'gw', namespace: 'infra', sectionName: 'other' }
    : spec.parent === 'missing-section' ? { name: 'gw', namespace: 'infra', sectionName: 'nosuch' }
    : { name: 'nosuch', namespace: 'infra' };
  const created = new Date(Date.UTC(2024, 0, 1) + spec.minute * 60_000).toISOString();
  return httpRoute(namespaceOf(i), `r${i}`, { parentRefs: [parent], hostnames: spec.hosts, rules: [{ matches: [{ path: { type: 'PathPrefix', value: spec.path } }], backendRefs: [ref(spec.service)] }] }, { creationTimestamp: created });
}

const initialSpec = (i: number): RouteSpec => ({ hosts: [HOSTS[i % 2] as string], path: PATHS[i % PATHS.length] as string, parent: 'gw', service: SERVICES[i % SERVICES.length] as string, minute: i });

const routeIndex = fc.integer({ min: 0, max: ROUTES - 1 });
const edit = fc.oneof(
  fc.record({ kind: fc.constant('path' as const), route: routeIndex, value: fc.constantFrom(...PATHS) }),
  fc.record({ kind: fc.constant('hosts' as const), route: routeIndex, value: fc.uniqueArray(fc.constantFrom(...HOSTS), { maxLength: 2 }) }),
  fc.record({ kind: fc.constant('parent' as const), route: routeIndex, value: fc.constantFrom('gw' as const, 'other' as const, 'missing-section' as const, 'missing-gateway' as const) }),
  // s9 exists nowhere: the route warns, and its share answers 500.
  fc.record({ kind: fc.constant('service' as const), route: routeIndex, value: fc.constantFrom(...SERVICES, 's9') }),
  fc.record({ kind: fc.constant('created' as const), route: routeIndex, value: fc.integer({ min: 0, max: ROUTES }) }),
  fc.record({ kind: fc.constant('delete' as const), route: routeIndex }),
  fc.record({ kind: fc.constant('again' as const), route: routeIndex }),
  fc.record({ kind: fc.constant('slice' as const), namespace: fc.constantFrom(...NAMESPACES), service: fc.constantFrom(...SERVICES), address: fc.integer({ min: 1, max: 9 }) }),
  fc.record({ kind: fc.constant('gateway' as const), other: fc.boolean(), from: fc.constantFrom('All', 'Same') }),
);
type Edit = typeof edit extends fc.Arbitrary<infer T> ? T : never;

function listeners(other: boolean, from: string): Parameters<typeof gateway>[2] {
  return [{ name: 'http', port: 18087, allowedRoutes: { namespaces: { from } } }, ...(other ? [{ name: 'other', port: 18087, hostname: '*.wild.example.com', allowedRoutes: { namespaces: { from: 'All' } } }] : [])];
}

/** Applies `e` to the stores and to `specs`, the routes as they are (undefined: deleted). */
function apply(e: Edit, stores: Map<string, IndexedStore>, specs: (RouteSpec | undefined)[]): void {
  const store = (name: string): IndexedStore => stores.get(name) as IndexedStore;
  if (e.kind === 'slice') {
    store('endpointslices').upsert(endpointSlice(e.namespace, e.service, [`10.0.${NAMESPACES.indexOf(e.namespace)}.${e.address}`]));
    return;
  }
  if (e.kind === 'gateway') {
    store('gateways').upsert(gateway('infra', 'gw', listeners(e.other, e.from)));
    return;
  }
  if (e.kind === 'delete') {
    specs[e.route] = undefined;
    store('httproutes').delete(`${namespaceOf(e.route)}/r${e.route}`);
    return;
  }
  const current = specs[e.route] ?? initialSpec(e.route);
  const next: RouteSpec =
    e.kind === 'path' ? { ...current, path: e.value }
    : e.kind === 'hosts' ? { ...current, hosts: e.value }
    : e.kind === 'parent' ? { ...current, parent: e.value }
    : e.kind === 'service' ? { ...current, service: e.value }
    : e.kind === 'created' ? { ...current, minute: e.value }
    : current;
  specs[e.route] = next;
  store('httproutes').upsert(routeOf(e.route, next));
}

function comparable(outcome: RenderOutcome): unknown {
  if (!outcome.ok) return { ok: false, message: outcome.message };
  return { config: outcome.haproxyConfig, files: outcome.auxiliaryFiles, checksum: outcome.checksum, warnings: outcome.warnings, status: outcome.gatewayStatus };
}

describe('the Gateway build patched at the routes that changed', () => {
  it('renders after any sequence of route and Gateway edits exactly as a fresh engine does', async () => {
    const set: TemplateSetSource = await defaultTemplateSet();
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(edit, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 8 }), async (renders) => {
        const specs: (RouteSpec | undefined)[] = Array.from({ length: ROUTES }, (_, i) => initialSpec(i));
        const objects: KubeObject[] = [gatewayClass(), gateway('infra', 'gw', listeners(true, 'All')), namespace('infra')];
        for (const ns of NAMESPACES) {
          objects.push(namespace(ns));
          for (const s of SERVICES) objects.push(service(ns, s), endpointSlice(ns, s, [`10.0.${NAMESPACES.indexOf(ns)}.1`]));
        }
        specs.forEach((spec, i) => objects.push(routeOf(i, spec as RouteSpec)));
        const stores = indexedStores(set, objects);
        const engine = new TemplateEngine();
        const request = (storeVersion: number, baseline: RenderBaseline | undefined) => ({ set, lookup: (name: string) => stores.get(name), storeVersion, baseline });
        const first = renderAndValidate(engine, request(0, undefined));
        let baseline: RenderBaseline | undefined = first.ok ? { haproxyConfig: first.haproxyConfig, auxiliaryFiles: first.auxiliaryFiles } : undefined;
        for (const [step, edits] of renders.entries()) {
          for (const e of edits) apply(e, stores, specs);
          const warm = renderAndValidate(engine, request(step + 1, baseline));
          const fresh = renderAndValidate(new TemplateEngine(), request(step + 1, baseline));
          expect(comparable(warm), `render ${step + 1}: ${JSON.stringify(edits)}`).toEqual(comparable(fresh));
          if (warm.ok) baseline = { haproxyConfig: warm.haproxyConfig, auxiliaryFiles: warm.auxiliaryFiles };
        }
      }),
      { numRuns: 40 },
    );
  });
});
