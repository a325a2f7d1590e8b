// The render gate's exclusions change without any store changing: a refused object is left out of
// the next renders, a trial render leaves out whole namespaces, and both end. A long-lived engine
// keeps caches keyed by store generations; each render must still be what a fresh engine renders
// under the same exclusions.
import { describe, expect, it } from 'vitest';
import type { Exclusion, KubeObject, RenderExclusions, RenderOutcome } from '../../../src/worker/protocol.js';
import { renderAndValidate } from '../../../src/worker/render/renderer.js';
import { objectVersion } from '../../../src/worker/store/render-exclusions.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import { defaultTemplateSet, endpointSlice, indexedStores, ingress, rule, service } from '../../helpers/cluster.js';
import { gateway, gatewayClass, httpRoute, ref } from '../../helpers/gateway-objects.js';
import { seededRandom } from '../../../src/main/sources/synthetic/synthetic-cluster.js';

const TENANTS = ['a', 'b', 'c'];

function cluster(): KubeObject[] {
  const apps = TENANTS.flatMap((ns) => [
    ingress(ns, 'web', { rules: [rule(`${ns}.example.com`, { path: '/', service: 'web' })] }, { resourceVersion: `${ns}-ing-1` }),
    httpRoute(ns, 'api', { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: [`api.${ns}.example.com`], rules: [{ backendRefs: [ref('api')] }] }, { resourceVersion: `${ns}-route-1` }),
    service(ns, 'web'),
    service(ns, 'api'),
    endpointSlice(ns, 'web', ['10.0.0.1']),
    endpointSlice(ns, 'api', ['10.0.1.1']),
  ]);
  const gw = gateway('infra', 'gw', [{ name: 'http', port: 8080, allowedRoutes: { namespaces: { from: 'All' } } }]);
  return [gatewayClass(), gw, ...apps];
}

/** What a render serves and says, for comparing two engines. */
function comparable(outcome: RenderOutcome): unknown {
  if (!outcome.ok) return { failed: outcome.phase, message: outcome.message };
  return { config: outcome.haproxyConfig, files: outcome.auxiliaryFiles, rejections: outcome.rejections.map((r) => JSON.stringify(r)).sort() };
}

describe('renders under changing exclusions', () => {
  it('serves what a fresh engine serves after each exclusion comes or goes, with no store change', async () => {
    const set = await defaultTemplateSet();
    const objects = cluster();
    const stores = indexedStores(set, objects);
    const excludable = objects.filter((o) => ['Ingress', 'HTTPRoute', 'Service'].includes(o.kind ?? '') && TENANTS.includes(o.metadata.namespace ?? ''));
    const exclusionOf = (object: KubeObject): Exclusion => ({
      kind: object.kind ?? '',
      namespace: object.metadata.namespace ?? '',
      name: object.metadata.name,
      version: objectVersion(object),
      reason: `refused ${object.kind}`,
    });
    const random = seededRandom(1207);
    const engine = new TemplateEngine();
    const seen = new Set<string>();
    for (let step = 0; step < 40; step++) {
      const draw = random();
      const exclusions: RenderExclusions | undefined =
        draw < 0.25
          ? undefined
          : draw < 0.5
            ? { objects: [], namespaces: TENANTS.filter(() => random() < 0.4) }
            : { objects: excludable.filter(() => random() < 0.2).map(exclusionOf) };
      const request = { set, lookup: (name: string) => stores.get(name), storeVersion: 1, exclusions };
      const kept = renderAndValidate(engine, request);
      const fresh = renderAndValidate(new TemplateEngine(), request);
      expect(kept.ok, `step ${step}`).toBe(true);
      expect(comparable(kept), `step ${step}: ${JSON.stringify(exclusions)}`).toEqual(comparable(fresh));
      if (fresh.ok) seen.add(`${fresh.haproxyConfig.includes('ing_b_web') ? 'b-ingress' : 'no-b-ingress'} ${fresh.rejections.length > 0 ? 'rejections' : 'none'}`);
    }
    // The sequence really moved between serving and leaving out objects, with and without rejections.
    expect(seen.size).toBeGreaterThanOrEqual(3);
  });
});
