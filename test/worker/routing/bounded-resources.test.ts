// Bounded resources: server slots capped (block and total) and given back after a spike with
// hysteresis, endpoints per Service capped with a warning naming the Service, and the rendered
// output capped in size with a failure that names the size. The slot rule is idempotent, which
// keeps incremental renders byte-identical to cold ones.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { assignSlots, parseSlotFile, SERVER_SLOTS_FILE, slotLine } from '../../../src/worker/routing/ingress-model.js';
import { slotCount } from '../../../src/worker/routing/server-slots.js';
import type { KubeObject, RenderBaseline, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, ingress, renderObjects, renderOk, rule, service, withValues, type RenderSuccess } from '../../helpers/cluster.js';

let set: TemplateSetSource;
beforeAll(async () => {
  set = await defaultTemplateSet();
});

const WEB = 'ing_shop_web_web_80';
const addresses = (n: number, from = 0): string[] => Array.from({ length: n }, (_, i) => `10.${Math.floor((i + from) / 250)}.${(i + from) % 250}.1`);

function cluster(endpoints: string[]): KubeObject[] {
  const slices: KubeObject[] = [];
  for (let i = 0; i < endpoints.length || i === 0; i += 500) slices.push(endpointSlice('shop', 'web', endpoints.slice(i, i + 500), undefined, `web-${i}`));
  return [ingress('shop', 'web', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }), service('shop', 'web'), ...slices];
}

const baselineOf = (out: RenderSuccess): RenderBaseline => ({ haproxyConfig: out.haproxyConfig, auxiliaryFiles: out.auxiliaryFiles });
const slotsOf = (out: RenderSuccess): number => parseSlotFile(out.auxiliaryFiles.files[SERVER_SLOTS_FILE]).get(WEB)?.length ?? 0;

describe('server slot count', () => {
  it('grows by whole blocks, and shrinks only once fewer than half the slots are in use, to half full', () => {
    expect(slotCount(11, 10, 10)).toBe(20);
    expect(slotCount(20, 40, 10)).toBe(40);
    expect(slotCount(19, 40, 10)).toBe(40);
    expect(slotCount(14, 40, 10)).toBe(30);
    expect(slotCount(10, 40, 10)).toBe(20);
    expect(slotCount(3, 40, 10)).toBe(10);
    expect(slotCount(0, 40, 10)).toBe(10);
  });

  it('caps the block and the total at 1,000 slots', () => {
    expect(slotCount(0, 0, 1_000_000)).toBe(1000);
    expect(slotCount(5000, 0, 300)).toBe(1000);
    expect(assignSlots(addresses(1500), undefined, 10)).toHaveLength(1000);
  });

  it('is idempotent: assigning again from its own result changes nothing, whatever the inputs', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2500 }), fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 1, max: 1200 }), (endpoints, previous, block) => {
        const once = slotCount(endpoints, previous, block);
        expect(slotCount(endpoints, once, block)).toBe(once);
        expect(once).toBeLessThanOrEqual(1000);
        expect(once).toBeGreaterThanOrEqual(Math.min(endpoints, 1000));
      }),
    );
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 80 }), { maxLength: 60 }), fc.array(fc.integer({ min: -1, max: 80 }), { maxLength: 90 }), fc.integer({ min: 1, max: 12 }), (ids, prior, block) => {
        const endpoints = ids.map((i) => `10.0.0.${i}:80`).sort();
        const previous = prior.map((i) => (i < 0 ? '' : `10.0.0.${i}:80`));
        const once = assignSlots(endpoints, previous, block).map((s) => (s.enabled ? s.address : ''));
        const twice = assignSlots(endpoints, once, block).map((s) => (s.enabled ? s.address : ''));
        expect(twice).toEqual(once);
      }),
    );
  });

  it('writes a backend of 1,000 slots as slot-file lines of 100 slots, and reads them back', () => {
    const slots = addresses(1000).map((a) => `${a}:8080`);
    const text = slotLine(WEB, slots);
    expect(text.split('\n').filter((line) => line !== '')).toHaveLength(10);
    expect(Math.max(...text.split('\n').map((line) => line.length))).toBeLessThan(2000);
    expect(parseSlotFile(text).get(WEB)).toEqual(slots);
  });
});

