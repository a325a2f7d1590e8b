import { describe, expect, it } from 'vitest';
import { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import { GENERATOR_KEY, TemplateEngine, TemplateError, type RenderScope, type RenderedOutput } from '../../../src/worker/templates/template-engine.js';
import { renderScope, type ScopeHarness } from '../../helpers/scope.js';

let hashCounter = 0;

/** A template set with a unique hash, so every call compiles afresh. */
function templateSet(haproxyConfig: string, parts: Partial<Omit<TemplateSetSource, 'haproxyConfig'>> = {}): TemplateSetSource {
  return {
    hash: `test-${++hashCounter}`,
    stores: [],
    snippets: {},
    maps: {},
    files: {},
    sslCertificates: {},
    values: {},
    ...parts,
    haproxyConfig,
  };
}

function pod(namespace: string, name: string, extra: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, ...extra };
}

/** A render scope over IndexedStores named `pods` (indexed by namespace/name) and `secrets`. */
function harness(values: Record<string, unknown> = {}, objects: { pods?: KubeObject[]; secrets?: KubeObject[] } = {}): ScopeHarness {
  const stores = new Map<string, IndexedStore>([
    ['pods', new IndexedStore('pods')],
    ['secrets', new IndexedStore('secrets')],
  ]);
  for (const object of objects.pods ?? []) stores.get('pods')?.upsert(object);
  for (const object of objects.secrets ?? []) stores.get('secrets')?.upsert(object);
  return renderScope((name) => stores.get(name), values, { mapsDir: '/etc/haproxy/maps', filesDir: '/etc/haproxy/files', certsDir: '/etc/haproxy/certs' });
}

/** Renders `template` as the haproxyConfig of a fresh set and returns the config text. */
function renderText(template: string, values: Record<string, unknown> = {}, objects: { pods?: KubeObject[]; secrets?: KubeObject[] } = {}): string {
  return new TemplateEngine().render(templateSet(template, { values }), harness(values, objects).scope, 1).haproxyConfig;
}

function renderSet(set: TemplateSetSource, h: ScopeHarness = harness(set.values as Record<string, unknown>)): RenderedOutput {
  return new TemplateEngine().render(set, h.scope, 1);
}

function captureError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw');
}

describe('TemplateEngine output escaping', () => {
  it('renders values containing <, &, " and \' verbatim, without HTML escaping', () => {
    const value = `hdr(x) -m str "a<b>&c" 'd'`;
    expect(renderText('{{values.acl}}', { acl: value })).toBe(value);
  });

  it('renders triple-stash and double-stash output identically', () => {
    expect(renderText('{{values.v}}|{{{values.v}}}', { v: '<&">' })).toBe('<&">|<&">');
  });
});

describe('TemplateEngine prototype access', () => {
  it('renders prototype properties of the context as empty', () => {
    expect(renderText('[{{constructor.name}}][{{__proto__}}][{{values.constructor}}][{{values.__proto__.constructor.name}}]', { a: 1 })).toBe(
      '[][][][]',
    );
  });

  it('renders the constructor of a value reached through #with as empty', () => {
    expect(renderText('[{{#with values}}{{constructor.name}}{{toString}}{{/with}}]', { a: 1 })).toBe('[]');
  });

  it('does not resolve prototype properties through the lookup and get helpers', () => {
    expect(renderText('[{{lookup values "constructor"}}][{{get values "constructor"}}][{{get values "__proto__"}}]', { a: 1 })).toBe('[][][]');
  });

  it('still resolves ordinary own properties, including ones named name', () => {
    expect(renderText('{{values.name}}/{{get values "nested.name"}}', { name: 'own', nested: { name: 'deep' } })).toBe('own/deep');
  });
});

describe('TemplateEngine compile cache', () => {
  it('returns the same compiled set when the same hash is compiled twice', () => {
    const engine = new TemplateEngine();
    const set = templateSet('global');
    const first = engine.compile(set);
    expect(engine.compile(set)).toBe(first);
    expect(engine.cachedSets).toBe(1);
  });

  it('keys the cache by hash, not by object identity', () => {
    const engine = new TemplateEngine();
    const set = templateSet('global');
    const first = engine.compile(set);
    expect(engine.compile({ ...set })).toBe(first);
  });

  it('keeps at most four compiled sets and evicts the oldest first', () => {
    const engine = new TemplateEngine();
    const sets = Array.from({ length: 6 }, (_, i) => templateSet(`# set ${i}`));
    const compiled = sets.map((set) => engine.compile(set));
    expect(engine.cachedSets).toBe(4);
    // The two newest sets are still cached; the two oldest were evicted and compile afresh.
    expect(engine.compile(sets[5] as TemplateSetSource)).toBe(compiled[5]);
    expect(engine.compile(sets[2] as TemplateSetSource)).toBe(compiled[2]);
    expect(engine.compile(sets[0] as TemplateSetSource)).not.toBe(compiled[0]);
    expect(engine.cachedSets).toBe(4);
  });

  it('renders a recompiled set the same as the first time', () => {
    const engine = new TemplateEngine();
    const set = templateSet('x={{values.x}}', { values: { x: 1 } });
    const first = engine.render(set, harness({ x: 1 }).scope, 1).haproxyConfig;
    for (let i = 0; i < 5; i++) engine.compile(templateSet(`# filler ${i}`));
    expect(engine.render(set, harness({ x: 1 }).scope, 1).haproxyConfig).toBe(first);
  });
});

