// The `{{#memo key}}` block helper and the compile-time checks of memo blocks. A memo block's text
// is cached per key object, so it may depend only on that object and the set's constants
// (@root.values, @root.paths): reads that could reach anything else are refused when the set is
// compiled, and helpers whose effect could not be replayed (store reads, emit, warn) throw when
// the block renders.
import { describe, expect, it } from 'vitest';
import { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import { TemplateEngine, TemplateError } from '../../../src/worker/templates/template-engine.js';
import { renderScope, type ScopeHarness } from '../../helpers/scope.js';

let hashCounter = 0;

/** A template set with a unique hash, so every call compiles afresh. */
function templateSet(haproxyConfig: string, parts: Partial<Omit<TemplateSetSource, 'haproxyConfig'>> = {}): TemplateSetSource {
  return { hash: `memo-test-${++hashCounter}`, stores: [], snippets: {}, maps: {}, files: {}, sslCertificates: {}, values: {}, ...parts, haproxyConfig };
}

function pod(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' } };
}

/** A render scope over a `pods` store holding pods a and b. */
function scopeWith(values: Record<string, unknown> = {}): ScopeHarness {
  const pods = new IndexedStore('pods');
  pods.upsert(pod('a'));
  pods.upsert(pod('b'));
  return renderScope((name) => (name === 'pods' ? pods : undefined), values, { mapsDir: '/maps', filesDir: '/files', certsDir: '/certs' });
}

/** Renders the set's config with `engine` against `values`. */
function render(engine: TemplateEngine, set: TemplateSetSource, values: Record<string, unknown> = {}, storeVersion = 1): string {
  return engine.render(set, scopeWith(values).scope, storeVersion).haproxyConfig;
}

function captureError(fn: () => unknown): TemplateError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateError);
    return error as TemplateError;
  }
  throw new Error('expected the call to throw');
}

function compileError(set: TemplateSetSource): TemplateError {
  return captureError(() => new TemplateEngine().compile(set));
}

