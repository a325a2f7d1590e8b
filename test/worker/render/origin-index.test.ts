// The origin index crosses threads without its sections (a structured clone leaves out the
// non-enumerable getter), and the receiving side computes the very same sections from the config.
import { describe, expect, it } from 'vitest';
import { renderAndValidate, withSections } from '../../../src/worker/render/renderer.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import type { KubeObject, RenderSuccess, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, indexedStores, ingress, rule, service } from '../../helpers/cluster.js';
import { gateway, gatewayClass, httpRoute } from '../../helpers/gateway-objects.js';

function render(engine: TemplateEngine, set: TemplateSetSource, objects: readonly KubeObject[]): RenderSuccess {
  const stores = indexedStores(set, objects);
  const outcome = renderAndValidate(engine, { set, lookup: (name) => stores.get(name), storeVersion: 1 });
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome;
}

const view = (out: RenderSuccess): unknown => ({ objects: out.origins?.objects, names: { ...out.origins?.names }, sections: out.origins?.sections });

describe('origin index', () => {
  it('crosses a structured clone as objects and names only, and gets the same sections back from the config', async () => {
    const set = await defaultTemplateSet();
    const stores = indexedStores(set, [service('shop', 'web'), ingress('shop', 'web', { rules: [rule('shop.test', { path: '/', service: 'web' })] })]);
    const outcome = renderAndValidate(new TemplateEngine(), { set, lookup: (name) => stores.get(name), storeVersion: 1 });
    if (!outcome.ok || outcome.origins === undefined) throw new Error('render failed');
    const copy = structuredClone(outcome.origins);
    expect(Object.keys(copy).sort()).toEqual(['names', 'objects']);
    const restored = withSections(copy, outcome.haproxyConfig);
    expect(restored.sections.length).toBeGreaterThan(3);
    expect(restored.sections).toEqual(outcome.origins.sections);
    expect(restored.sections.find((s) => s.keyword === 'backend' && s.name.includes('shop'))?.object).toBe(0);
  });

  it("follows an Ingress whose metadata alone changed (its backends stay the same objects), as a cold build does", async () => {
    const set = await defaultTemplateSet();
    const shop = ingress('shop', 'web', { rules: [rule('shop.test', { path: '/', service: 'web' })] });
    const blog = ingress('blog', 'web', { rules: [rule('blog.test', { path: '/', service: 'web' })] });
    const base = [service('shop', 'web'), service('blog', 'web'), endpointSlice('shop', 'web', ['10.0.0.1']), shop, blog];
    const engine = new TemplateEngine();
    render(engine, set, base);
    const relabelled = { ...shop, metadata: { ...shop.metadata, resourceVersion: '99', labels: { team: 'b' } } };
    const steps: KubeObject[][] = [
      [service('shop', 'web'), service('blog', 'web'), endpointSlice('shop', 'web', ['10.0.0.1']), relabelled, blog],
      [service('shop', 'web'), service('blog', 'web'), endpointSlice('shop', 'web', ['10.0.0.2']), relabelled, blog],
      [service('shop', 'web'), service('blog', 'web'), endpointSlice('shop', 'web', ['10.0.0.2']), relabelled],
      base,
    ];
    for (const objects of steps) {
      const incremental = render(engine, set, objects);
      expect(view(incremental)).toEqual(view(render(new TemplateEngine(), set, objects)));
    }
    expect(render(engine, set, steps[0] as KubeObject[]).origins?.objects.find((o) => o.namespace === 'shop')?.version).toBe('99');
  });

  it('ties an HTTPRoute\'s backends to the HTTPRoute, not to an Ingress of the same name, and follows its edits as a cold build does', async () => {
    const set = await defaultTemplateSet();
    const route = (version: string, path: string): KubeObject =>
      httpRoute('shop', 'web', { parentRefs: [{ name: 'gw' }], hostnames: ['route.test'], rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ name: 'web', port: 80 }] }] }, { resourceVersion: version });
    const common = [gatewayClass(), gateway('shop', 'gw', [{ name: 'http', port: 18090 }]), service('shop', 'web'), endpointSlice('shop', 'web', ['10.0.0.1'])];
    const sameName = ingress('shop', 'web', { rules: [rule('shop.test', { path: '/', service: 'web' })] });
    const engine = new TemplateEngine();
    const steps: KubeObject[][] = [
      [...common, sameName, route('5', '/a')],
      [...common, sameName, route('6', '/a')],
      [...common, sameName, route('7', '/b')],
      [...common, route('7', '/b')],
      [...common, sameName, route('8', '/b')],
    ];
    for (const objects of steps) {
      const incremental = render(engine, set, objects);
      expect(view(incremental)).toEqual(view(render(new TemplateEngine(), set, objects)));
    }
    const last = render(engine, set, steps[4] as KubeObject[]).origins;
    const owner = (backend: string) => last?.objects[last.names[backend] as number];
    expect(owner('gw_shop_web_0_0')).toEqual({ kind: 'HTTPRoute', namespace: 'shop', name: 'web', version: '8' });
    expect(owner('ing_shop_web_web_80')?.kind).toBe('Ingress');
    expect(last?.sections.find((s) => s.keyword === 'backend' && s.name === 'gw_shop_web_0_0')?.object).toBe(last?.names.gw_shop_web_0_0);
  });
});