describe('TemplateEngine template errors', () => {
  it('raises a TemplateError naming haproxyConfig for a syntax error in the config template', () => {
    const error = captureError(() => new TemplateEngine().compile(templateSet('global\n  {{#if values.x}}\n')));
    expect(error).toBeInstanceOf(TemplateError);
    expect((error as TemplateError).template).toBe('haproxyConfig');
    expect((error as TemplateError).message).toMatch(/^template haproxyConfig: /);
  });

  it('raises a TemplateError naming the map for a syntax error in a map template', () => {
    const set = templateSet('global', { maps: { 'good.map': '{{values.a}}', 'broken.map': '{{#each x}}' } });
    const error = captureError(() => new TemplateEngine().compile(set));
    expect(error).toBeInstanceOf(TemplateError);
    expect((error as TemplateError).template).toBe('maps/broken.map');
  });

  it('raises a TemplateError naming the snippet for a syntax error in a template snippet', () => {
    const set = templateSet('{{> frontend}}', { snippets: { frontend: 'bind {{oops' } });
    const error = captureError(() => new TemplateEngine().compile(set));
    expect(error).toBeInstanceOf(TemplateError);
    expect((error as TemplateError).template).toBe('templateSnippets/frontend');
  });

  it('raises a TemplateError naming the file template for an unknown helper at render time', () => {
    const set = templateSet('global', { files: { 'a.txt': '{{nosuchhelper 1}}' } });
    const error = captureError(() => renderSet(set));
    expect(error).toBeInstanceOf(TemplateError);
    expect((error as TemplateError).template).toBe('files/a.txt');
    expect((error as Error).message).toContain('nosuchhelper');
  });

  it('does not cache a set that failed to compile', () => {
    const engine = new TemplateEngine();
    expect(() => engine.compile(templateSet('{{#if}}'))).toThrow(TemplateError);
    expect(engine.cachedSets).toBe(0);
  });
});

describe('TemplateEngine store helpers', () => {
  const pods = [pod('b', 'two'), pod('a', 'one'), pod('a', 'three')];

  it('list returns every object of a store sorted by namespace and name', () => {
    expect(renderText('{{#each (list "pods")}}{{metadata.namespace}}/{{metadata.name}} {{/each}}', {}, { pods })).toBe('a/one a/three b/two ');
  });

  it('fetch returns the objects matching a key prefix', () => {
    expect(renderText('{{#each (fetch "pods" "a")}}{{metadata.name}} {{/each}}', {}, { pods })).toBe('one three ');
  });

  it('getSingle returns the one object at the full key', () => {
    expect(renderText('{{#with (getSingle "pods" "b" "two")}}{{metadata.namespace}}/{{metadata.name}}{{/with}}', {}, { pods })).toBe('b/two');
  });

  it('getSingle returns nothing when the keys match more than one object', () => {
    expect(renderText('[{{#with (getSingle "pods" "a")}}found{{else}}none{{/with}}]', {}, { pods })).toBe('[none]');
  });

  it('reads an unknown store as empty instead of throwing', () => {
    expect(renderText('[{{len (list "nosuch")}}][{{len (fetch "nosuch" "a")}}][{{#if (getSingle "nosuch" "a" "b")}}x{{/if}}]')).toBe('[0][0][]');
  });

  it('reads a missing key as empty', () => {
    expect(renderText('[{{len (fetch "pods" "zz")}}][{{#if (getSingle "pods" "a" "zz")}}x{{/if}}]', {}, { pods })).toBe('[0][]');
  });

  it('leaves out objects the object guard rejects and warns once, naming the object', () => {
    const bad = pod('a', 'evil', { metadata: { name: 'evil', namespace: 'a', annotations: { note: 'x\nbackend injected' } } });
    const h = harness({}, { pods: [...pods, bad] });
    const set = templateSet('{{#each (list "pods")}}{{metadata.name}} {{/each}}|{{len (fetch "pods" "a")}}');
    expect(renderSet(set, h).haproxyConfig).toBe('one three two |2');
    expect(h.warnings).toHaveLength(1);
    expect(h.warnings[0]).toContain('Pod a/evil');
  });
});