describe('memo helper caching', () => {
  it('renders the block with its key object as the context', () => {
    const set = templateSet('{{#memo values.item}}{{name}}:{{port}}{{/memo}}');
    expect(render(new TemplateEngine(), set, { item: { name: 'web', port: 80 } })).toBe('web:80');
  });

  it('reuses the text of a memo block while its key is the same object', () => {
    const engine = new TemplateEngine();
    const set = templateSet('[{{#memo values.item}}{{name}}{{/memo}}]');
    const item = { name: 'a' };
    expect(render(engine, set, { item })).toBe('[a]');
    // Key objects are never mutated in practice; mutating one shows that the text is reused.
    item.name = 'b';
    expect(render(engine, set, { item })).toBe('[a]');
  });

  it('re-renders the block for a new key object, even one with the same content', () => {
    const engine = new TemplateEngine();
    const set = templateSet('{{#memo values.item}}{{name}}-{{@root.values.run}}{{/memo}}');
    expect(render(engine, set, { item: { name: 'a' }, run: 1 })).toBe('a-1');
    expect(render(engine, set, { item: { name: 'a' }, run: 2 })).toBe('a-2');
  });

  it('renders a key that is not an object every time, without caching', () => {
    const engine = new TemplateEngine();
    const set = templateSet('{{#memo values.name}}{{this}}-{{@root.values.run}}{{/memo}}|{{#memo values.missing}}none-{{@root.values.run}}{{/memo}}');
    expect(render(engine, set, { name: 'x', run: 1 })).toBe('x-1|none-1');
    expect(render(engine, set, { name: 'x', run: 2 })).toBe('x-2|none-2');
  });

  it('keeps a separate text per memo block for the same key object', () => {
    const engine = new TemplateEngine();
    const set = templateSet('{{#memo values.item}}first {{name}}{{/memo}} / {{#memo values.item}}second {{name}}{{/memo}}', {
      maps: { 'names.map': '{{#memo values.item}}map {{name}}{{/memo}}' },
    });
    const values = { item: { name: 'a' } };
    const output = engine.render(set, scopeWith(values).scope, 1);
    expect(output.haproxyConfig).toBe('first a / second a');
    expect(output.auxiliaryFiles.maps['names.map']).toBe('map a');
  });

  it('reuses the text of a memo block inside a snippet wherever the snippet is called with the same key', () => {
    const engine = new TemplateEngine();
    const set = templateSet('{{> item values.item}} {{> item values.item}}', { snippets: { item: '{{#memo this}}<{{name}}>{{/memo}}' } });
    const item = { name: 'a' };
    expect(render(engine, set, { item })).toBe('<a> <a>');
    item.name = 'b';
    expect(render(engine, set, { item })).toBe('<a> <a>');
  });

  it('keeps the caches of each compiled template set apart', () => {
    const engine = new TemplateEngine();
    const template = '{{#memo values.item}}{{name}}{{/memo}}';
    const first = templateSet(template);
    const second = templateSet(template);
    const item = { name: 'a' };
    expect(render(engine, first, { item })).toBe('a');
    item.name = 'b';
    expect(render(engine, second, { item })).toBe('b');
    expect(render(engine, first, { item })).toBe('a');
  });

  it('starts from empty caches in a new engine', () => {
    const set = templateSet('{{#memo values.item}}{{name}}{{/memo}}');
    const item = { name: 'a' };
    expect(render(new TemplateEngine(), set, { item })).toBe('a');
    item.name = 'b';
    expect(render(new TemplateEngine(), set, { item })).toBe('b');
  });

  it('caches the text of a nested memo block under its own key', () => {
    const engine = new TemplateEngine();
    const set = templateSet('{{#each values.items}}{{#memo this}}{{name}}({{#memo inner}}{{label}}{{/memo}}){{/memo}};{{/each}}');
    const inner = { label: 'x' };
    const items = [{ name: 'a', inner }];
    expect(render(engine, set, { items })).toBe('a(x);');
    inner.label = 'y';
    // A new outer object re-renders, and its inner block reuses the text cached for `inner`.
    expect(render(engine, set, { items: [{ name: 'b', inner }] })).toBe('b(x);');
    expect(render(engine, set, { items: [{ name: 'c', inner: { label: 'z' } }] })).toBe('c(z);');
  });
});

