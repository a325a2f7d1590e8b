// Value caps that make HAProxy's map line splitting impossible. Regression for issue 12: an
// Exact path of '/' + 'a' x 16,366 + 'shop.example.com/' on the attacker's own host was split by
// HAProxy's 16,384-byte line buffer, and its tail `shop.example.com/ <attacker backend>` hijacked
// shop. The path is now over the 2,048 cap and dropped; hosts, labels and annotations are capped
// too, and the longest lines object data can build stay far below the validator's line cap.
import { beforeAll, describe, expect, it } from 'vitest';
import { VALUE_LIMITS } from '../../../src/worker/store/object-guard.js';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, ingress, renderOk, rule, service } from '../../helpers/cluster.js';

let set: TemplateSetSource;
beforeAll(async () => {
  set = await defaultTemplateSet();
});

const backing = (ns: string): KubeObject[] => [service(ns, 'web'), endpointSlice(ns, 'web', ['10.0.0.1'])];
const shop = (): KubeObject => ingress('shop', 'web', { rules: [rule('shop.example.com', { path: '/', pathType: 'Exact', service: 'web' })] });

function allLines(out: { haproxyConfig: string; auxiliaryFiles: { maps: Readonly<Record<string, string>>; files: Readonly<Record<string, string>> } }): string[] {
  return [out.haproxyConfig, ...Object.values(out.auxiliaryFiles.maps), ...Object.values(out.auxiliaryFiles.files)].flatMap((text) => text.split('\n'));
}

describe('the map line split hijack (issue 12)', () => {
  it('drops the attacker\'s 16 KB Exact path, so shop.example.com/ stays with its owner', () => {
    const path = `/${'a'.repeat(16_366)}shop.example.com/`;
    const attack = ingress('attacker', 'web', { rules: [rule('attacker.example.com', { path, pathType: 'Exact', service: 'web' }, { path: '/', pathType: 'Exact', service: 'web' })] });
    const out = renderOk(set, [shop(), ...backing('shop'), attack, ...backing('attacker')]);
    expect(out.auxiliaryFiles.maps['host-exact.map']).toBe('attacker.example.com/ ing_attacker_web_web_80\nshop.example.com/ ing_shop_web_web_80\n');
    expect(Math.max(...allLines(out).map((line) => line.length))).toBeLessThan(2_048);
    expect(out.rejections).toEqual([
      {
        kind: 'Ingress',
        namespace: 'attacker',
        name: 'web',
        scope: 'path',
        reason: `spec.rules[0].http.paths[0].path is ${path.length} characters long, over the limit of 2048; the path is dropped`,
      },
    ]);
  });

  it('drops a rule whose host is over 253 characters or has a label over 63', () => {
    const long = `${'a'.repeat(60)}.`.repeat(5) + 'example.com';
    const wideLabel = `${'b'.repeat(64)}.example.com`;
    const out = renderOk(set, [
      ingress('shop', 'web', { rules: [rule(long, { path: '/', service: 'web' }), rule(wideLabel, { path: '/', service: 'web' }), rule('shop.example.com', { path: '/', service: 'web' })] }),
      ...backing('shop'),
    ]);
    expect(long.length).toBeGreaterThan(253);
    expect(out.auxiliaryFiles.maps['host-prefix.map']).toBe('shop.example.com/ ing_shop_web_web_80\n');
    expect(out.rejections.map((r) => r.scope)).toEqual(['path', 'path']);
  });

  it('rejects label values and keys outside Kubernetes\' rules', () => {
    const labelled = (labels: Record<string, string>): KubeObject => ({ ...endpointSlice('shop', 'web', ['10.0.0.9'], undefined, 'odd'), metadata: { name: 'odd', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web', ...labels } } });
    const cases: Record<string, string>[] = [{ team: 'x'.repeat(64) }, { team: 'has space' }, { 'bad key!': 'x' }, { [`${'p'.repeat(254)}/k`]: 'x' }];
    for (const labels of cases) {
      const out = renderOk(set, [shop(), ...backing('shop'), labelled(labels)]);
      expect(out.rejections).toEqual([expect.objectContaining({ kind: 'EndpointSlice', name: 'odd', scope: 'object' })]);
      expect(out.haproxyConfig).not.toContain('10.0.0.9');
    }
  });

  it('keeps the longest lines object data can build (maximal host, path and names) under 3,000 characters', () => {
    const ns = 'n'.repeat(63);
    const name = `${'m'.repeat(63)}.`.repeat(3) + 'm'.repeat(61);
    const host = `${'h'.repeat(63)}.`.repeat(3) + 'h'.repeat(61);
    const objects = [
      ingress(ns, name, { rules: [rule(host, { path: `/${'p'.repeat(2_047)}`, pathType: 'Exact', service: 's'.repeat(63) }, { path: `/${'q'.repeat(2_047)}`, pathType: 'Prefix', service: 's'.repeat(63) })] }),
      service(ns, 's'.repeat(63)),
      endpointSlice(ns, 's'.repeat(63), ['10.0.0.1']),
    ];
    expect(name.length).toBe(253);
    expect(host.length).toBe(253);
    const out = renderOk(set, objects);
    expect(out.rejections).toEqual([]);
    const longest = Math.max(...allLines(out).map((line) => line.length));
    expect(longest).toBeGreaterThan(2_048);
    expect(longest).toBeLessThan(3_000);
  });

  it('documents every cap in one exported table', () => {
    const max = (fragment: string): number | undefined => VALUE_LIMITS.find((limit) => limit.value.includes(fragment))?.max;
    expect(max('Ingress rule host')).toBe(253);
    expect(max('Ingress path')).toBe(2_048);
    expect(max('annotation value')).toBe(4_096);
    expect(max('label value')).toBe(63);
    expect(max('server slots')).toBe(1_000);
    expect(VALUE_LIMITS.every((limit) => limit.max > 0 && limit.over.length > 0)).toBe(true);
  });
});
