import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATE_SET_PATH, loadTemplateSet, parseSetOverrides, parseTemplateSet, TemplateSetError } from '../../../src/main/template-set/template-set.js';

const MINIMAL = 'haproxyConfig: |\n  global\n';

function parseError(text: string, file = 'set.yaml'): TemplateSetError {
  try {
    parseTemplateSet(text, file);
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateSetError);
    return error as TemplateSetError;
  }
  throw new Error('expected the template set to be rejected');
}

describe('loadTemplateSet', () => {
  it('loads the bundled default set with its Ingress and Gateway API stores and default values', async () => {
    const set = await loadTemplateSet();
    expect(set.stores.map((s) => `${s.name}=${s.apiVersion}/${s.kind}`)).toEqual([
      'ingresses=networking.k8s.io/v1/Ingress',
      'services=v1/Service',
      'endpointslices=discovery.k8s.io/v1/EndpointSlice',
      'secrets=v1/Secret',
      'ingressclasses=networking.k8s.io/v1/IngressClass',
      'gatewayclasses=gateway.networking.k8s.io/v1/GatewayClass',
      'gateways=gateway.networking.k8s.io/v1/Gateway',
      'httproutes=gateway.networking.k8s.io/v1/HTTPRoute',
      'referencegrants=gateway.networking.k8s.io/v1beta1/ReferenceGrant',
      'namespaces=v1/Namespace',
    ]);
    expect(set.stores.find((s) => s.name === 'ingressclasses')).toMatchObject({ indexBy: ['metadata.name'], namespaced: false });
    expect(set.stores.find((s) => s.name === 'endpointslices')).toMatchObject({
      indexBy: ['metadata.namespace', 'metadata.labels.kubernetes\\.io/service-name'],
      debounceMs: 100,
    });
    expect(set.values).toMatchObject({ httpPort: 80, httpsPort: 443, statusPort: 8404, serverSlots: 10, mapsDir: '/etc/haproxy/maps' });
    expect(set.hash).toMatch(/^[0-9a-f]{16}$/);
    expect(set.values).toMatchObject({
      controllerName: 'haproxy.org/ingress-controller',
      routeOwnership: 'oldest',
      tlsHostOwnership: 'routed-oldest',
      defaultCertificate: '',
      selfSignedCertificate: '',
      stats: '',
    });
    expect(Object.keys(set.maps).sort()).toEqual(['host-exact.map', 'host-fallback-late.map', 'host-fallback.map', 'host-prefix.map', 'host-regex.map', 'path-exact.map', 'path-prefix.map', 'tls-hosts.lst']);
  });

  it('applies overrides on top of the set values', async () => {
    const set = await loadTemplateSet(undefined, { mapsDir: '/tmp/out/maps', httpPort: 8080 });
    expect(set.values.mapsDir).toBe('/tmp/out/maps');
    expect(set.values.httpPort).toBe(8080);
    expect(set.values.httpsPort).toBe(443);
  });

  it('gives the same text the same hash, and different overrides different hashes', async () => {
    const a = await loadTemplateSet(DEFAULT_TEMPLATE_SET_PATH);
    const b = await loadTemplateSet(DEFAULT_TEMPLATE_SET_PATH);
    const c = await loadTemplateSet(DEFAULT_TEMPLATE_SET_PATH, { httpPort: 8080 });
    expect(a.hash).toBe(b.hash);
    expect(c.hash).not.toBe(a.hash);
  });

  describe('from a file', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'template-set-'));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('names a file that cannot be read', async () => {
      const missing = join(dir, 'missing.yaml');
      await expect(loadTemplateSet(missing)).rejects.toThrow(`${missing}: cannot read template set`);
    });

    it('names the file and line of invalid YAML', async () => {
      const file = join(dir, 'broken.yaml');
      await writeFile(file, 'haproxyConfig: x\nvalues:\n  a: 1\n  a: 2\nmaps: {}\n');
      const error = await loadTemplateSet(file).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(TemplateSetError);
      expect((error as TemplateSetError).file).toBe(file);
      expect((error as Error).message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: invalid YAML at line 4: `));
    });
  });
});

describe('parseTemplateSet', () => {
  it('accepts a set with only haproxyConfig and fills the other sections empty', () => {
    const set = parseTemplateSet(MINIMAL, 'set.yaml');
    expect(set).toMatchObject({ stores: [], snippets: {}, maps: {}, files: {}, sslCertificates: {}, values: {}, haproxyConfig: 'global\n' });
  });

  it('names the line of a YAML syntax error', () => {
    const error = parseError(`${MINIMAL}values:\n  ok: 1\n  bad: a: b\nmaps: {}\n`);
    expect(error.message).toMatch(/^set\.yaml: invalid YAML at line 5: /);
  });

  it('rejects an unknown top-level key, naming it and the known keys', () => {
    const error = parseError(`${MINIMAL}watchedResource: {}\n`);
    expect(error.message).toContain('unknown top-level key "watchedResource"');
    expect(error.message).toContain('expected one of watchedResources, templateSnippets, haproxyConfig');
  });

  it.each([
    ['missing', 'values: {}\n'],
    ['empty', 'haproxyConfig: "  "\n'],
    ['not a string', 'haproxyConfig: [global]\n'],
  ])('rejects a %s haproxyConfig', (_title, text) => {
    expect(parseError(text).message).toBe('set.yaml: haproxyConfig must be a non-empty template string');
  });

  it('rejects a document that is not a mapping', () => {
    expect(parseError('- haproxyConfig: x\n').message).toBe('set.yaml: a template set must be a YAML mapping');
  });

  it.each([
    ['a list', 'watchedResources: [ingresses]\n', 'watchedResources must be a mapping of store name to resource'],
    ['an entry that is not a mapping', 'watchedResources:\n  pods: Pod\n', 'watchedResources.pods must be a mapping'],
    ['an entry without kind', 'watchedResources:\n  pods: { apiVersion: v1 }\n', 'watchedResources.pods needs apiVersion and kind strings'],
    ['an entry without apiVersion', 'watchedResources:\n  pods: { kind: Pod }\n', 'watchedResources.pods needs apiVersion and kind strings'],
    ['an empty indexBy', 'watchedResources:\n  pods: { apiVersion: v1, kind: Pod, indexBy: [] }\n', 'watchedResources.pods.indexBy must be a non-empty list of field paths'],
    ['a non-string indexBy entry', 'watchedResources:\n  pods: { apiVersion: v1, kind: Pod, indexBy: [1] }\n', 'watchedResources.pods.indexBy must be a non-empty list'],
    ['a negative debounceMs', 'watchedResources:\n  pods: { apiVersion: v1, kind: Pod, debounceMs: -1 }\n', 'watchedResources.pods.debounceMs must be a non-negative number'],
    ['a string debounceMs', 'watchedResources:\n  pods: { apiVersion: v1, kind: Pod, debounceMs: "5" }\n', 'watchedResources.pods.debounceMs must be a non-negative number'],
  ])('rejects watchedResources with %s', (_title, text, message) => {
    expect(parseError(MINIMAL + text).message).toContain(message);
  });

  it('indexes a watched resource by namespace and name unless indexBy says otherwise', () => {
    const set = parseTemplateSet(`${MINIMAL}watchedResources:\n  pods: { apiVersion: v1, kind: Pod }\n`, 'set.yaml');
    expect(set.stores).toEqual([{ name: 'pods', apiVersion: 'v1', kind: 'Pod', indexBy: ['metadata.namespace', 'metadata.name'] }]);
  });

  it.each([
    ['maps', 'maps:\n  a.map: [1]\n', 'maps.a.map must be a template string'],
    ['files', 'files: [a]\n', 'files must be a mapping of name to template'],
    ['sslCertificates', 'sslCertificates:\n  ../escape.pem: x\n', "file names may not contain '/' or '..'"],
    ['templateSnippets', 'templateSnippets:\n  sub/part: x\n', "file names may not contain '/' or '..'"],
  ])('rejects a malformed %s section', (_section, text, message) => {
    expect(parseError(MINIMAL + text).message).toContain(message);
  });

  it('lets overrides replace set values and add new ones', () => {
    const set = parseTemplateSet(`${MINIMAL}values:\n  a: 1\n  b: x\n`, 'set.yaml', { b: 'y', c: true });
    expect(set.values).toEqual({ a: 1, b: 'y', c: true });
  });
});

describe('parseSetOverrides', () => {
  it('types integers, decimals, negative numbers and booleans, and keeps other text as strings', () => {
    expect(parseSetOverrides(['port=8080', 'ratio=0.5', 'offset=-3', 'on=true', 'off=false', 'name=haproxy', 'mixed=8080a', 'word=True'])).toEqual({
      port: 8080,
      ratio: 0.5,
      offset: -3,
      on: true,
      off: false,
      name: 'haproxy',
      mixed: '8080a',
      word: 'True',
    });
  });

  it('nests dotted keys and merges siblings', () => {
    expect(parseSetOverrides(['timeouts.client=50s', 'timeouts.server=60s', 'a.b.c=1'])).toEqual({
      timeouts: { client: '50s', server: '60s' },
      a: { b: { c: 1 } },
    });
  });

  it('lets a later pair override an earlier one', () => {
    expect(parseSetOverrides(['x=1', 'x=2'])).toEqual({ x: 2 });
  });

  it('keeps everything after the first = as the value, and accepts an empty value', () => {
    expect(parseSetOverrides(['bindAddress=a=b', 'runtimeSocket='])).toEqual({ bindAddress: 'a=b', runtimeSocket: '' });
  });

  it.each(['novalue', '=value', ''])('rejects the pair %j naming it', (pair) => {
    expect(() => parseSetOverrides([pair])).toThrow(new TypeError(`--set expects key=value, got ${JSON.stringify(pair)}`));
  });
});
