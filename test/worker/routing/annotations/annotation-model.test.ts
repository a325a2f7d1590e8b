import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/worker/protocol.js';
import { readAnnotations } from '../../../../src/worker/routing/annotations/annotation-reader.js';
import { annotationValueProblem } from '../../../../src/worker/routing/annotations/guard-hook.js';
import { ANNOTATIONS, lookupAnnotation } from '../../../../src/worker/routing/annotations/registry.js';
import { ingressOptionsOf } from '../../../../src/worker/routing/ingress-options.js';
import { modelOptions, type Backend } from '../../../../src/worker/routing/model.js';
import { annotationAllowsLineBreaks } from '../../../../src/worker/store/annotation-checks.js';
import { defaultTemplateSet, endpointSlice, ingress, renderOk, routingModel, rule, service } from '../../../helpers/cluster.js';

const set = await defaultTemplateSet();

function app(annotations: Record<string, string>, name = 'web', host = `${name}.example.com`): KubeObject {
  return ingress('shop', name, { rules: [rule(host, { path: '/', service: 'web' })] }, { annotations });
}

function backing(annotations?: Record<string, string>): KubeObject[] {
  const svc = service('shop', 'web');
  return [annotations === undefined ? svc : { ...svc, metadata: { ...svc.metadata, annotations } }, endpointSlice('shop', 'web', ['10.0.0.1', '10.0.0.2'])];
}

function backendOf(objects: readonly KubeObject[], name = 'ing_shop_web_web_80'): { backend: Backend; warnings: string[] } {
  const { model, warnings } = routingModel(objects);
  const backend = model.backends.find((b) => b.name === name);
  if (backend === undefined) throw new Error(`no backend ${name}; warnings: ${warnings.join('; ')}`);
  return { backend, warnings };
}

/** The lines of one backend section of a rendered config. */
function section(config: string, name: string): string[] {
  const start = config.indexOf(`\nbackend ${name}\n`);
  return config.slice(start + 1).split('\n\n')[0]?.split('\n') ?? [];
}

describe('the registry', () => {
  it('knows every name under all three prefixes, aliases included, and refuses config snippets by pattern', () => {
    for (const prefix of ['haproxy.org/', 'haproxy.com/', 'ingress.kubernetes.io/']) {
      expect(lookupAnnotation(`${prefix}whitelist`)).toMatchObject({ kind: 'known', spec: { name: 'allow-list' } });
      expect(lookupAnnotation(`${prefix}frontend-config-snippet`)).toMatchObject({ kind: 'refused' });
    }
    expect(lookupAnnotation('haproxy.org/blacklist')).toMatchObject({ kind: 'known', spec: { name: 'deny-list' } });
    expect(lookupAnnotation('haproxy.org/route-acl')).toMatchObject({ kind: 'refused' });
    expect(lookupAnnotation('haproxy.org/nope')).toMatchObject({ kind: 'unknown' });
    expect(lookupAnnotation('example.com/allow-list')).toBeUndefined();
    expect(ANNOTATIONS.filter((s) => s.security).map((s) => s.name)).toEqual(['allow-list', 'deny-list', 'auth-type', 'auth-secret', 'auth-realm']);
  });

  it('lets only the multi-line annotations (and refused snippets, ignored anyway) hold line breaks past the guard', () => {
    expect(annotationAllowsLineBreaks('Ingress', 'haproxy.org/path-rewrite')).toBe(true);
    expect(annotationAllowsLineBreaks('Ingress', 'haproxy.com/response-set-header')).toBe(true);
    expect(annotationAllowsLineBreaks('Ingress', 'haproxy.org/backend-config-snippet')).toBe(true);
    expect(annotationAllowsLineBreaks('Ingress', 'haproxy.org/allow-list')).toBe(false);
    expect(annotationAllowsLineBreaks('Ingress', 'example.com/path-rewrite')).toBe(false);
    const object = app({});
    expect(annotationValueProblem('haproxy.org/set-host', 'a.example\nb', object, 'Ingress')).toBe('set-host takes a single line');
    expect(annotationValueProblem('haproxy.org/request-set-header', 'X-A 1\nX-B 2', object, 'Ingress')).toBeNull();
  });
});

describe('reading annotations', () => {
  it('prefers haproxy.org/ over haproxy.com/ over ingress.kubernetes.io/, and a name over its alias, with a warning when they differ', () => {
    const read = readAnnotations(app({ 'ingress.kubernetes.io/timeout-server': '1s', 'haproxy.com/timeout-server': '2s', 'haproxy.org/whitelist': '10.0.0.1', 'haproxy.org/allow-list': '10.0.0.2' }), 'Ingress');
    expect(read.values.get('timeout-server')).toBe('2s');
    expect(read.values.get('allow-list')).toBe('10.0.0.2');
    expect(read.warnings).toEqual([
      'annotation haproxy.org/whitelist is ignored: haproxy.org/allow-list sets allow-list too, and wins',
      'annotation ingress.kubernetes.io/timeout-server is ignored: haproxy.com/timeout-server sets timeout-server too, and wins',
    ]);
  });
});

