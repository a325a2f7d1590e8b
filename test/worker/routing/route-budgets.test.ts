// HTTPRoutes in the budgets the namespaces share with Ingresses (route-budget.ts): past the
// output share, the namespace adding the most loses its newest routes, each with a warning and a
// refused status, and the routes and Ingresses of other namespaces are served as before; past the
// health-checked slot budget, the namespace holding the most slots has its newest route's
// backends served without servers, with a warning. Both budgets count Ingresses and routes alike.
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, ingress, renderOk, rule, service, withValues, type RenderSuccess } from '../../helpers/cluster.js';
import { gateway, gatewayClass, httpRoute, ref } from '../../helpers/gateway-objects.js';

let set: TemplateSetSource;
beforeAll(async () => {
  set = await defaultTemplateSet();
});

const at = (i: number) => ({ creationTimestamp: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString() });
const parent = { parentRefs: [{ name: 'gw', namespace: 'infra' }] };

/** Our class and a Gateway in `infra` admitting routes of every namespace. */
const infra = (): KubeObject[] => [gatewayClass(), { ...gateway('infra', 'gw', [{ name: 'http', port: 18090, allowedRoutes: { namespaces: { from: 'All' } } }]), metadata: { name: 'gw', namespace: 'infra', generation: 1, ...at(0) } }];

/** A Service `web` of `ns` with endpoints. */
const web = (ns: string, addresses = ['10.0.1.1', '10.0.1.2']): KubeObject[] => [service(ns, 'web'), endpointSlice(ns, 'web', addresses)];

/** `count` routes of `ns`, created one minute apart from minute `from`, each with its own hostname. */
function routes(ns: string, count: number, from = 10): KubeObject[] {
  return Array.from({ length: count }, (_, i) => httpRoute(ns, `r${String(i).padStart(3, '0')}`, { ...parent, hostnames: [`h${i}.${ns}.example.com`], rules: [{ backendRefs: [ref('web')] }] }, at(from + i)));
}

/** The routes of `ns` that the Gateway bind serves (its host prefix map). */
function served(out: RenderSuccess, ns: string): string[] {
  const names = [...(out.auxiliaryFiles.maps['gateway-0-host-prefix.map'] ?? '').matchAll(new RegExp(`gw_${ns}_(r\\d+)_0_0`, 'g'))].map((m) => m[1] as string);
  return [...new Set(names)].sort();
}

function bytes(out: RenderSuccess): number {
  const aux = out.auxiliaryFiles as unknown as Record<'maps' | 'files' | 'certificates', Record<string, string>>;
  return [out.haproxyConfig, ...(['maps', 'files', 'certificates'] as const).flatMap((kind) => Object.values(aux[kind]))].reduce((sum, text) => sum + Buffer.byteLength(text), 0);
}

const accepted = (out: RenderSuccess, ns: string, name: string) => out.gatewayStatus?.httpRoutes.find((r) => r.namespace === ns && r.name === name)?.parents[0]?.conditions[0];

