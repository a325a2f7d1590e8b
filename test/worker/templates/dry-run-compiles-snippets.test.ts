// A template set's dry run leaves every template compiled, snippets the empty render never calls
// included (the default set's backend snippet runs only for a backend), so the first real render
// compiles nothing; and running those snippets outside a render has no effect on it.
import Handlebars from 'handlebars';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { renderAndValidate } from '../../../src/worker/render/renderer.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import { defaultTemplateSet, indexedStores } from '../../helpers/cluster.js';
import { smallCluster } from '../../helpers/render-harness.js';
import { comparable } from '../../helpers/render-outcomes.js';

/** Handlebars' code generator, shared by every environment Handlebars.create() makes. */
const generator = (Handlebars as unknown as { JavaScriptCompiler: { prototype: { compile: (...args: unknown[]) => unknown } } }).JavaScriptCompiler.prototype;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('template set dry run', () => {
  it('compiles the snippets the empty render does not call, so the first render compiles nothing', async () => {
    const set = await defaultTemplateSet();
    const engine = new TemplateEngine();
    engine.dryRun(set);
    const compiles = vi.spyOn(generator, 'compile');
    const stores = indexedStores(set, smallCluster());
    const outcome = renderAndValidate(engine, { set, lookup: (name) => stores.get(name), storeVersion: 1, baseline: undefined });
    expect(outcome.ok).toBe(true);
    if (outcome.ok) expect(outcome.haproxyConfig).toContain('\nbackend ing_shop_front_web_80\n');
    expect(compiles).not.toHaveBeenCalled();
  });

  it('renders after it as a fresh engine does, warnings and files included', async () => {
    const set = await defaultTemplateSet();
    const stores = indexedStores(set, smallCluster());
    const request = { set, lookup: (name: string) => stores.get(name), storeVersion: 1, baseline: undefined };
    const dried = new TemplateEngine();
    dried.dryRun(set);
    expect(comparable(renderAndValidate(dried, request))).toEqual(comparable(renderAndValidate(new TemplateEngine(), request)));
  });
});
