// The Gateway model built route by route, against cold builds: a seeded property test drives
// random change sequences (routes added, edited, deleted and given other hostnames, parents,
// backends, matches, filters and creation times; Services, EndpointSlices, ReferenceGrants,
// Namespaces, Gateways and Ingresses changed) through one long-lived engine, and after each
// change its render must equal a fresh engine's render of the same stores and baseline: config,
// every auxiliary file, checksum, warnings in order and the Gateway status. A second run keeps
// most routes plain (exact hostnames, one backend, path matches only), the case whose route
// tables are patched key by key, with now and then a route that makes its bind planned whole.
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../src/main/sources/synthetic/synthetic-cluster.js';
import { renderAndValidate } from '../../../src/worker/render/renderer.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import type { KubeObject, RenderBaseline, RenderOutcome, TemplateSetSource } from '../../../src/worker/protocol.js';
import type { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import { defaultTemplateSet, endpointSlice, indexedStores, ingress, rule, service, withValues } from '../../helpers/cluster.js';
import { gateway, gatewayClass, httpRoute, namespace, ref, referenceGrant } from '../../helpers/gateway-objects.js';

type Random = () => number;
const NAMESPACES = ['a', 'b', 'c'];
const PLAIN_HOSTS = ['one.example.com', 'two.example.com', 'three.example.com', 'four.example.com'];
const HOSTS = ['one.example.com', 'two.example.com', '*.wild.example.com', 'x.wild.example.com', 'three.example.com'];

const pick = <T>(random: Random, list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;

/** A route of the plain kind: exact hostnames, path matches and one backend per rule. */
function plainRoute(random: Random, ns: string, name: string): KubeObject {
  const hostnames = random() < 0.1 ? [] : [pick(random, PLAIN_HOSTS), ...(random() < 0.3 ? [pick(random, PLAIN_HOSTS)] : [])];
  const rules = Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({
    matches: [{ path: { type: random() < 0.3 ? 'Exact' : 'PathPrefix', value: pick(random, ['/', '/api', '/api/v1', '/static']) } }],
    backendRefs: random() < 0.1 ? [] : [ref(`s${Math.floor(random() * 4)}`, random() < 0.1 ? { namespace: pick(random, NAMESPACES) } : {})],
  }));
  const created = new Date(Date.UTC(2024, 0, 1) + Math.floor(random() * 50) * 60_000).toISOString();
  return httpRoute(ns, name, { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames, rules }, { creationTimestamp: created });
}

function randomRoute(random: Random, ns: string, name: string, plain = false): KubeObject {
  if (plain && random() < 0.97) return plainRoute(random, ns, name);
  const hostnames = random() < 0.2 ? [] : [pick(random, HOSTS), ...(random() < 0.3 ? [pick(random, HOSTS)] : [])];
  const rules = Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
    const match: Record<string, unknown> = { path: { type: random() < 0.3 ? 'Exact' : 'PathPrefix', value: pick(random, ['/', '/api', '/api/v1', '/static']) } };
    if (random() < 0.2) match.method = 'GET';
    if (random() < 0.2) match.headers = [{ name: 'X-Env', value: pick(random, ['prod', 'dev']) }];
    const backendRefs = Array.from({ length: Math.floor(random() * 3) }, () =>
      random() < 0.15 ? ref(`s${Math.floor(random() * 4)}`, { namespace: pick(random, NAMESPACES) }) : ref(`s${Math.floor(random() * 4)}`, random() < 0.3 ? { weight: Math.floor(random() * 3) } : {}),
    );
    const filters: Record<string, unknown>[] = [];
    if (random() < 0.15) filters.push({ type: 'RequestRedirect', requestRedirect: { hostname: pick(random, ['r1.example.com', 'r2.example.com']), statusCode: 301 } });
    else if (random() < 0.2) filters.push({ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Route', value: name }] } });
    return { matches: [match], backendRefs, ...(filters.length === 0 ? {} : { filters }) };
  });
  const parent = random() < 0.8 ? { name: 'gw', namespace: 'infra' } : { name: 'gw', namespace: 'infra', sectionName: pick(random, ['http', 'other', 'missing']) };
  const created = new Date(Date.UTC(2024, 0, 1) + Math.floor(random() * 50) * 60_000).toISOString();
  return httpRoute(ns, name, { parentRefs: [parent], hostnames, rules }, { creationTimestamp: created });
}

function listeners(random: Random, plain = false): Parameters<typeof gateway>[2] {
  const all = { namespaces: { from: 'All' } };
  const selected = { namespaces: { from: 'Selector', selector: { matchLabels: { gw: 'yes' } } } };
  return [
    { name: 'http', port: 18087, allowedRoutes: random() < 0.7 ? all : selected },
    ...(random() < (plain ? 0.1 : 0.6) ? [{ name: 'other', port: 18087, hostname: '*.wild.example.com', allowedRoutes: all }] : []),
  ];
}

function slice(random: Random, ns: string, name: string): KubeObject {
  return endpointSlice(ns, name, Array.from({ length: 1 + Math.floor(random() * 3) }, () => `10.${NAMESPACES.indexOf(ns)}.${Math.floor(random() * 4)}.${1 + Math.floor(random() * 20)}`));
}

function comparable(outcome: RenderOutcome): unknown {
  if (!outcome.ok) return { ok: false, message: outcome.message };
  return { config: outcome.haproxyConfig, files: outcome.auxiliaryFiles, checksum: outcome.checksum, warnings: outcome.warnings, status: outcome.gatewayStatus };
}

function change(random: Random, stores: Map<string, IndexedStore>, plain: boolean): void {
  const store = (name: string): IndexedStore => stores.get(name) as IndexedStore;
  const ns = pick(random, NAMESPACES);
  const roll = random();
  if (roll < 0.35) store('httproutes').upsert(randomRoute(random, ns, `r${Math.floor(random() * 8)}`, plain));
  else if (roll < 0.45) store('httproutes').delete(`${ns}/r${Math.floor(random() * 8)}`);
  else if (roll < 0.65) store('endpointslices').upsert(slice(random, ns, `s${Math.floor(random() * 4)}`));
  else if (roll < 0.7) store('services').delete(`${ns}/s${Math.floor(random() * 4)}`);
  else if (roll < 0.75) store('services').upsert(service(ns, `s${Math.floor(random() * 4)}`));
  else if (roll < 0.8) {
    if (random() < 0.5) store('referencegrants').upsert(referenceGrant(ns, 'grant', pick(random, NAMESPACES)));
    else store('referencegrants').delete(`${ns}/grant`);
  } else if (roll < 0.85) store('namespaces').upsert(namespace(ns, random() < 0.5 ? { gw: 'yes' } : {}));
  else if (roll < 0.9) store('gateways').upsert(gateway('infra', 'gw', listeners(random, plain)));
  else if (roll < 0.95) {
    // An Ingress older than every route: its host is its namespace's, and routes of others lose it.
    const created = { creationTimestamp: new Date(Date.UTC(2023, 0, 1) + Math.floor(random() * 3) * 60_000).toISOString() };
    store('ingresses').upsert(ingress(ns, 'ing', { rules: [rule(pick(random, HOSTS).replace('*', 'star'), { path: pick(random, ['/', '/v2']), service: 's0' })] }, created));
  }
  else {
    // Several changes in one render.
    store('httproutes').upsert(randomRoute(random, ns, `r${Math.floor(random() * 8)}`, plain));
    store('endpointslices').upsert(slice(random, pick(random, NAMESPACES), `s${Math.floor(random() * 4)}`));
  }
}

async function compareWithCold(seeds: readonly number[], plain: boolean): Promise<void> {
  const set: TemplateSetSource = withValues(await defaultTemplateSet(), {});
  for (const seed of seeds) {
    const random = seededRandom(seed);
    const objects: KubeObject[] = [gatewayClass(), gateway('infra', 'gw', listeners(random, plain))];
    for (const ns of NAMESPACES) {
      objects.push(namespace(ns, { gw: 'yes' }));
      for (let s = 0; s < 4; s++) objects.push(service(ns, `s${s}`), slice(random, ns, `s${s}`));
      for (let r = 0; r < 6; r++) objects.push(randomRoute(random, ns, `r${r}`, plain));
    }
    const stores = indexedStores(set, objects);
    const engine = new TemplateEngine();
    let baseline: RenderBaseline | undefined;
    for (let step = 0; step < 40; step++) {
      if (step > 0) change(random, stores, plain);
      const request = { set, lookup: (name: string) => stores.get(name), storeVersion: step, baseline };
      const warm = renderAndValidate(engine, request);
      const cold = renderAndValidate(new TemplateEngine(), request);
      expect(comparable(warm), `seed ${seed} step ${step}`).toEqual(comparable(cold));
      if (warm.ok) baseline = { haproxyConfig: warm.haproxyConfig, auxiliaryFiles: warm.auxiliaryFiles };
    }
  }
}

describe('the Gateway model built route by route', () => {
  it('renders after each random change exactly as a cold render of the same stores and baseline', async () => {
    await compareWithCold([1, 2], false);
  });

  it('renders plain routes, whose route tables are patched key by key, exactly as a cold render after each random change', async () => {
    await compareWithCold([3, 4], true);
  });
});