describe('HTTPRoutes in the output budget the namespaces share', () => {
  const others = (): KubeObject[] => [
    ingress('shop', 'site', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }, at(1)),
    ...web('shop'),
    httpRoute('calm', 'own', { ...parent, hostnames: ['calm.example.com'], rules: [{ backendRefs: [ref('web')] }] }, at(2)),
    ...web('calm'),
  ];

  it("leaves out the newest of one namespace's many routes, naming each, and serves the other namespaces' routes and Ingresses as before", () => {
    const unlimited = renderOk(set, [...infra(), ...others(), ...web('greedy'), ...routes('greedy', 300)]);
    expect(served(unlimited, 'greedy')).toHaveLength(300);
    const max = Math.floor(bytes(unlimited) / 2);
    const out = renderOk(withValues(set, { maxOutputBytes: max }), [...infra(), ...others(), ...web('greedy'), ...routes('greedy', 300)]);
    expect(bytes(out)).toBeLessThanOrEqual(max);
    const kept = served(out, 'greedy');
    expect(kept.length).toBeGreaterThan(30);
    expect(kept.length).toBeLessThan(300);
    // The oldest are kept, the newest go.
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => `r${String(i).padStart(3, '0')}`));
    const warnings = out.warnings.filter((w) => w.includes(': it is not served: namespace greedy would add about '));
    expect(warnings).toHaveLength(300 - kept.length);
    expect(warnings).toContainEqual(
      expect.stringMatching(/^HTTPRoute greedy\/r299: it is not served: namespace greedy would add about \d+ bytes to the output, the most of any namespace, and all Ingresses and HTTPRoutes together about \d+, over the \d+ they share/),
    );
    expect(accepted(out, 'greedy', 'r299')).toMatchObject({ type: 'Accepted', status: 'False', reason: 'UnsupportedValue', message: "over its namespace's share of the output budget" });
    expect(accepted(out, 'greedy', 'r000')).toMatchObject({ type: 'Accepted', status: 'True' });
    // The other namespaces: exactly as without the greedy one.
    const calm = renderOk(withValues(set, { maxOutputBytes: max }), [...infra(), ...others()]);
    expect(out.auxiliaryFiles.maps['host-prefix.map']).toBe(calm.auxiliaryFiles.maps['host-prefix.map']);
    expect(out.auxiliaryFiles.maps['gateway-0-host-prefix.map']).toContain('calm.example.com/ gw_calm_own_0_0');
    expect(out.warnings.filter((w) => !w.includes('greedy'))).toEqual(calm.warnings);
    expect(out.gatewayStatus?.gateways[0]?.listeners[0]?.attachedRoutes).toBe(1 + kept.length);
  });

  it('counts Ingresses and routes of a namespace together: the newest object goes first, whatever its kind', () => {
    const mixed = (ns: string): KubeObject[] => [
      ...web(ns),
      ...Array.from({ length: 100 }, (_, i) => ingress(ns, `i${String(i).padStart(3, '0')}`, { rules: [rule(`i${i}.${ns}.example.com`, { path: '/', service: 'web' })] }, at(10 + i))),
      ...routes(ns, 100, 200),
    ];
    const unlimited = renderOk(set, [...infra(), ...others(), ...mixed('greedy')]);
    const out = renderOk(withValues(set, { maxOutputBytes: Math.floor(bytes(unlimited) * 0.6) }), [...infra(), ...others(), ...mixed('greedy')]);
    // The routes are newer than every Ingress of the namespace: all go before any Ingress does, and the newest Ingresses next.
    const shed = out.warnings.filter((w) => w.includes(': it is not served: namespace greedy')).map((w) => w.slice(0, w.indexOf(':')));
    expect(shed.length).toBeGreaterThan(100);
    expect(shed.filter((o) => o.startsWith('HTTPRoute')).sort()).toEqual(Array.from({ length: 100 }, (_, i) => `HTTPRoute greedy/r${String(i).padStart(3, '0')}`));
    const ingresses = shed.filter((o) => o.startsWith('Ingress')).sort();
    expect(ingresses).toEqual(Array.from({ length: shed.length - 100 }, (_, i) => `Ingress greedy/i${String(100 - shed.length + 100 + i).padStart(3, '0')}`));
    expect(served(out, 'greedy')).toEqual([]);
    expect(out.auxiliaryFiles.maps['host-prefix.map']).toContain('i0.greedy.example.com/ ing_greedy_i000_web_80');
  });
});

describe('HTTPRoutes in the health-checked slot budget (values.fdHardLimit / 2)', () => {
  /** A route of `ns` whose rule sends to `count` Services, each with its checked server slots. */
  const fanOut = (ns: string, count: number, created: number): KubeObject[] => [
    httpRoute(ns, 'fan', { ...parent, hostnames: [`${ns}.example.com`], rules: [{ backendRefs: Array.from({ length: count }, (_, i) => ref(`s${i}`)) }] }, at(created)),
    ...Array.from({ length: count }, (_, i) => [service(ns, `s${i}`), endpointSlice(ns, `s${i}`, [`10.0.2.${i + 1}`])]).flat(),
  ];

  it("serves the route of the namespace holding the most checked slots without servers, with a warning, and leaves the others' servers", () => {
    const out = renderOk(withValues(set, { fdHardLimit: 100 }), [...infra(), ...fanOut('big', 8, 5), ...fanOut('small', 1, 6)]);
    const starved = out.warnings.filter((w) => w.includes('its backends get no servers'));
    expect(starved).toHaveLength(1);
    expect(starved[0]).toMatch(/^HTTPRoute big\/fan: its backends get no servers \(its requests answer 503\): the health-checked server slots of all Ingresses and HTTPRoutes, \d+ in all, are over 50/);
    const section = (name: string) => out.haproxyConfig.split('\n\n').find((s) => s.trim().startsWith(`backend ${name}\n`)) ?? '';
    expect(section('gw_big_fan_0_0')).not.toMatch(/^ {2}server /m);
    expect(section('gw_small_fan_0_0')).toMatch(/^ {2}server /m);
    // Starved, it is still the route of its host (weighted shares: rules): its requests reach its backends, which answer 503.
    expect(out.haproxyConfig).toContain('use_backend gw_big_fan_0_0 if { var(txn.host) -m str big.example.com } { rand(8) -m int lt 1 }');
  });
});
