// The output budget the namespaces share (output-budget.ts): many small Ingresses of one
// namespace, or its large certificate chains, cost that namespace its newest Ingresses, with a
// warning naming the namespace and the Ingress, and never push the render over maxOutputBytes
// for everyone. A certificate many Ingresses share is counted once; the incremental builder
// decides as a cold build does while Ingresses come and go.
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import { buildRoutingModel, modelOptions, RoutingModelBuilder } from '../../../src/worker/routing/ingress-model.js';
import { GuardedReader } from '../../../src/worker/store/guarded-reader.js';
import { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import { defaultTemplateSet, endpointSlice, exampleTlsData, ingress, renderObjects, ROUTING_STORES, rule, service, storeNameFor, tlsSecret, withValues } from '../../helpers/cluster.js';

let set: TemplateSetSource;
beforeAll(async () => {
  set = await defaultTemplateSet();
});

const MAX = 200_000;
const at = (i: number): Partial<KubeObject['metadata']> => ({ creationTimestamp: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString() });

/** The victim: one old Ingress of its own namespace, with TLS. */
const victim = (): KubeObject[] => [
  ingress('shop', 'web', { tls: [{ hosts: ['shop.example.com'], secretName: 'tls' }], rules: [rule('shop.example.com', { path: '/', service: 'web' })] }, at(0)),
  service('shop', 'web'),
  endpointSlice('shop', 'web', ['10.0.0.1']),
  tlsSecret('shop', 'tls'),
];

/** `count` small Ingresses of namespace `ns`, created one minute apart after the victim, each with its own host. */
function many(ns: string, count: number, tls: (i: number) => Record<string, unknown> = () => ({})): KubeObject[] {
  const objects: KubeObject[] = [service(ns, 'web'), endpointSlice(ns, 'web', ['10.0.1.1', '10.0.1.2'])];
  for (let i = 0; i < count; i++) objects.push(ingress(ns, `i${String(i).padStart(3, '0')}`, { ...tls(i), rules: [rule(`h${i}.${ns}.example.com`, { path: '/', service: 'web' }, { path: '/api', service: 'web' })] }, at(i + 1)));
  return objects;
}

function bytes(out: { haproxyConfig: string; auxiliaryFiles: { maps: object; files: object; certificates: object } }): number {
  const aux = out.auxiliaryFiles as Record<'maps' | 'files' | 'certificates', Record<string, string>>;
  return [out.haproxyConfig, ...(['maps', 'files', 'certificates'] as const).flatMap((kind) => Object.values(aux[kind]))].reduce((sum, text) => sum + Buffer.byteLength(text), 0);
}

/** Which of the greedy namespace's Ingresses are routed. */
function routed(out: { auxiliaryFiles: { maps: Record<string, string> } }, ns: string): string[] {
  const names = [...(out.auxiliaryFiles.maps['host-prefix.map'] ?? '').matchAll(new RegExp(`ing_${ns}_(i\\d+)_web_80`, 'g'))].map((m) => m[1] as string);
  return [...new Set(names)].sort();
}

describe('the output budget the namespaces share', () => {
  it("sheds the newest of one namespace's many small Ingresses, naming it, and renders the rest under maxOutputBytes", () => {
    const out = renderObjects(withValues(set, { maxOutputBytes: MAX }), [...victim(), ...many('greedy', 400)]);
    if (!out.ok) throw new Error(`the render failed: ${out.message}`);
    expect(bytes(out)).toBeLessThanOrEqual(MAX);
    expect(out.auxiliaryFiles.maps['host-prefix.map']).toContain('shop.example.com/ ing_shop_web_web_80');
    expect(Object.keys(out.auxiliaryFiles.certificates)).toContain('shop_tls.pem');
    const kept = routed(out, 'greedy');
    expect(kept.length).toBeGreaterThan(50);
    expect(kept.length).toBeLessThan(400);
    // The oldest are kept, the newest go.
    expect(kept[0]).toBe('i000');
    expect(kept).not.toContain('i399');
    const shed = out.warnings.filter((w) => w.includes(': it is not served: namespace greedy would add about '));
    expect(shed).toHaveLength(400 - kept.length);
    expect(shed[0]).toMatch(/^Ingress greedy\/i399: it is not served: namespace greedy would add about \d+ bytes to the output, the most of any namespace, and all Ingresses together about \d+, over the 150000 they share \(values\.maxOutputBytes x 0\.75\); its newest Ingresses go first \(this one adds about \d+\)$/);
  });

  it('counts certificate chains: a namespace with many large chains loses its newest Ingresses, not everyone the render', () => {
    const { 'tls.crt': crt, 'tls.key': key } = exampleTlsData();
    const chain = Buffer.from(Buffer.from(crt, 'base64').toString('utf8').repeat(10)).toString('base64');
    const secrets = Array.from({ length: 30 }, (_, i) => tlsSecret('chains', `tls${i}`, { 'tls.crt': chain, 'tls.key': key }));
    const objects = [...victim(), ...many('chains', 30, (i) => ({ tls: [{ hosts: [`h${i}.chains.example.com`], secretName: `tls${i}` }] })), ...secrets];
    const out = renderObjects(withValues(set, { maxOutputBytes: MAX }), objects);
    if (!out.ok) throw new Error(`the render failed: ${out.message}`);
    expect(bytes(out)).toBeLessThanOrEqual(MAX);
    expect(Object.keys(out.auxiliaryFiles.certificates)).toContain('shop_tls.pem');
    const chains = Object.keys(out.auxiliaryFiles.certificates).filter((name) => name.startsWith('chains_'));
    expect(chains.length).toBeGreaterThan(0);
    expect(chains.length).toBeLessThan(30);
    expect(out.warnings.some((w) => w.startsWith('Ingress chains/i029: it is not served: namespace chains'))).toBe(true);
  });

  it('counts a certificate that many Ingresses of a namespace share once', () => {
    const objects = [...victim(), ...many('shared', 40, (i) => ({ tls: [{ hosts: [`h${i}.shared.example.com`], secretName: 'tls' }] })), tlsSecret('shared', 'tls')];
    // 40 copies of the certificate would be over this budget; one is not.
    const pem = Buffer.from(exampleTlsData()['tls.crt'], 'base64').length;
    const out = renderObjects(withValues(set, { maxOutputBytes: 40 * pem + 60_000 }), objects);
    if (!out.ok) throw new Error(`the render failed: ${out.message}`);
    expect(routed(out, 'shared')).toHaveLength(40);
    expect(out.warnings.filter((w) => w.includes('it is not served'))).toEqual([]);
  });

  it('counts the hosts rejected Ingresses hold: a namespace of many rejected Ingresses loses the newest holds, not everyone the render', () => {
    const broken = { 'haproxy.org/timeout-server': '5s\nfrontend evil' };
    const hosts = (i: number): Record<string, unknown>[] => Array.from({ length: 20 }, (_, h) => rule(`host-${h}-of-ingress-${i}.a-long-rejected-domain.example.com`, { path: '/', service: 'web' }));
    const rejected = Array.from({ length: 300 }, (_, i) => ingress('held', `i${String(i).padStart(3, '0')}`, { rules: hosts(i) }, { ...at(i + 1), annotations: broken }));
    const out = renderObjects(withValues(set, { maxOutputBytes: MAX }), [...victim(), ...rejected]);
    if (!out.ok) throw new Error(`the render failed: ${out.message}`);
    expect(bytes(out)).toBeLessThanOrEqual(MAX);
    expect(out.auxiliaryFiles.maps['host-prefix.map']).toContain('shop.example.com/ ing_shop_web_web_80');
    const held = (out.auxiliaryFiles.maps['host-fallback.map'] ?? '').split('\n').filter((line) => line.endsWith(' default_503'));
    expect(held.length).toBeGreaterThan(100);
    expect(held).toContain('host-0-of-ingress-0.a-long-rejected-domain.example.com default_503');
    expect(held).not.toContain('host-0-of-ingress-299.a-long-rejected-domain.example.com default_503');
    expect(out.warnings.some((w) => w.startsWith('Ingress held/i299: it is rejected, and its hosts are not held for it either: namespace held would add about '))).toBe(true);
  });

  it('is decided by the incremental builder as by a cold build while Ingresses come and go', () => {
    const stores = new Map(ROUTING_STORES.map((def) => [def.name, new IndexedStore(def.name, def.indexBy)]));
    const upsert = (object: KubeObject): void => {
      stores.get(storeNameFor(object, ROUTING_STORES))?.upsert(object);
    };
    for (const object of [...victim(), ...many('greedy', 200)]) upsert(object);
    const options = modelOptions({ maxOutputBytes: MAX });
    const builder = new RoutingModelBuilder(options);
    const both = (): ReturnType<typeof buildRoutingModel> => {
      const warm: string[] = [];
      const cold: string[] = [];
      const model = builder.build(new GuardedReader((name) => stores.get(name), (m) => warm.push(m)), undefined, (m) => warm.push(m));
      expect(model).toEqual(buildRoutingModel(new GuardedReader((name) => stores.get(name), (m) => cold.push(m)), options, undefined, (m) => cold.push(m)));
      expect(warm).toEqual(cold);
      return model;
    };
    const served = (model: ReturnType<typeof buildRoutingModel>): number => model.hostPrefix.filter((e) => e.backend.startsWith('ing_greedy_')).length;
    const first = served(both());
    expect(first).toBeLessThan(400);
    for (const object of many('greedy', 260).slice(-60)) upsert(object);
    expect(served(both())).toBe(first);
    for (let i = 0; i < 120; i++) stores.get('ingresses')?.delete(`greedy/i${String(i).padStart(3, '0')}`);
    expect(served(both())).toBeGreaterThan(first - 240);
    for (let i = 120; i < 260; i++) stores.get('ingresses')?.delete(`greedy/i${String(i).padStart(3, '0')}`);
    const empty = both();
    expect(served(empty)).toBe(0);
    expect(empty.hostPrefix.map((e) => e.key)).toEqual(['shop.example.com/']);
    // Rejected Ingresses whose held hosts are over the budget, then fixed one by one.
    const held = (i: number, annotations: Record<string, string>): KubeObject =>
      ingress('held', `r${i}`, { rules: Array.from({ length: 30 }, (_, h) => rule(`h${h}-r${i}.a-long-rejected-domain.example.com`, { path: '/', service: 'web' })) }, { ...at(i), annotations });
    for (let i = 0; i < 60; i++) upsert(held(i, { 'haproxy.org/timeout-server': '5s\nx' }));
    const holding = both().hostFallback.length;
    expect(holding).toBeGreaterThan(0);
    expect(holding).toBeLessThan(60 * 30);
    for (let i = 0; i < 60; i += 7) upsert(held(i, {}));
    both();
    for (let i = 0; i < 60; i++) stores.get('ingresses')?.delete(`held/r${i}`);
    expect(both().hostFallback).toEqual([]);
  });
});
