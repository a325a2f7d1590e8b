import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadManifests, parseManifest, type LoadedObject } from '../../../src/main/sources/manifest/manifest-loader.js';
import { EXAMPLES_DIR } from '../../../src/main/core/paths.js';
import { loadTemplateSet } from '../../../src/main/template-set/template-set.js';
import type { StoreDefinition } from '../../../src/worker/protocol.js';

let stores: readonly StoreDefinition[];
beforeAll(async () => {
  stores = (await loadTemplateSet()).stores;
});

const names = (objects: readonly LoadedObject[]): string[] =>
  objects.map((o) => `${o.store}:${o.object.kind}:${o.object.metadata.namespace}/${o.object.metadata.name}@${o.source}`);

const SERVICE_A = 'apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  namespace: ns\nspec:\n  ports: [{ port: 80 }]\n';

describe('parseManifest', () => {
  it('loads every document of a multi-document file with the file and line where it starts', () => {
    const text = [
      SERVICE_A, // lines 1-7
      '---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: { name: b, namespace: ns }\nspec: {}\n', // lines 8-12
      '---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: { name: c, namespace: ns }\n', // lines 13-16
    ].join('');
    const result = parseManifest(text, 'app.yaml', stores);
    expect(result.errors).toEqual([]);
    expect(result.ignored).toBe(0);
    expect(result.objects.map((o) => `${o.store}:${o.object.metadata.name}`)).toEqual(['services:a', 'ingresses:b', 'endpointslices:c']);
    expect(result.objects[0]?.source).toBe('app.yaml:1');
    // Later documents are located at their `---` separator or their first line.
    expect(['app.yaml:8', 'app.yaml:9']).toContain(result.objects[1]?.source);
    expect(['app.yaml:13', 'app.yaml:14']).toContain(result.objects[2]?.source);
  });

  it('keeps the objects as parsed, fields and all', () => {
    const [loaded] = parseManifest(SERVICE_A, 'a.yaml', stores).objects;
    expect(loaded?.object).toEqual({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'a', namespace: 'ns' }, spec: { ports: [{ port: 80 }] } });
  });

  it('loads the items of a kind: List', () => {
    const text = [
      'apiVersion: v1',
      'kind: List',
      'items:',
      '  - { apiVersion: v1, kind: Service, metadata: { name: one, namespace: ns } }',
      '  - { apiVersion: v1, kind: Secret, metadata: { name: two, namespace: ns }, data: {} }',
      '  - { apiVersion: v1, kind: ConfigMap, metadata: { name: three, namespace: ns } }',
      '',
    ].join('\n');
    const result = parseManifest(text, 'list.yaml', stores);
    expect(result.objects.map((o) => `${o.store}:${o.object.metadata.name}`)).toEqual(['services:one', 'secrets:two']);
    expect(result.ignored).toBe(1);
    expect(result.errors).toEqual([]);
  });

  it('names file and line of invalid YAML and still loads the other documents', () => {
    const text = [
      SERVICE_A, // 1-7
      '---\napiVersion: v1\nkind: Service\nmetadata:\n  name: broken\n  labels: { a: 1 }\n  x: y: z\n', // 8-14, error on line 14
      '---\napiVersion: v1\nkind: Service\nmetadata: { name: c, namespace: ns }\n', // 15-18
    ].join('');
    const result = parseManifest(text, 'mixed.yaml', stores);
    expect(result.objects.map((o) => o.object.metadata.name)).toEqual(['a', 'c']);
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatch(/^mixed\.yaml:14: invalid YAML: /);
  });

  it.each([
    ['apiVersion', 'kind: Service\nmetadata: { name: svc, namespace: ns }\n', 'Service ns/svc: apiVersion is missing'],
    ['kind', 'apiVersion: v1\nmetadata: { name: svc, namespace: ns }\n', 'object ns/svc: kind is missing'],
    ['metadata', 'apiVersion: v1\nkind: Service\n', 'Service: metadata is missing'],
    ['metadata.name', 'apiVersion: v1\nkind: Service\nmetadata: { namespace: ns }\n', 'Service: metadata.name is missing'],
  ])('reports an object missing %s with file:line and its name, and loads the rest', (_field, bad, message) => {
    const text = `${SERVICE_A}---\n${bad}`;
    const result = parseManifest(text, 'bad.yaml', stores);
    expect(result.objects.map((o) => o.object.metadata.name)).toEqual(['a']);
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatch(/^bad\.yaml:(8|9): /);
    expect(result.errors[0]).toContain(message);
  });

  it('rejects a document that is not a mapping', () => {
    const result = parseManifest('- a\n- b\n', 'seq.yaml', stores);
    expect(result.errors).toEqual(['seq.yaml:1: a Kubernetes object must be a mapping']);
  });

  it('counts objects of kinds no store watches as ignored', () => {
    const text = [
      'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: a }\n',
      '---\napiVersion: apps/v1\nkind: Deployment\nmetadata: { name: b }\n',
      // A watched kind under an apiVersion the store does not watch is not watched either.
      '---\napiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: { name: c }\n',
      '---\n', // an empty document is neither an object nor an error
    ].join('');
    const result = parseManifest(text, 'other.yaml', stores);
    expect(result).toEqual({ objects: [], errors: [], broken: [], ignored: 3 });
  });

  it('reports a kind one typo or a case slip from a watched kind with a did-you-mean, instead of ignoring it', () => {
    const text = [
      'apiVersion: networking.k8s.io/v1\nkind: Ingres\nmetadata: { name: a }\n',
      '---\napiVersion: v1\nkind: Servce\nmetadata: { name: b }\n',
      '---\napiVersion: v1\nkind: service\nmetadata: { name: c }\n',
      '---\napiVersion: apps/v1\nkind: Deployment\nmetadata: { name: d }\n',
    ].join('');
    const result = parseManifest(text, 'typo.yaml', stores);
    expect(result.errors).toEqual([
      'typo.yaml:1: kind "Ingres" is not a watched kind; did you mean Ingress?',
      'typo.yaml:5: kind "Servce" is not a watched kind; did you mean Service?',
      'typo.yaml:9: kind "service" is not a watched kind; did you mean Service?',
    ]);
    expect(result.broken).toEqual([]);
    expect(result.ignored).toBe(1);
  });

  it('lists the errors of documents that do not parse as broken too, and no other error', () => {
    const text = 'apiVersion: v1\nkind: Service\nmetadata: { name: [x\n---\napiVersion: v1\nkind: Service\nmetadata: {}\n';
    const result = parseManifest(text, 'mixed.yaml', stores);
    expect(result.broken).toHaveLength(1);
    expect(result.broken[0]).toMatch(/^mixed\.yaml:\d+: invalid YAML/);
    expect(result.errors).toEqual([result.broken[0], 'mixed.yaml:5: Service: metadata.name is missing']);
  });

  it('puts watched objects without a namespace into the default namespace', () => {
    const result = parseManifest('apiVersion: v1\nkind: Service\nmetadata: { name: plain }\n', 'ns.yaml', stores);
    expect(result.objects[0]?.object.metadata.namespace).toBe('default');
  });

  it('reads JSON, which is YAML', () => {
    const json = JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'j', namespace: 'ns' } });
    expect(names(parseManifest(json, 'j.json', stores).objects)).toEqual(['services:Service:ns/j@j.json:1']);
  });
});

