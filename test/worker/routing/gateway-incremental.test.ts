// The Gateway part of the model across renders: after an EndpointSlice, Service or
// ReferenceGrant change, a render that reuses the previous one (its caches, its baseline) gives
// exactly what a cold render of the same stores and baseline gives, and route backends nothing
// touched keep their server slots.
import { describe, expect, it } from 'vitest';
import { renderAndValidate } from '../../../src/worker/render/renderer.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import type { KubeObject, RenderBaseline, RenderOutcome, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, indexedStores, service, withValues } from '../../helpers/cluster.js';
import { gateway, gatewayClass, httpRoute, ref, referenceGrant } from '../../helpers/gateway-objects.js';
import { RoutingBuilder } from '../../../src/worker/routing/routing-builder.js';
import { modelOptions } from '../../../src/worker/routing/ingress-model.js';
import { GuardedReader } from '../../../src/worker/store/guarded-reader.js';

function ok(outcome: RenderOutcome): Extract<RenderOutcome, { ok: true }> {
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome;
}

const baselineOf = (out: Extract<RenderOutcome, { ok: true }>): RenderBaseline => ({ haproxyConfig: out.haproxyConfig, auxiliaryFiles: out.auxiliaryFiles }) as RenderBaseline;

type Rendered = Extract<RenderOutcome, { ok: true }>;
type Render = (engine: TemplateEngine, baseline?: RenderBaseline) => Rendered;

function rendererOf(set: TemplateSetSource, stores: ReturnType<typeof indexedStores>): Render {
  return (engine, baseline) => ok(renderAndValidate(engine, { set, lookup: (name) => stores.get(name), storeVersion: 1, ...(baseline === undefined ? {} : { baseline }) }));
}

/**
 * Applies each change in turn, rendering after it with `engine` (warm) and with a new engine
 * (cold) on the same baseline; their config and files must be equal, and `each` checks more.
 * Returns the last warm render.
 */
function warmAsCold(render: Render, engine: TemplateEngine, first: Rendered, changes: readonly (() => void)[], each?: (warm: Rendered, cold: Rendered) => void): Rendered {
  let last = first;
  for (const change of changes) {
    const baseline = baselineOf(last);
    change();
    const warm = render(engine, baseline);
    const cold = render(new TemplateEngine(), baseline);
    expect(warm.haproxyConfig).toBe(cold.haproxyConfig);
    expect(warm.auxiliaryFiles).toEqual(cold.auxiliaryFiles);
    each?.(warm, cold);
    last = warm;
  }
  return last;
}

