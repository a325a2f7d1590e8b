// The origin index crosses threads without its sections (a structured clone leaves out the
// non-enumerable getter), and the receiving side computes the very same sections from the config.
import { describe, expect, it } from 'vitest';
import { renderAndValidate, withSections } from '../../../src/worker/render/renderer.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import { defaultTemplateSet, indexedStores, ingress, rule, service } from '../../helpers/cluster.js';

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
});