describe('TemplateEngine value helpers', () => {
  const people = [
    { name: 'carol', age: 35 },
    { name: 'alice', age: 9 },
    { name: 'bob', age: 100 },
  ];

  it('sortBy orders a list by a dotted field path', () => {
    expect(renderText('{{#each (sortBy values.people "name")}}{{name}} {{/each}}', { people })).toBe('alice bob carol ');
  });

  it('sortBy compares numbers numerically', () => {
    expect(renderText('{{#each (sortBy values.people "age")}}{{age}} {{/each}}', { people })).toBe('9 35 100 ');
  });

  it('sortBy without a path sorts the elements themselves and leaves the input unchanged', () => {
    const list = ['c', 'a', 'b'];
    expect(renderText('{{join (sortBy values.list) ","}}|{{join values.list ","}}', { list })).toBe('a,b,c|c,a,b');
  });

  it('sortBy of something that is not a list renders an empty list', () => {
    expect(renderText('[{{len (sortBy values.x "a")}}]', { x: 'text' })).toBe('[0]');
  });

  it('join joins with the given separator and defaults to a comma', () => {
    expect(renderText('{{join values.l " "}}|{{join values.l}}|[{{join values.notalist ","}}]', { l: ['a', 'b', 3] })).toBe('a b 3|a,b,3|[]');
  });

  it('default replaces undefined, null and the empty string but keeps 0 and false', () => {
    expect(renderText('{{default values.missing "d1"}} {{default values.nul "d2"}} {{default values.empty "d3"}} {{default values.zero "d4"}} {{default values.no "d5"}}', {
      nul: null,
      empty: '',
      zero: 0,
      no: false,
    })).toBe('d1 d2 d3 0 false');
  });

  it('get reads a dotted path and renders empty for a missing one', () => {
    expect(renderText('{{get values "a.b.c"}}|{{get values "a.x.c"}}|{{get values "a.b.c.d"}}', { a: { b: { c: 'deep' } } })).toBe('deep||');
  });

  it('indent pads every non-empty line of an inline string', () => {
    expect(renderText('{{indent 4 values.text}}', { text: 'a\n\nb' })).toBe('    a\n\n    b');
  });

  it('indent pads every non-empty line of a block', () => {
    expect(renderText('{{#indent 2}}server a\n\nserver b{{/indent}}')).toBe('  server a\n\n  server b');
  });

  it('indent renders block content in the current context', () => {
    expect(renderText('{{#with values}}{{#indent 1}}{{name}}{{/indent}}{{/with}}', { name: 'ctx' })).toBe(' ctx');
  });

  it('concat joins its arguments and renders undefined as empty', () => {
    expect(renderText('{{concat "a" values.n values.missing "-" 1}}', { n: 7 })).toBe('a7-1');
  });

  it('eq and ne compare strictly', () => {
    expect(renderText('{{eq 1 1}} {{eq 1 "1"}} {{ne "a" "b"}} {{ne values.n 3}}', { n: 3 })).toBe('true false true false');
  });

  it('gt and lt compare numbers numerically and other values as strings', () => {
    expect(renderText('{{gt 10 9}} {{lt 10 9}} {{gt "10" "9"}} {{lt "a" "b"}} {{gt values.n 2}}', { n: 3 })).toBe('true false false true true');
  });

  it('not, and and or combine truthiness of any number of arguments', () => {
    expect(renderText('{{not ""}} {{not 1}} {{and 1 "x" true}} {{and 1 0}} {{or 0 "" 1}} {{or 0 ""}}')).toBe('true false true false true false');
  });

  it('len counts list elements, string characters and object keys, and is 0 otherwise', () => {
    expect(renderText('{{len values.l}} {{len values.s}} {{len values.o}} {{len values.n}} {{len values.missing}}', {
      l: [1, 2, 3],
      s: 'abcd',
      o: { a: 1, b: 2 },
      n: 12,
    })).toBe('3 4 2 0 0');
  });

  it('b64decode decodes base64 text and renders a non-string as empty', () => {
    const encoded = Buffer.from('-----BEGIN CERTIFICATE-----\n', 'utf8').toString('base64');
    expect(renderText('{{b64decode values.v}}[{{b64decode values.n}}]', { v: encoded, n: 5 })).toBe('-----BEGIN CERTIFICATE-----\n[]');
  });

  it('json renders a value as JSON', () => {
    expect(renderText('{{json values.o}}', { o: { a: [1, 'two'], b: null } })).toBe('{"a":[1,"two"],"b":null}');
  });
});