describe('memo block reads that are refused when the set is compiled', () => {
  const violations = [
    { what: "'../x' climbing above the memo block", template: '{{#with values}}\n{{#memo item}}\n  {{../x}}\n{{/memo}}\n{{/with}}', line: 3, says: "'../x'" },
    { what: "'../../x' climbing out of an each inside the memo block", template: '{{#memo values.item}}\n{{#each list}}\n{{../../x}}\n{{/each}}\n{{/memo}}', line: 3, says: "'../../x'" },
    { what: '@root.routing', template: 'global\n{{#memo values.item}}\n{{@root.routing.backends.length}}\n{{/memo}}', line: 3, says: '@root.routing' },
    { what: '@root.storeVersion in a helper argument', template: '{{#memo values.item}}\n\n{{concat name @root.storeVersion}}{{/memo}}', line: 3, says: '@root.storeVersion' },
    { what: '@index of an enclosing each', template: '{{#each values.items}}\n{{#memo this}}\n{{name}} {{@index}}\n{{/memo}}\n{{/each}}', line: 3, says: '@index' },
    { what: '@first of an enclosing each, in a sub-expression', template: '{{#each values.items}}\n{{#memo this}}{{#if (not @first)}},{{/if}}{{/memo}}\n{{/each}}', line: 2, says: '@first' },
    { what: 'a block parameter of an enclosing block', template: '{{#each values.items as |item|}}\n{{#memo this}}\n\n{{item.name}}\n{{/memo}}\n{{/each}}', line: 4, says: "'item'" },
    { what: 'a dynamic partial', template: '{{#memo values.item}}\n{{> (lookup this "partial")}}\n{{/memo}}', line: 2, says: 'dynamic partial' },
  ];

  for (const { what, template, line, says } of violations) {
    it(`rejects ${what} with a TemplateError naming the template and line`, () => {
      const error = compileError(templateSet(template));
      expect(error.template).toBe('haproxyConfig');
      expect(error.message).toContain(`line ${line}:`);
      expect(error.message).toContain(says);
    });
  }

  const snippetViolations = [
    { what: "'../x'", snippet: 'name: {{name}}\n{{../x}}', line: 2, says: "'../x'" },
    { what: '@root.routing', snippet: '\n\n{{#each @root.routing.backends}}{{name}}{{/each}}', line: 3, says: '@root.routing' },
    { what: '@index of the block around the memo block', snippet: '{{@index}}', line: 1, says: '@index' },
    { what: 'a dynamic partial', snippet: '\n{{> (lookup this "partial")}}', line: 2, says: 'dynamic partial' },
  ];

  for (const { what, snippet, line, says } of snippetViolations) {
    it(`rejects ${what} in a snippet called from a memo block, naming the caller, the snippet and its line`, () => {
      const set = templateSet('global\n{{#each values.items}}\n{{#memo this}}{{> inner}}{{/memo}}\n{{/each}}', { snippets: { inner: snippet } });
      const error = compileError(set);
      expect(error.template).toBe('haproxyConfig');
      expect(error.message).toContain(`snippet inner, line ${line}:`);
      expect(error.message).toContain(says);
    });
  }

  it('rejects a violation in a snippet that a snippet called from a memo block calls', () => {
    const set = templateSet('{{#memo values.item}}{{> outer}}{{/memo}}', { snippets: { outer: '<{{> inner}}>', inner: '\n{{@root.storeVersion}}' } });
    const error = compileError(set);
    expect(error.template).toBe('haproxyConfig');
    expect(error.message).toContain('snippet inner, line 2:');
    expect(error.message).toContain('@root.storeVersion');
  });

  it('names the map template whose memo block is at fault', () => {
    const set = templateSet('global', { maps: { 'hosts.map': '{{#each values.items}}\n{{#memo this}}{{@key}}{{/memo}}\n{{/each}}' } });
    const error = compileError(set);
    expect(error.template).toBe('maps/hosts.map');
    expect(error.message).toContain('line 2:');
  });

  it('names the snippet whose own memo block is at fault', () => {
    const set = templateSet('{{> inner}}', { snippets: { inner: '{{#each values.items}}\n{{#memo this}}{{../x}}{{/memo}}{{/each}}' } });
    const error = compileError(set);
    expect(error.template).toBe('templateSnippets/inner');
    expect(error.message).toContain('line 2:');
  });

  it('does not cache a set that failed the memo checks', () => {
    const engine = new TemplateEngine();
    const set = templateSet('{{#memo values.item}}{{@root.routing}}{{/memo}}');
    captureError(() => engine.compile(set));
    expect(engine.cachedSets).toBe(0);
  });

  it('accepts the same reads outside a memo block, including in snippets called from outside one', () => {
    const set = templateSet('{{#each values.items as |item|}}{{@index}}:{{item.name}}{{../storeVersion}}{{> inner}};{{/each}}', {
      snippets: { inner: '{{@root.storeVersion}}' },
    });
    expect(render(new TemplateEngine(), set, { items: [{ name: 'a' }, { name: 'b' }] }, 7)).toBe('0:a77;1:b77;');
  });
});