describe('Gateway model across renders', () => {
  it('renders after each change exactly as a cold render of the same stores and baseline', async () => {
    const set: TemplateSetSource = await defaultTemplateSet();
    const objects: KubeObject[] = [gatewayClass(), gateway('infra', 'gw', [{ name: 'http', port: 18087, allowedRoutes: { namespaces: { from: 'All' } } }])];
    for (let i = 0; i < 20; i++) {
      objects.push(service('apps', `s${i}`), endpointSlice('apps', `s${i}`, [`10.0.0.${i + 1}`]));
      objects.push(httpRoute('apps', `r${i}`, { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: [`h${i}.example.com`], rules: [{ backendRefs: [ref(`s${i}`), ref('shared', { namespace: 'common' })] }] }));
    }
    objects.push(service('common', 'shared'), endpointSlice('common', 'shared', ['10.1.0.1']), referenceGrant('common', 'apps', 'apps'));
    const stores = indexedStores(set, objects);
    const engine = new TemplateEngine();
    const render = rendererOf(set, stores);
    let last = render(engine);
    const changes: (() => void)[] = [
      () => stores.get('endpointslices')?.upsert(endpointSlice('apps', 's3', ['10.0.9.1', '10.0.9.2'])),
      () => stores.get('services')?.delete('apps/s4'),
      () => stores.get('referencegrants')?.delete('common/apps'),
      () => stores.get('referencegrants')?.upsert(referenceGrant('common', 'apps', 'apps', 'shared')),
    ];
    last = warmAsCold(render, engine, last, changes);
    const slots = last.auxiliaryFiles.files['server-slots.txt'] ?? '';
    expect(slots).toContain('gw_apps_r3_0_0 10.0.9.1:8080 10.0.9.2:8080');
    expect(slots).toContain('gw_apps_r5_0_0 10.0.0.6:8080');
    expect(slots).toContain('gw_apps_r5_0_1 10.1.0.1:8080');
    expect(last.haproxyConfig).not.toContain('backend gw_apps_r4_0_0');
  });

  it('keeps to the budgets across renders as a cold render does, while routes come and go and the namespaces cross their shares', async () => {
    const set = withValues(await defaultTemplateSet(), { maxOutputBytes: 60_000, fdHardLimit: 120 });
    const at = (i: number) => ({ creationTimestamp: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString() });
    const parent = { parentRefs: [{ name: 'gw', namespace: 'infra' }] };
    const route = (ns: string, i: number, backends = 1) =>
      httpRoute(ns, `r${i}`, { ...parent, hostnames: [`h${i}.${ns}.example.com`], rules: [{ backendRefs: Array.from({ length: backends }, (_, b) => ref(`s${b}`)) }] }, at(i));
    const objects: KubeObject[] = [gatewayClass(), gateway('infra', 'gw', [{ name: 'http', port: 18087, allowedRoutes: { namespaces: { from: 'All' } } }])];
    for (const ns of ['big', 'small']) for (let b = 0; b < 4; b++) objects.push(service(ns, `s${b}`), endpointSlice(ns, `s${b}`, [`10.0.${b}.1`]));
    for (let i = 0; i < 30; i++) objects.push(route('big', i, 4));
    objects.push(route('small', 100));
    const stores = indexedStores(set, objects);
    const engine = new TemplateEngine();
    const render = rendererOf(set, stores);
    let last = render(engine);
    const limited = (out: typeof last) => [out.warnings.filter((w) => w.includes('it is not served')).length, out.warnings.filter((w) => w.includes('get no servers')).length];
    // Routes are left out for the output budget and starved of slots.
    expect(limited(last).every((n) => n > 0)).toBe(true);
    const changes: (() => void)[] = [
      () => stores.get('httproutes')?.upsert(route('big', 40, 4)),
      () => stores.get('endpointslices')?.upsert(endpointSlice('big', 's1', ['10.0.9.1', '10.0.9.2'])),
      () => { for (let i = 0; i < 25; i++) stores.get('httproutes')?.delete(`big/r${i}`); },
      () => stores.get('httproutes')?.upsert(route('small', 101, 2)),
      () => { for (let i = 0; i < 25; i++) stores.get('httproutes')?.upsert(route('big', i, 4)); },
    ];
    last = warmAsCold(render, engine, last, changes, (warm, cold) => {
      expect(warm.warnings).toEqual(cold.warnings);
      // The small namespace's routes are served with their servers throughout.
      expect(warm.auxiliaryFiles.maps['gateway-0-host-prefix.map']).toContain('h100.small.example.com/ gw_small_r100_0_0');
    });
    expect(limited(last).every((n) => n > 0)).toBe(true);
  });

  it('keeps the backend objects and the backends list of a changed route whose backends are the same, and renders as a cold render does', async () => {
    const set: TemplateSetSource = await defaultTemplateSet();
    const parent = { parentRefs: [{ name: 'gw', namespace: 'infra' }] };
    const route = (i: number, path: string, backend = `s${i}`) =>
      httpRoute('apps', `r${i}`, { ...parent, hostnames: [`h${i}.example.com`], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [ref(backend)] }, { matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [ref(backend)] }] });
    const objects: KubeObject[] = [gatewayClass(), gateway('infra', 'gw', [{ name: 'http', port: 18087, allowedRoutes: { namespaces: { from: 'All' } } }])];
    for (let i = 0; i < 5; i++) objects.push(service('apps', `s${i}`), endpointSlice('apps', `s${i}`, [`10.0.0.${i + 1}`]), route(i, '/v1'));
    const stores = indexedStores(set, objects);
    const builder = new RoutingBuilder(modelOptions(set.values), set.values);
    const build = (baseline?: RenderBaseline) => builder.build(new GuardedReader((name) => stores.get(name), () => undefined), baseline, () => undefined);
    const slotsOf = (serverSlotsFile: string) => ({ haproxyConfig: '', auxiliaryFiles: { maps: {}, files: { 'server-slots.txt': serverSlotsFile }, certificates: {} } }) as unknown as RenderBaseline;
    const first = build();
    const byName = (model: typeof first, name: string) => model.backends.find((b) => b.name === name);
    stores.get('httproutes')?.upsert(route(2, '/v2'));
    const second = build(slotsOf(first.serverSlotsFile));
    expect(second.backends).toBe(first.backends);
    expect(second.gateway?.frontends[0]).not.toBe(first.gateway?.frontends[0]);
    // A route sent to another Service gets backends of its own; the others keep theirs.
    stores.get('httproutes')?.upsert(route(3, '/v2', 's4'));
    const third = build(slotsOf(second.serverSlotsFile));
    expect(third.backends).not.toBe(second.backends);
    expect(byName(third, 'gw_apps_r3_0_0')).not.toBe(byName(second, 'gw_apps_r3_0_0'));
    expect(byName(third, 'gw_apps_r3_0_0')?.service).toBe('s4');
    expect(byName(third, 'gw_apps_r1_0_0')).toBe(byName(second, 'gw_apps_r1_0_0'));
    // The render after such a change is the cold render of the same stores and baseline.
    const engine = new TemplateEngine();
    const render = rendererOf(set, stores);
    let last = render(engine);
    last = warmAsCold(render, engine, last, [() => stores.get('httproutes')?.upsert(route(1, '/v3')), () => stores.get('httproutes')?.upsert(route(1, '/v3', 's0')), () => stores.get('httproutes')?.upsert(route(0, '/v4'))]);
    expect(last.haproxyConfig).toContain('backend gw_apps_r1_0_0');
    expect(last.auxiliaryFiles.files['server-slots.txt']).toContain('gw_apps_r1_0_0 10.0.0.1:8080');
  });
  it('renders, reports attached routes and warns as a cold render does after changes that keep every hostname, where only the changed routes are visited again', async () => {
    const set: TemplateSetSource = await defaultTemplateSet();
    const parent = { parentRefs: [{ name: 'gw', namespace: 'infra' }, { name: 'gw', namespace: 'infra', sectionName: 'none' }] };
    const route = (i: number, path: string, backend = `s${i}`, matches = 1) =>
      httpRoute('apps', `r${i}`, { ...parent, hostnames: [`h${i}.example.com`], rules: [{ matches: Array.from({ length: matches }, (_, m) => ({ path: { type: 'PathPrefix', value: `${path}/${m}` } })), backendRefs: [ref(backend)] }] });
    const listeners = [{ name: 'http', port: 18087, allowedRoutes: { namespaces: { from: 'All' } } }, { name: 'other', port: 18088, allowedRoutes: { namespaces: { from: 'Same' } } }];
    const objects: KubeObject[] = [gatewayClass(), gateway('infra', 'gw', listeners)];
    for (let i = 0; i < 8; i++) objects.push(service('apps', `s${i}`), endpointSlice('apps', `s${i}`, [`10.0.0.${i + 1}`]), route(i, '/v1'));
    const stores = indexedStores(set, objects);
    const engine = new TemplateEngine();
    const render = rendererOf(set, stores);
    let last = render(engine);
    const changes: (() => void)[] = [
      () => stores.get('httproutes')?.upsert(route(2, '/v2')),
      () => stores.get('httproutes')?.upsert(route(3, '/v2', 's7')),
      () => stores.get('httproutes')?.upsert(route(4, '/v2', 'missing')),
      () => stores.get('httproutes')?.upsert(route(4, '/v3')),
      () => stores.get('httproutes')?.upsert(route(5, '/v2', 's5', 1100)),
      () => stores.get('httproutes')?.upsert(route(5, '/v4')),
      () => { stores.get('httproutes')?.upsert(route(0, '/v5')); stores.get('httproutes')?.upsert(route(7, '/v5', 's1')); },
      () => stores.get('endpointslices')?.upsert(endpointSlice('apps', 's6', ['10.0.9.6'])),
    ];
    last = warmAsCold(render, engine, last, changes, (warm, cold) => {
      expect(warm.warnings).toEqual(cold.warnings);
      expect(warm.gatewayStatus).toEqual(cold.gatewayStatus);
    });
    expect(last.gatewayStatus?.gateways[0]?.listeners.map((l) => l.attachedRoutes)).toEqual([8, 0]);
    expect(last.auxiliaryFiles.maps['gateway-0-host-prefix.map']).toContain('h7.example.com/v5/0/ gw_apps_r7_0_0');
  });
});