describe('annotations in the routing model', () => {
  it('gives backends without annotations one shared, frozen default options object', () => {
    const { model } = routingModel([app({}, 'one'), app({}, 'two'), ...backing()]);
    const [a, b] = model.backends as [Backend, Backend];
    expect(a.options).toBe(b.options);
    expect(a.ingressOptions).toBe(b.ingressOptions);
    expect(Object.isFrozen(a.options) && Object.isFrozen(a.ingressOptions)).toBe(true);
  });

  it('takes check*, load-balance, pod-maxconn, server-ssl and server-proto from the Service, the Ingress winning', () => {
    const { backend } = backendOf([
      app({ 'haproxy.org/load-balance': 'source', 'haproxy.org/check-interval': '5s' }),
      ...backing({ 'haproxy.org/check-http': 'GET /healthz', 'haproxy.org/check-interval': '1s', 'haproxy.com/load-balance': 'leastconn', 'haproxy.org/pod-maxconn': '50', 'haproxy.org/server-ssl': 'true', 'haproxy.org/server-proto': 'h2' }),
    ]);
    expect(backend.options).toEqual({ check: true, checkHttp: { method: 'GET', path: '/healthz' }, checkInterval: 5000, balance: { algorithm: 'source', options: [] }, maxconn: 50, serverSsl: true, serverProto: 'h2' });
  });

  it('ignores Ingress-only annotations on a Service, and unknown ones, with warnings naming the object', () => {
    const { backend, warnings } = backendOf([app({ 'haproxy.org/no-such-thing': 'x' }), ...backing({ 'haproxy.org/timeout-server': '1s', 'haproxy.org/check': 'false' })]);
    expect(backend.options).toEqual({ check: false, balance: { algorithm: 'roundrobin', options: [] } });
    expect(warnings).toContain('Ingress shop/web: annotation haproxy.org/no-such-thing is not a supported annotation; ignored');
    expect(warnings).toContain('Service shop/web: annotation haproxy.org/timeout-server applies to Ingress objects only; ignored on a Service');
  });

  it('refuses a config snippet with a warning and still routes the Ingress without it', () => {
    const out = renderOk(set, [app({ 'haproxy.org/backend-config-snippet': 'http-request deny', 'haproxy.com/global-config-snippet': 'stats socket /tmp/x level admin' }), ...backing()]);
    expect(out.auxiliaryFiles.maps['host-prefix.map']).toContain('web.example.com/ ing_shop_web_web_80');
    expect(out.haproxyConfig).not.toContain('stats socket /tmp/x');
    expect(out.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Ingress shop\/web: annotation haproxy.com\/global-config-snippet is refused: config snippets insert raw HAProxy configuration/),
        expect.stringMatching(/^Ingress shop\/web: annotation haproxy.org\/backend-config-snippet is refused/),
      ]),
    );
    expect(out.rejections).toEqual([]);
  });

  it('rejects an Ingress with a bad security value, naming the annotation and the reason, and never serves it', () => {
    const out = renderOk(set, [app({ 'haproxy.org/allow-list': '10.0.0.0/8, 10.0.0.300' }, 'open'), app({}, 'fine'), ...backing()]);
    expect(out.auxiliaryFiles.maps['host-prefix.map']).not.toContain('open.example.com');
    expect(out.auxiliaryFiles.maps['host-prefix.map']).toContain('fine.example.com');
    expect(out.rejections).toEqual([
      expect.objectContaining({
        kind: 'Ingress',
        namespace: 'shop',
        name: 'open',
        scope: 'annotation',
        reason: expect.stringContaining('allow-list entry "10.0.0.300" is not an IPv4 or IPv6 address (or CIDR block); the Ingress is rejected rather than served without it'),
      }),
    ]);
  });

  it("rejects an Ingress whose auth-secret names another namespace's Secret, or that has a Secret but no auth-type", () => {
    const out = renderOk(set, [
      app({ 'haproxy.org/auth-type': 'basic-auth', 'haproxy.org/auth-secret': 'kube-system/admins' }, 'thief'),
      app({ 'haproxy.org/auth-secret': 'users' }, 'half'),
      ...backing(),
    ]);
    expect(out.rejections.map((r) => [r.name, r.reason])).toEqual([
      ['half', expect.stringContaining('auth-secret and auth-realm need auth-type: basic-auth')],
      ['thief', expect.stringContaining("only Secrets of the Ingress's own namespace (shop) may be used")],
    ]);
  });

  it('drops an Ingress with any other bad value, and rejects a Service with a bad Service annotation', () => {
    const out = renderOk(set, [app({ 'haproxy.org/timeout-server': '5 parsecs' }, 'slow'), app({}, 'fine'), ...backing({ 'haproxy.org/check-interval': 'often' })]);
    expect(out.rejections.map((r) => [r.kind, r.name, r.scope])).toEqual([
      ['Ingress', 'slow', 'annotation'],
      ['Service', 'web', 'annotation'],
    ]);
    expect(out.rejections[0]?.reason).toContain('timeout-server must be a time');
    expect(out.auxiliaryFiles.maps['host-prefix.map']).toBe('fine.example.com/ ing_shop_fine_web_80\n');
  });

  it('reads the users of the auth Secret from data and stringData, and lets nobody in when the Secret is missing', () => {
    const hash = '$1$salt$ez2vlPGdaLYkJam5pWs/Y1';
    const auth = { 'haproxy.org/auth-type': 'basic-auth', 'haproxy.org/auth-secret': 'users', 'haproxy.org/auth-realm': 'Shop admins' };
    const users: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'users', namespace: 'shop' }, data: { alice: Buffer.from(hash).toString('base64') }, stringData: { bob: hash } };
    const { backend } = backendOf([app(auth), users, ...backing()]);
    expect(backend.ingressOptions.auth).toEqual({ realm: 'Shop admins', users: [{ name: 'alice', hash }, { name: 'bob', hash }] });
    const missing = backendOf([app(auth), ...backing()]);
    expect(missing.backend.ingressOptions.auth).toEqual({ realm: 'Shop admins', users: [] });
    expect(missing.warnings).toContain('Ingress shop/web: auth secret shop/users is missing (or was rejected); nobody is let in');
    const out = renderOk(set, [app(auth), ...backing()]);
    expect(out.haproxyConfig).toContain('userlist ing_shop_web_web_80_users\n\nbackend ing_shop_web_web_80\n');
    expect(out.haproxyConfig).toContain('  http-request auth realm "Shop admins" unless { http_auth(ing_shop_web_web_80_users) }\n');
  });

  it('closes an Ingress whose security value reaches the model unparsable (a guard that did not run): 403 for everyone, never open', () => {
    const warnings: string[] = [];
    const options = ingressOptionsOf(app({ 'haproxy.org/allow-list': 'everyone', 'haproxy.org/timeout-server': 'soon' }), modelOptions({}), (m) => warnings.push(m));
    expect(options.denyAll).toBe(true);
    expect(options.access).toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining('Ingress shop/web: annotation haproxy.org/allow-list entry "everyone" is not an IPv4 or IPv6 address')]);
  });

  it('warns about settings that have no effect without the annotation they depend on', () => {
    const { warnings } = routingModel([app({ 'haproxy.org/cors-max-age': '1m', 'haproxy.org/rate-limit-period': '1m', 'haproxy.org/request-redirect-code': '301' }), ...backing()]);
    expect(warnings).toEqual([
      'Ingress shop/web: annotation haproxy.org/request-redirect-code has no effect without request-redirect',
      'Ingress shop/web: annotation haproxy.org/rate-limit-period has no effect without rate-limit-requests',
      'Ingress shop/web: annotation haproxy.org/cors-max-age has no effect without cors-enable: "true"',
    ]);
  });

  it('renders every option from typed fields into the backend section', () => {
    const out = renderOk(set, [
      app({
        'haproxy.org/deny-list': '192.0.2.0/24',
        'haproxy.org/ssl-redirect': 'false',
        'haproxy.org/path-rewrite': '/api/(.*) /\\1',
        'haproxy.org/set-host': 'internal.example',
        'haproxy.org/cookie-persistence': 'SRV',
        'haproxy.org/rate-limit-requests': '10',
        'haproxy.org/timeout-queue': '2s',
      }),
      ...backing(),
    ]);
    expect(section(out.haproxyConfig, 'ing_shop_web_web_80').slice(0, 12)).toEqual([
      'backend ing_shop_web_web_80',
      '  balance roundrobin',
      '  timeout queue 2000ms',
      '  cookie SRV insert indirect nocache',
      '  default-server check',
      '  stick-table type ipv6 size 100k expire 1000ms store http_req_rate(1000ms)',
      '  acl denied_src src 192.0.2.0/24',
      '  http-request deny deny_status 403 if denied_src',
      '  http-request track-sc0 src',
      '  http-request deny deny_status 403 if { sc_http_req_rate(0) gt 10 }',
      '  http-request replace-path /api/(.*) /\\1',
      '  http-request set-header Host internal.example',
    ]);
    expect(out.haproxyConfig).toContain('  server srv1 10.0.0.1:8080 cookie srv1\n');
  });
});