describe('memo block reads that are allowed', () => {
  it('reads @root.values and @root.paths inside a memo block', () => {
    const set = templateSet('{{#memo values.item}}{{name}} {{@root.values.port}} {{@root.paths.mapsDir}} {{mapPath "x.map"}}{{/memo}}');
    expect(render(new TemplateEngine(), set, { item: { name: 'a' }, port: 8080 })).toBe('a 8080 /maps /maps/x.map');
  });

  it('reads the key from an each inside the memo block through a block parameter declared inside it', () => {
    const set = templateSet('{{#memo values.item}}{{#with this as |item|}}{{#each list}}{{item.name}}-{{this}};{{/each}}{{/with}}{{/memo}}');
    expect(render(new TemplateEngine(), set, { item: { name: 'a', list: [1, 2] } })).toBe('a-1;a-2;');
  });

  it('reads @index, @key, @first and @last of an each inside the memo block', () => {
    const set = templateSet('{{#memo values.item}}{{#each list}}{{@index}}{{#if @first}}^{{/if}}{{#if @last}}${{/if}} {{/each}}{{#each map}}{{@key}}={{this}} {{/each}}{{/memo}}');
    expect(render(new TemplateEngine(), set, { item: { list: ['x', 'y', 'z'], map: { k: 'v' } } })).toBe('0^ 1 2$ k=v ');
  });

  it('reads block parameters declared inside the memo block', () => {
    const set = templateSet('{{#memo values.item}}{{#each list as |value index|}}{{index}}={{value}} {{/each}}{{/memo}}');
    expect(render(new TemplateEngine(), set, { item: { list: ['x', 'y'] } })).toBe('0=x 1=y ');
  });

  it('renders a memo block nested in a memo block under the key of each', () => {
    const set = templateSet('{{#memo values.item}}{{name}}[{{#memo child}}{{name}}{{/memo}}]{{/memo}}');
    expect(render(new TemplateEngine(), set, { item: { name: 'a', child: { name: 'b' } } })).toBe('a[b]');
  });

  it('calls snippets that read their context, @root.values and @index of an each inside the memo block', () => {
    const set = templateSet('{{#memo values.item}}{{#each list}}{{> entry}}{{/each}}{{/memo}}', {
      snippets: { entry: '{{@index}}:{{name}}@{{@root.values.port}} ' },
    });
    expect(render(new TemplateEngine(), set, { item: { list: [{ name: 'x' }, { name: 'y' }] }, port: 80 })).toBe('0:x@80 1:y@80 ');
  });

  it('leaves @index of the each around a memo block intact after the block', () => {
    // The memo block renders with a fresh data frame of its own.
    const set = templateSet('{{#each values.items}}{{#memo this}}{{name}}{{/memo}}{{@index}} {{/each}}');
    expect(render(new TemplateEngine(), set, { items: [{ name: 'a' }, { name: 'b' }] })).toBe('a0 b1 ');
  });
});

describe('helpers that refuse to run inside a memo block', () => {
  const helpers = [
    { helper: 'list', template: '{{#memo values.item}}{{#each (list "pods")}}{{metadata.name}}{{/each}}{{/memo}}' },
    { helper: 'fetch', template: '{{#memo values.item}}{{#each (fetch "pods" "default")}}{{metadata.name}}{{/each}}{{/memo}}' },
    { helper: 'getSingle', template: '{{#memo values.item}}{{#with (getSingle "pods" "default" "a")}}{{metadata.name}}{{/with}}{{/memo}}' },
    { helper: 'emit', template: '{{#memo values.item}}{{#emit "files" "extra.txt"}}{{name}}{{/emit}}{{/memo}}' },
    { helper: 'warn', template: '{{#memo values.item}}{{warn "careful" name}}{{/memo}}' },
  ];

  for (const { helper, template } of helpers) {
    it(`throws a TemplateError naming the template when ${helper} is used inside a memo block`, () => {
      const error = captureError(() => render(new TemplateEngine(), templateSet(template), { item: { name: 'a' } }));
      expect(error.template).toBe('haproxyConfig');
      expect(error.message).toContain(`${helper} cannot be used inside a memo block`);
    });

    it(`throws when ${helper} is used in a snippet called from a memo block`, () => {
      const inner = template.replace('{{#memo values.item}}', '').replace('{{/memo}}', '');
      const set = templateSet('{{#memo values.item}}{{> inner}}{{/memo}}', { snippets: { inner } });
      const error = captureError(() => render(new TemplateEngine(), set, { item: { name: 'a' } }));
      expect(error.message).toContain(`${helper} cannot be used inside a memo block`);
    });
  }

  it('throws from dryRun, which renders the set against empty stores', () => {
    const error = captureError(() => new TemplateEngine().dryRun(templateSet('{{#memo values.item}}{{#each (list "pods")}}x{{/each}}{{/memo}}')));
    expect(error.message).toContain('list cannot be used inside a memo block');
  });

  it('throws for a key that is not an object too, although its block is not cached', () => {
    const error = captureError(() => render(new TemplateEngine(), templateSet('{{#memo values.name}}{{warn "x"}}{{/memo}}'), { name: 'a' }));
    expect(error.message).toContain('warn cannot be used inside a memo block');
  });

  it('runs the same helpers before and after a memo block of the same template', () => {
    const engine = new TemplateEngine();
    const set = templateSet('{{#each (list "pods")}}{{metadata.name}}{{/each}} {{#memo values.item}}{{name}}{{/memo}} {{warn "done"}}{{#each (fetch "pods" "default")}}{{metadata.name}}{{/each}}');
    const { scope, warnings } = scopeWith({ item: { name: 'm' } });
    expect(engine.render(set, scope, 1).haproxyConfig).toBe('ab m ab');
    expect(warnings).toEqual(['done']);
  });
});

