// The endpoint lane: after EndpointSlice changes alone, a render re-renders only the touched
// backends' sections (and server-slots lines) and splices them into the previous output. Each
// lane render here is checked against a cold render of the same stores and baseline (config,
// files, checksum, warnings), and the lane must say what it edited; whenever it cannot show its
// result equal, the whole set renders instead.
import { describe, expect, it } from 'vitest';
import type { KubeObject, RenderBaseline, RenderOutcome, RenderSuccess, TemplateSetSource } from '../../../src/worker/protocol.js';
import { configSections } from '../../../src/worker/render/origin-index.js';
import { renderAndValidate } from '../../../src/worker/render/renderer.js';
import { SERVER_SLOTS_FILE } from '../../../src/worker/routing/server-slots.js';
import type { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import { defaultTemplateSet, endpointSlice, indexedStores, ingress, rule, service, withValues } from '../../helpers/cluster.js';
import { gateway, gatewayClass, httpRoute, ref, referenceGrant } from '../../helpers/gateway-objects.js';

const NS = 'shop';

function cluster(apps: number): KubeObject[] {
  const objects: KubeObject[] = [];
  for (let i = 0; i < apps; i++) {
    objects.push(ingress(NS, `app${i}`, { rules: [rule(`app${i}.example.com`, { path: '/', service: `svc${i}` })] }));
    objects.push(service(NS, `svc${i}`));
    objects.push(endpointSlice(NS, `svc${i}`, [`10.0.${i}.1`, `10.0.${i}.2`]));
  }
  return objects;
}

/** Ingress apps beside HTTPRoute apps: route i has a header filter, and route 0 a second backend in namespace `common` (granted). */
function routeCluster(apps: number): KubeObject[] {
  const objects: KubeObject[] = [...cluster(2), gatewayClass(), gateway('infra', 'gw', [{ name: 'http', port: 18087, allowedRoutes: { namespaces: { from: 'All' } } }])];
  objects.push(service('common', 'shared'), endpointSlice('common', 'shared', ['10.9.0.1']), referenceGrant('common', 'apps', NS));
  for (let i = 0; i < apps; i++) {
    objects.push(service(NS, `rs${i}`), endpointSlice(NS, `rs${i}`, [`10.1.${i}.1`]));
    const filters = [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-App', value: `r${i}` }] } }];
    const backendRefs = i === 0 ? [ref(`rs${i}`), ref('shared', { namespace: 'common' })] : [ref(`rs${i}`)];
    objects.push(httpRoute(NS, `r${i}`, { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: [`r${i}.example.com`], rules: [{ filters, backendRefs }] }));
  }
  return objects;
}

/** One long-lived engine over stores that tests change; `render` also renders cold and compares. */
class Lane {
  readonly engine = new TemplateEngine();
  readonly stores: Map<string, IndexedStore>;
  baseline: RenderBaseline | undefined;
  #version = 0;

  constructor(readonly set: TemplateSetSource, objects: readonly KubeObject[]) {
    this.stores = indexedStores(set, objects);
  }

  slices(): IndexedStore {
    return this.stores.get('endpointslices') as IndexedStore;
  }

  render(): RenderSuccess {
    const request = { set: this.set, lookup: (name: string) => this.stores.get(name), storeVersion: ++this.#version, baseline: this.baseline };
    const outcome = renderAndValidate(this.engine, request);
    const cold = renderAndValidate(new TemplateEngine(), request);
    expect(comparable(outcome)).toEqual(comparable(cold));
    if (!outcome.ok) throw new Error(outcome.message);
    this.baseline = { haproxyConfig: outcome.haproxyConfig, auxiliaryFiles: outcome.auxiliaryFiles };
    return outcome;
  }
}

function comparable(outcome: RenderOutcome): unknown {
  if (!outcome.ok) return { ok: false, message: outcome.message };
  return { config: outcome.haproxyConfig, files: outcome.auxiliaryFiles, checksum: outcome.checksum, warnings: outcome.warnings, rejections: outcome.rejections };
}

describe('the endpoint lane', () => {
  it('renders an endpoint move as edits of the changed backend and its slot line, equal to a cold render', async () => {
    const lane = new Lane(await defaultTemplateSet(), cluster(20));
    const first = lane.render();
    expect(first.edits).toBeUndefined();
    lane.slices().upsert(endpointSlice(NS, 'svc7', ['10.0.7.1', '10.0.7.9']));
    const second = lane.render();
    expect(Object.keys(second.edits ?? {}).sort()).toEqual(['config', `files/${SERVER_SLOTS_FILE}`]);
    const [edit] = second.edits?.['config'] ?? [];
    expect(first.haproxyConfig.slice(edit?.at, (edit?.at ?? 0) + (edit?.remove ?? 0))).toMatch(/^backend ing_shop_app7_svc7_80\n/);
    expect(edit?.text).toContain('10.0.7.9:8080');
    // The same origin objects and names; the sections are read from the new config, so the old one is not kept for them.
    expect(second.origins?.objects).toBe(first.origins?.objects);
    expect(second.origins?.names).toBe(first.origins?.names);
    expect(second.origins?.sections).toEqual(configSections(second.haproxyConfig, second.origins?.names ?? {}));
    // A second move of the same backend, and one of another, go the same way.
    lane.slices().upsert(endpointSlice(NS, 'svc7', ['10.0.7.3']));
    lane.slices().upsert(endpointSlice(NS, 'svc12', ['10.0.12.1', { address: '10.0.12.2', ready: false }]));
    const third = lane.render();
    expect(third.edits?.['config']).toHaveLength(2);
  });

  it('renders a slice change that touches no backend as the same output', async () => {
    const lane = new Lane(await defaultTemplateSet(), cluster(5));
    const first = lane.render();
    lane.slices().upsert(endpointSlice(NS, 'unrouted', ['10.9.0.1']));
    const second = lane.render();
    expect(second.edits).toEqual({});
    expect(second.checksum).toBe(first.checksum);
  });

  it('renders the whole set when a slot count changes, an Ingress changed too, or the baseline is not the previous output', async () => {
    const lane = new Lane(await defaultTemplateSet(), cluster(5));
    const first = lane.render();
    lane.slices().upsert(endpointSlice(NS, 'svc1', Array.from({ length: 14 }, (_, i) => `10.0.1.${i + 1}`)));
    expect(lane.render().edits).toBeUndefined();
    lane.slices().upsert(endpointSlice(NS, 'svc2', ['10.0.2.5']));
    lane.stores.get('ingresses')?.upsert(ingress(NS, 'app3', { rules: [rule('app3.example.com', { path: '/v2', service: 'svc3' })] }));
    expect(lane.render().edits).toBeUndefined();
    lane.slices().upsert(endpointSlice(NS, 'svc2', ['10.0.2.6']));
    lane.baseline = { haproxyConfig: first.haproxyConfig, auxiliaryFiles: first.auxiliaryFiles };
    expect(lane.render().edits).toBeUndefined();
  });

  it('renders the whole set for a slice the guard rejects in part, and for a backend whose slots go empty', async () => {
    const lane = new Lane(await defaultTemplateSet(), cluster(5));
    lane.render();
    // Loopback endpoints are refused by the default address policy.
    lane.slices().upsert(endpointSlice(NS, 'svc1', ['10.0.1.1', '127.0.0.5']));
    const refused = lane.render();
    expect(refused.edits).toBeUndefined();
    expect(refused.rejections.some((r) => r.kind === 'EndpointSlice')).toBe(true);
    lane.slices().upsert(endpointSlice(NS, 'svc2', []));
    expect(lane.render().edits).toBeUndefined();
  });

  it('renders an endpoint move behind an HTTPRoute, filters and a backend in another namespace included, as edits equal to a cold render', async () => {
    const lane = new Lane(await defaultTemplateSet(), routeCluster(6));
    const first = lane.render();
    lane.slices().upsert(endpointSlice(NS, 'rs3', ['10.1.3.1', '10.1.3.7']));
    const second = lane.render();
    expect(Object.keys(second.edits ?? {}).sort()).toEqual(['config', `files/${SERVER_SLOTS_FILE}`]);
    const [edit] = second.edits?.['config'] ?? [];
    expect(first.haproxyConfig.slice(edit?.at, (edit?.at ?? 0) + (edit?.remove ?? 0))).toMatch(/^backend gw_shop_r3_0_0\n/);
    expect(edit?.text).toContain('http-request set-header x-app "r3"');
    expect(edit?.text).toContain('10.1.3.7:8080');
    expect(second.gatewayStatus).toEqual(first.gatewayStatus);
    // The Service in the other namespace, behind route 0's second backendRef.
    lane.slices().upsert(endpointSlice('common', 'shared', ['10.9.0.2']));
    const third = lane.render();
    expect(third.edits?.['config']).toHaveLength(1);
    expect(third.auxiliaryFiles.files[SERVER_SLOTS_FILE]).toContain('gw_shop_r0_0_1 10.9.0.2:8080');
    // An Ingress endpoint and a route endpoint in one render.
    lane.slices().upsert(endpointSlice(NS, 'svc1', ['10.0.1.8']));
    lane.slices().upsert(endpointSlice(NS, 'rs5', ['10.1.5.8']));
    expect(lane.render().edits?.['config']).toHaveLength(2);
    // After the lane, a route change renders the whole set, from the lane's output as its baseline.
    lane.stores.get('httproutes')?.upsert(httpRoute(NS, 'r4', { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: ['r4.example.com'], rules: [{ backendRefs: [ref('rs4'), ref('rs3')] }] }));
    const full = lane.render();
    expect(full.edits).toBeUndefined();
    expect(full.auxiliaryFiles.files[SERVER_SLOTS_FILE]).toContain('gw_shop_r4_0_1 10.1.3.1:8080 10.1.3.7:8080');
  });

  it('renders the whole set for an HTTPRoute endpoint change that comes with a Gateway change, or empties a backend', async () => {
    const lane = new Lane(await defaultTemplateSet(), routeCluster(3));
    lane.render();
    lane.slices().upsert(endpointSlice(NS, 'rs1', ['10.1.1.9']));
    lane.stores.get('gateways')?.upsert(gateway('infra', 'gw', [{ name: 'http', port: 18088, allowedRoutes: { namespaces: { from: 'All' } } }]));
    expect(lane.render().edits).toBeUndefined();
    lane.slices().upsert(endpointSlice(NS, 'rs2', []));
    expect(lane.render().edits).toBeUndefined();
  });

  it('renders the whole set for a Service a warning names, a longer name after it included, and edits the others', async () => {
    const objects = [...cluster(12), ingress(NS, 'broken', { rules: [rule('broken.example.com', { path: '/', service: 'svc10', port: 9999 })] })];
    const lane = new Lane(await defaultTemplateSet(), objects);
    const first = lane.render();
    expect(first.warnings.some((w) => w.includes(' shop/svc10 '))).toBe(true);
    lane.slices().upsert(endpointSlice(NS, 'svc10', ['10.0.10.7']));
    expect(lane.render().edits).toBeUndefined();
    // `shop/svc1` is the start of the name the warning gives: the lane declines it as well.
    lane.slices().upsert(endpointSlice(NS, 'svc1', ['10.0.1.7']));
    expect(lane.render().edits).toBeUndefined();
    lane.slices().upsert(endpointSlice(NS, 'svc2', ['10.0.2.7']));
    expect(lane.render().edits?.['config']).toHaveLength(1);
  });

  it('edits many backends render after render, one with two slot lines among them, each render equal to a cold one', async () => {
    const objects = cluster(30);
    objects.push(service(NS, 'big'), endpointSlice(NS, 'big', Array.from({ length: 105 }, (_, i) => `10.5.${Math.floor(i / 200)}.${(i % 200) + 1}`)));
    objects.push(ingress(NS, 'bigapp', { rules: [rule('big.example.com', { path: '/', service: 'big' })] }));
    const lane = new Lane(await defaultTemplateSet(), objects);
    lane.render();
    for (let step = 1; step <= 12; step++) {
      const app = (step * 7) % 30;
      lane.slices().upsert(endpointSlice(NS, `svc${app}`, [`10.0.${app}.1`, `10.0.${app}.${100 + step}`]));
      lane.slices().upsert(endpointSlice(NS, 'big', Array.from({ length: 105 }, (_, i) => `10.5.${Math.floor(i / 200)}.${((i + step) % 200) + 1}`)));
      const outcome = lane.render();
      expect(Object.keys(outcome.edits ?? {}).sort(), `step ${step}`).toEqual(['config', `files/${SERVER_SLOTS_FILE}`]);
      expect(outcome.auxiliaryFiles.files[SERVER_SLOTS_FILE]?.match(/^ing_shop_bigapp_big_80 /gm)).toHaveLength(2);
    }
  });

  it('renders the whole set when a template reads the EndpointSlice store itself', async () => {
    const base = await defaultTemplateSet();
    const set: TemplateSetSource = {
      ...withValues(base, {}),
      hash: `${base.hash}-reads-slices`,
      maps: { ...base.maps, 'slices.map': '{{#each (list "endpointslices")}}{{metadata.name}} {{len endpoints}}\n{{/each}}' },
    };
    const lane = new Lane(set, cluster(3));
    lane.render();
    lane.slices().upsert(endpointSlice(NS, 'svc1', ['10.0.1.7']));
    const second = lane.render();
    expect(second.edits).toBeUndefined();
    expect(second.auxiliaryFiles.maps['slices.map']).toContain('svc1-slice 1');
  });
});