describe('TemplateEngine path helpers', () => {
  it('mapPath, filePath and certPath join names onto the output directories of the render', () => {
    expect(renderText('{{mapPath "host.map"}} {{filePath "crt-list.txt"}} {{certPath "a.pem"}} {{certPath}}')).toBe(
      '/etc/haproxy/maps/host.map /etc/haproxy/files/crt-list.txt /etc/haproxy/certs/a.pem /etc/haproxy/certs',
    );
  });

  it('uses the directories of the render scope', () => {
    const h = harness();
    const scope: RenderScope = { ...h.scope, paths: { mapsDir: '/tmp/x/maps', filesDir: '/tmp/x/files', certsDir: '/tmp/x/certs' } };
    const out = new TemplateEngine().render(templateSet('{{mapPath "a.map"}} {{filePath "b"}} {{certPath "c.pem"}}'), scope, 1);
    expect(out.haproxyConfig).toBe('/tmp/x/maps/a.map /tmp/x/files/b /tmp/x/certs/c.pem');
  });
});

describe('TemplateEngine emit helper', () => {
  it('adds one auxiliary file per emit from a generator entry and renders nothing in place', () => {
    const set = templateSet('global', {
      values: { certs: [{ name: 'a.pem', pem: 'A' }, { name: 'b.pem', pem: 'B' }] },
      sslCertificates: { [GENERATOR_KEY]: 'before{{#each values.certs}}{{#emit "certificates" name}}{{pem}}{{/emit}}{{/each}}after' },
    });
    const out = renderSet(set);
    expect(out.auxiliaryFiles.certificates).toEqual({ 'a.pem': 'A', 'b.pem': 'B' });
  });

  it('keeps the statically named files of a section next to the emitted ones', () => {
    const set = templateSet('global', {
      maps: { 'static.map': 'k v\n', [GENERATOR_KEY]: '{{#emit "maps" "dynamic.map"}}d e\n{{/emit}}' },
    });
    expect(renderSet(set).auxiliaryFiles.maps).toEqual({ 'static.map': 'k v\n', 'dynamic.map': 'd e\n' });
  });

  it('emits into a later section from an earlier one', () => {
    const set = templateSet('global', { maps: { [GENERATOR_KEY]: '{{#emit "files" "from-maps.txt"}}x{{/emit}}' } });
    expect(renderSet(set).auxiliaryFiles.files).toEqual({ 'from-maps.txt': 'x' });
  });

  it('rejects an unknown kind with a TemplateError naming the template', () => {
    const set = templateSet('global', { files: { [GENERATOR_KEY]: '{{#emit "secrets" "a"}}x{{/emit}}' } });
    const error = captureError(() => renderSet(set));
    expect(error).toBeInstanceOf(TemplateError);
    expect((error as TemplateError).template).toBe(`files/${GENERATOR_KEY}`);
    expect((error as Error).message).toContain('kind must be maps, files or certificates');
  });

  it.each(['../escape.pem', 'sub/dir.pem', ''])('rejects the file name %j', (name) => {
    const set = templateSet('global', { values: { name }, sslCertificates: { [GENERATOR_KEY]: '{{#emit "certificates" values.name}}x{{/emit}}' } });
    const error = captureError(() => renderSet(set));
    expect(error).toBeInstanceOf(TemplateError);
    expect((error as Error).message).toContain('emit: invalid file name');
  });

  it('refuses to be used inline instead of as a block', () => {
    const set = templateSet('global', { files: { [GENERATOR_KEY]: '{{emit "files" "a.txt"}}' } });
    expect(() => renderSet(set)).toThrow(/emit must be used as a block helper/);
  });
});

describe('TemplateEngine warn helper', () => {
  it('reports a warning through the render scope and renders nothing', () => {
    const h = harness({ n: 2 });
    const out = renderSet(templateSet('a{{warn "careful:" values.n}}b', { values: { n: 2 } }), h);
    expect(out.haproxyConfig).toBe('ab');
    expect(h.warnings).toEqual(['careful: 2']);
  });
});

describe('TemplateEngine partials and render order', () => {
  it('renders template snippets as partials', () => {
    const set = templateSet('frontend f\n{{> bind}}', { snippets: { bind: '  bind :{{values.port}}\n' }, values: { port: 8080 } });
    expect(renderSet(set, harness({ port: 8080 })).haproxyConfig).toBe('frontend f\n  bind :8080\n');
  });

  it('exposes the store version to templates', () => {
    const out = new TemplateEngine().render(templateSet('v{{storeVersion}}'), harness().scope, 42);
    expect(out.haproxyConfig).toBe('v42');
  });
});