describe('memo helper misuse', () => {
  it('refuses memo without a block', () => {
    const set = templateSet('{{memo values.item}}');
    const error = captureError(() => render(new TemplateEngine(), set, { item: {} }));
    expect(error.template).toBe('haproxyConfig');
    expect(error.message).toContain('memo must be used as a block helper');
    expect(captureError(() => new TemplateEngine().dryRun(set)).message).toContain('memo must be used as a block helper');
  });

  it('refuses two keys', () => {
    const set = templateSet('{{#memo values.a values.b}}x{{/memo}}');
    const error = captureError(() => render(new TemplateEngine(), set, { a: {}, b: {} }));
    expect(error.message).toContain('memo takes one key object, got 2 arguments');
    expect(captureError(() => new TemplateEngine().dryRun(set)).message).toContain('memo takes one key object, got 2 arguments');
  });

  it('refuses a block without a key', () => {
    const error = captureError(() => render(new TemplateEngine(), templateSet('{{#memo}}x{{/memo}}')));
    expect(error.message).toContain('memo takes one key object, got 0 arguments');
  });
});

describe('memo blocks around blocks that keep their context', () => {
  // `{{#with this}}` (and a nested `{{#memo this}}`) render their block with the same context
  // object, and Handlebars then pushes no new `../` level: `../` inside reaches the context
  // outside the memo block. Whatever the engine does about it (refuse the template, or render
  // it correctly), a cached text must never go stale.
  function expectNoStaleText(template: string): void {
    const set = templateSet(template);
    const engine = new TemplateEngine();
    try {
      engine.compile(set);
    } catch (error) {
      expect(error).toBeInstanceOf(TemplateError);
      return;
    }
    const item = { name: 'a' };
    const values = { item, items: [item], list: [5] };
    render(engine, set, values, 1);
    expect(render(engine, set, values, 2)).toBe(render(new TemplateEngine(), set, values, 2));
  }

  it("never reuses text that read outside the key through '../' in a {{#with this}}", () => {
    expectNoStaleText('{{#each values.items}}{{#memo this}}{{#with this}}{{name}}@{{../storeVersion}}{{/with}}{{/memo}}{{/each}}');
  });

  it("never reuses text that read outside the key through '../' in a nested {{#memo this}}", () => {
    expectNoStaleText('{{#memo values.item}}{{#memo this}}{{name}}@{{../storeVersion}}{{/memo}}{{/memo}}');
  });

  it("never reuses text that read outside the key through '../' in an each over a list holding one number", () => {
    // Handlebars compares contexts with !=, and [5] != 5 is false: no new level is pushed.
    expectNoStaleText('{{#memo values.list}}{{#each this}}{{this}}@{{../storeVersion}}{{/each}}{{/memo}}');
  });
});
