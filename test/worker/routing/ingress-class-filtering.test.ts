import { describe, expect, it } from 'vitest';
import { loadTemplateSet, parseSetOverrides } from '../../../src/main/template-set/template-set.js';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { ingress, renderOk, routingModel, rule, service } from '../../helpers/cluster.js';

describe('ingress class filtering', () => {
  const cluster = (): KubeObject[] => [
    ingress('ns', 'ours', { ingressClassName: 'haproxy', rules: [rule('ours.example.com', { service: 'web' })] }),
    ingress('ns', 'annotated', { rules: [rule('annotated.example.com', { service: 'web' })] }, { annotations: { 'kubernetes.io/ingress.class': 'haproxy' } }),
    ingress('ns', 'classless', { rules: [rule('classless.example.com', { service: 'web' })] }),
    ingress('ns', 'nginx', { ingressClassName: 'nginx', rules: [rule('nginx.example.com', { service: 'web' })] }),
    ingress('ns', 'custom', { ingressClassName: 'x', rules: [rule('custom.example.com', { service: 'web' })] }),
    service('ns', 'web'),
  ];
  const hosts = (values: Record<string, unknown>): string[] =>
    routingModel(cluster(), values)
      .model.hostPrefix.map((e) => e.key.split('/')[0] as string)
      .sort();

  it('accepts class haproxy, the class annotation and Ingresses without a class by default', () => {
    expect(hosts({})).toEqual(['annotated.example.com', 'classless.example.com', 'ours.example.com']);
  });

  it('accepts only the configured class (and classless Ingresses) when ingressClass is set', () => {
    expect(hosts({ ingressClass: 'x' })).toEqual(['classless.example.com', 'custom.example.com']);
  });

  it('leaves Ingresses without a class out when watchIngressWithoutClass is false', () => {
    expect(hosts({ watchIngressWithoutClass: false })).toEqual(['annotated.example.com', 'ours.example.com']);
    expect(hosts({ watchIngressWithoutClass: 'false' })).toEqual(['annotated.example.com', 'ours.example.com']);
  });

  it('applies --set ingressClass=x and watchIngressWithoutClass=false through the template set', async () => {
    const set = await loadTemplateSet(undefined, parseSetOverrides(['ingressClass=x', 'watchIngressWithoutClass=false']));
    const out = renderOk(set, cluster());
    expect(out.auxiliaryFiles.maps['host-prefix.map']).toBe('custom.example.com/ ing_ns_custom_web_80\n');
    expect(out.haproxyConfig).toContain('backend ing_ns_custom_web_80\n');
    expect(out.haproxyConfig).not.toContain('ing_ns_ours_');
  });
});