describe('loadManifests', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'manifests-'));
    await mkdir(join(dir, 'nested'));
    await writeFile(join(dir, 'a-good.yaml'), SERVICE_A);
    await writeFile(join(dir, 'b-broken.yaml'), 'apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n   bad: indent\n');
    await writeFile(join(dir, 'c-list.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }] }));
    await writeFile(join(dir, 'nested', 'd.yml'), 'apiVersion: v1\nkind: Pod\nmetadata: { name: p }\n');
    await writeFile(join(dir, 'README.md'), '# not a manifest: {');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads every YAML and JSON file of a directory tree, in name order, and skips other files', async () => {
    const load = await loadManifests(dir, stores);
    expect(load.files).toBe(4);
    expect(load.objects.map((o) => `${o.store}:${o.object.metadata.namespace}/${o.object.metadata.name}`)).toEqual(['services:ns/a', 'secrets:default/s']);
    expect(load.ignored).toBe(1);
  });

  it('names the file and line of a broken file while the other files still load', async () => {
    const load = await loadManifests(dir, stores);
    expect(load.errors).toHaveLength(1);
    expect(load.errors[0]).toMatch(/b-broken\.yaml:\d+: invalid YAML: /);
    expect(load.objects.length).toBe(2);
  });

  it('rejects with the reason when the directory does not exist', async () => {
    await expect(loadManifests(join(dir, 'missing'), stores)).rejects.toThrow(/ENOENT/);
  });

  it('loads the example cluster without errors', async () => {
    const load = await loadManifests(EXAMPLES_DIR, stores);
    expect(load.errors).toEqual([]);
    expect(load.files).toBe(4);
    expect(load.ignored).toBe(0);
    const counts: Record<string, number> = {};
    for (const o of load.objects) counts[o.store] = (counts[o.store] ?? 0) + 1;
    expect(counts).toEqual({ ingresses: 4, services: 4, endpointslices: 4, secrets: 1 });
    expect(load.objects.filter((o) => !/cluster\/(blog|shop|shop-tls|status)\.yaml:\d+$/.test(o.source))).toEqual([]);
  });
});

describe('hostile manifests', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hostile-manifests-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a YAML alias bomb in one document with the file and line, and loads the others', () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let level = 1; level <= 9; level++) bomb.push(`${String.fromCharCode(97 + level)}: &${String.fromCharCode(97 + level)} [${Array(10).fill(`*${String.fromCharCode(96 + level)}`).join(',')}]`);
    const text = `${SERVICE_A}---\napiVersion: v1\nkind: ConfigMap\nmetadata: { name: bomb }\ndata:\n${bomb.map((l) => `  ${l}`).join('\n')}\n`;
    const result = parseManifest(text, 'bomb.yaml', stores);
    expect(result.objects.map((o) => o.object.metadata.name)).toEqual(['a']);
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatch(/^bomb\.yaml:9: invalid YAML: .*alias/i);
  });

  it('refuses an alias to an anchor that does not exist, naming the file', () => {
    const result = parseManifest(`${SERVICE_A}---\napiVersion: v1\nkind: Service\nmetadata: { name: b, namespace: ns }\nspec: *nowhere\n`, 'dangling.yaml', stores);
    expect(result.objects.map((o) => o.object.metadata.name)).toEqual(['a']);
    expect(result.errors[0]).toMatch(/^dangling\.yaml:\d+: invalid YAML/);
  });

  it('refuses a file over the size limit by name, without reading it, and loads the other files', async () => {
    await writeFile(join(dir, 'a.yaml'), SERVICE_A);
    await writeFile(join(dir, 'huge.yaml'), `${SERVICE_A}# ${'x'.repeat(2048)}\n`);
    const load = await loadManifests(dir, stores, { maxFileBytes: 1024 });
    expect(load.objects.map((o) => o.object.metadata.name)).toEqual(['a']);
    expect(load.errors).toEqual([expect.stringMatching(/huge\.yaml: \d+ bytes is over the manifest size limit of 1024 bytes/)]);
    // Its objects are unknown, not absent: `render` writes nothing rather than a config without them.
    expect(load.broken).toEqual(load.errors);
  });
});