describe('server slots across renders', () => {
  it('give a spike back after it is over, and keep the endpoints that stay', () => {
    const spike = renderOk(set, cluster(addresses(35)));
    expect(slotsOf(spike)).toBe(40);
    const calmer = renderOk(set, cluster(addresses(15)), baselineOf(spike));
    expect(slotsOf(calmer)).toBe(30);
    const calm = renderOk(set, cluster(addresses(3)), baselineOf(calmer));
    expect(slotsOf(calm)).toBe(10);
    expect(calm.haproxyConfig).toContain(`server srv1 ${addresses(1)[0] as string}:8080`);
  });

  it('clamp serverSlots=1000000 to 1,000 slots with a warning, instead of allocating millions of server lines', () => {
    const out = renderOk(withValues(set, { serverSlots: 1_000_000 }), cluster(addresses(2)));
    expect(slotsOf(out)).toBe(1000);
    expect(out.warnings).toContain('values.serverSlots 1000000 is over the limit of 1000; backends get at most 1000 slots');
  });

  it('clamp a serverSlots over the cap to 1,000 slots per backend', () => {
    expect(slotsOf(renderOk(withValues(set, { serverSlots: 5000 }), cluster(addresses(2))))).toBe(1000);
  });
});

describe('endpoints per Service', () => {
  it('are capped at values.maxEndpointsPerService (1,000 by default), with a warning naming the Service', () => {
    const out = renderOk(set, cluster(addresses(1200)));
    expect(out.haproxyConfig.match(/server srv\d+ 10\./g)).toHaveLength(1000);
    expect(out.warnings).toContain(`Ingress shop/web: service shop/web has 1200 ready endpoints, over values.maxEndpointsPerService (1000); only the first 1000 are used`);
  });

  it('follow a lower values.maxEndpointsPerService', () => {
    const out = renderOk(withValues(set, { maxEndpointsPerService: 5 }), cluster(addresses(8)));
    expect(out.haproxyConfig.match(/server srv\d+ 10\./g)).toHaveLength(5);
  });
});

describe('the rendered output', () => {
  it('sheds the newest of thirty Ingresses, each within its share of the cap but together over it, and stays under the cap', () => {
    const many = Array.from({ length: 30 }, (_, i) =>
      ingress('shop', `web-${String(i).padStart(2, '0')}`, { rules: [rule(`shop-${i}.example.com`, { path: '/', service: 'web' })] }, { creationTimestamp: `2024-01-01T00:${String(i).padStart(2, '0')}:00Z` }),
    );
    const out = renderOk(withValues(set, { maxOutputBytes: 60_000 }), [...cluster(addresses(50)), ...many]);
    const size = Buffer.byteLength(out.haproxyConfig) + Object.values(out.auxiliaryFiles).flatMap((kind: Record<string, string>) => Object.values(kind)).reduce((sum, text) => sum + Buffer.byteLength(text), 0);
    expect(size).toBeLessThanOrEqual(60_000);
    const shed = out.warnings.filter((w) => w.includes('it is not served: namespace shop'));
    expect(shed.length).toBeGreaterThan(0);
    // An Ingress without a creation time counts as the newest: the cluster's own shop/web goes first.
    expect(shed[0]).toMatch(/^Ingress shop\/web: /);
    expect(shed.some((w) => w.startsWith('Ingress shop/web-00:'))).toBe(false);
    expect(out.auxiliaryFiles.maps['host-prefix.map']).toContain('shop-0.example.com/ ing_shop_web-00_web_80');
  });

  it('over values.maxOutputBytes by the template text alone fails the render with a message naming its size', () => {
    const outcome = renderObjects(withValues(set, { maxOutputBytes: 1_000 }), cluster(addresses(1)));
    expect(!outcome.ok && outcome.phase).toBe('render');
    expect(!outcome.ok && outcome.message).toMatch(/^the rendered output is \d+ bytes \(config and auxiliary files\), over the limit of 1000 bytes \(values\.maxOutputBytes\)$/);
  });
});

describe('the health-checked slot budget (values.fdHardLimit / 2)', () => {
  const fanOut = (namespace: string, count: number, annotations?: Record<string, string>): KubeObject[] => [
    ingress(namespace, 'fan', { rules: [rule(`${namespace}.example.com`, ...Array.from({ length: count }, (_, i) => ({ path: `/p${i}`, service: `s${i}` })))] }),
    ...Array.from({ length: count }, (_, i) => {
      const svc = service(namespace, `s${i}`);
      return annotations === undefined ? svc : { ...svc, metadata: { ...svc.metadata, annotations } };
    }),
  ];

  it('leaves the Ingress of the namespace holding the most checked slots without servers, with a warning that says what to change', () => {
    const out = renderOk(withValues(set, { fdHardLimit: 100 }), fanOut('big', 8));
    const starved = out.warnings.filter((w) => w.includes('its backends get no servers'));
    expect(starved).toHaveLength(1);
    expect(starved[0]).toContain('Ingress big/fan');
    expect(starved[0]).toContain('raise fdHardLimit');
  });

  it('does not count the slots of Services whose health checks are off', () => {
    const out = renderOk(withValues(set, { fdHardLimit: 100 }), fanOut('big', 8, { 'haproxy.org/check': 'false' }));
    expect(out.warnings.filter((w) => w.includes('its backends get no servers'))).toEqual([]);
    expect((out.haproxyConfig.match(/^ {2}server /gm) ?? []).length).toBe(80);
  });
});
