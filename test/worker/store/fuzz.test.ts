// Property-based fuzzing of every user-controlled field of Ingress (hosts, paths, pathType,
// backends, TLS, annotations, class), Service (ports, names, type, externalName), EndpointSlice
// (addresses, ports, conditions) and Secret (data, stringData), rendered with the default
// template set beside a fixed good app. Properties: nothing crashes (object data never fails a
// render); the good app routes identically with and without the random neighbours; and no
// directive, map field or file comes from object data (every config line is one the template
// produces with object values only where values go, every map line is `<route key> <backend>`).
// Extending the template? Add a good object that uses the feature to REFERENCE below.
import { generateKeyPairSync } from 'node:crypto';
import { isIP } from 'node:net';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { classifyAddress } from '../../../src/worker/store/address-policy.js';
import { checkObjectAs } from '../../../src/worker/store/object-guard.js';
import type { KubeObject, RenderOutcome, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, exampleTlsData, ingress, renderObjects, rule, service, tlsSecret, type RenderSuccess } from '../../helpers/cluster.js';

// ---- arbitraries: good values, hostile fragments, and any JSON shape ---------------------------

const PAYLOADS = [
  '\n', '\r\n', '\u0000', ' ', '\t', '"', "'", '#', '%[src]', '${HOME}', '{{values}}', '\\', '\u001b[31m', '\u2028', '\u009b', 'é', '*', '..', '/', ':', '[', ']', ';',
  '\nfrontend pwned\n  stats admin if TRUE\n', ' shop.example.com/ ing_evil', '\nbackend injected', 'x'.repeat(300), `/${'a'.repeat(16_366)}shop.example.com/`,
];
const payload = fc.constantFrom(...PAYLOADS);
const mix = (good: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: good },
    { weight: 2, arbitrary: payload },
    { weight: 2, arbitrary: fc.tuple(good, payload, good).map(([a, b, c]) => a + b + c) },
    { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  );
const shape: fc.Arbitrary<unknown> = fc.oneof(fc.constant(null), fc.constant(undefined), fc.integer({ min: -5, max: 70_000 }), fc.boolean(), fc.array(payload, { maxLength: 2 }), fc.dictionary(payload, payload, { maxKeys: 2 }));

/**
 * How hostile an object is: `clean` objects use good values only, `sparse` ones get a bad value
 * in a field now and then (so most objects are partly rejected), `heavy` ones in many fields.
 */
type Mode = 'clean' | 'sparse' | 'heavy';
const WEIGHTS: Readonly<Record<Mode, readonly [number, number, number]>> = { clean: [1, 0, 0], sparse: [30, 1, 1], heavy: [6, 2, 1] };

/** Builds the arbitraries of one mode: `field(good)` is mostly good, sometimes hostile text or a wrong shape. */
function arbitraries(mode: Mode) {
  const [good, bad, odd] = WEIGHTS[mode];
  const field = <T>(value: fc.Arbitrary<T>, hostile: fc.Arbitrary<unknown> = payload): fc.Arbitrary<unknown> =>
    bad === 0 ? value : fc.oneof({ weight: good, arbitrary: value }, { weight: bad, arbitrary: hostile }, { weight: odd, arbitrary: shape });
  const text = (value: fc.Arbitrary<string>): fc.Arbitrary<string> => (bad === 0 ? value : fc.oneof({ weight: good, arbitrary: value }, { weight: bad + odd, arbitrary: mix(value) }));

  // Names a store can key objects by (admission refuses the others; the guard property tries
  // those too), but otherwise anything.
  const namespace = fc.option(text(fc.constantFrom('evil', 'tenant-b')).filter((ns) => ns !== 'shop' && ns !== ''), { nil: undefined, freq: 20 });
  const name = text(fc.constantFrom('web', 'api', 'app-1', 'tls')).filter((n) => n !== '');
  const host = field(fc.constantFrom('a.example.com', '*.wild.example.com', 'evil.example.com', 'b.tenant.example.com'), mix(fc.constantFrom('a.example.com', 'evil.example.com')))
    .filter((h) => typeof h !== 'string' || !h.includes('shop.example.com'));
  const path = field(fc.constantFrom('/', '/api', '/a/b', '/login', '/%20x'), mix(fc.constantFrom('/', '/api')));
  const port = field(fc.constantFrom(80, 8080), fc.integer({ min: -1, max: 70_000 }));
  const portName = field(fc.constantFrom('http', ''), mix(fc.constantFrom('http')));
  const timestamp = field(fc.constantFrom('2024-05-01T10:00:00Z', '2023-01-01T00:00:00Z'), mix(fc.constantFrom('2024-05-01T10:00:00Z')));
  const annotations = field(fc.dictionary(text(fc.constantFrom('haproxy.org/ssl-redirect', 'haproxy.org/check', 'example.com/note', 'a')), text(fc.constantFrom('true', 'false', '301', 'x')), { maxKeys: 3 }));
  const labels = field(fc.dictionary(text(fc.constantFrom('app', 'team')), text(fc.constantFrom('web', 'blue')), { maxKeys: 2 }));
  const metadata = (extra: fc.Arbitrary<Record<string, unknown>> = fc.constant({})) =>
    fc.record({ name, namespace, creationTimestamp: timestamp, annotations, labels, extra }).map(({ extra: more, ...meta }) => ({ ...meta, ...more }));

  const backend = field(fc.record({ service: fc.record({ name: field(fc.constantFrom('web', 'api', 'ext', 'missing')), port: field(fc.oneof(fc.record({ number: port }), fc.record({ name: portName }))) }) }));
  const ingressPath = field(fc.record({ path, pathType: field(fc.constantFrom('Exact', 'Prefix', 'ImplementationSpecific')), backend }));
  const ingressRule = field(fc.record({ host: fc.option(host, { nil: undefined, freq: 6 }), http: field(fc.record({ paths: field(fc.array(ingressPath, { minLength: 1, maxLength: 3 })) })) }));
  const tlsEntry = field(fc.record({ hosts: field(fc.array(host, { maxLength: 2 })), secretName: field(fc.constantFrom('tls', 'other')) }));
  const ingressArb = fc
    .record({
      metadata: metadata(),
      spec: field(fc.record({ ingressClassName: fc.option(field(fc.constantFrom('haproxy', 'nginx')), { nil: undefined, freq: 3 }), defaultBackend: fc.option(backend, { nil: undefined, freq: 4 }), rules: field(fc.array(ingressRule, { minLength: 1, maxLength: 3 })), tls: fc.option(field(fc.array(tlsEntry, { maxLength: 2 })), { nil: undefined, freq: 2 }) })),
    })
    .map((o) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', ...o }) as KubeObject);
  const serviceArb = fc
    .record({
      metadata: metadata(),
      spec: field(fc.record({ type: fc.option(field(fc.constantFrom('ClusterIP', 'ExternalName', 'NodePort')), { nil: undefined, freq: 2 }), externalName: fc.option(field(fc.constantFrom('ext.example.com', '169.254.169.254', 'localhost', '10.9.9.9')), { nil: undefined }), ports: field(fc.array(field(fc.record({ name: portName, port, targetPort: fc.option(port, { nil: undefined }) })), { minLength: 1, maxLength: 2 })) })),
    })
    .map((o) => ({ apiVersion: 'v1', kind: 'Service', ...o }) as KubeObject);
  const goodAddress = fc.constantFrom('10.1.0.1', '10.1.0.2', 'fd00::5');
  const address = field(fc.oneof({ weight: 3, arbitrary: goodAddress }, { weight: 1, arbitrary: fc.constantFrom('127.0.0.1', '0.0.0.0', '169.254.169.254', 'fe80::1%eth0', '::ffff:127.0.0.1', '224.0.0.1', '::') }), mix(fc.constantFrom('10.1.0.3')));
  const endpoint = field(fc.record({ addresses: field(fc.array(mode === 'clean' ? goodAddress : address, { minLength: 1, maxLength: 2 })), conditions: fc.option(field(fc.record({ ready: field(fc.boolean()) })), { nil: undefined }) }));
  const sliceArb = fc
    .record({
      metadata: metadata(fc.record({ labels: field(fc.record({ 'kubernetes.io/service-name': field(fc.constantFrom('web', 'api')) })) })),
      addressType: fc.option(field(fc.constantFrom('IPv4', 'IPv6', 'FQDN')), { nil: undefined, freq: 2 }),
      ports: field(fc.array(field(fc.record({ name: portName, port })), { minLength: 1, maxLength: 2 })),
      endpoints: field(fc.array(endpoint, { minLength: 1, maxLength: 3 })),
    })
    .map((o) => ({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', ...o }) as KubeObject);
  const secretArb = fc
    .record({
      metadata: metadata(),
      type: fc.option(field(fc.constantFrom('kubernetes.io/tls', 'Opaque')), { nil: undefined }),
      data: fc.option(field(fc.record({ 'tls.crt': field(fc.constantFrom(TLS['tls.crt']), b64Payload), 'tls.key': field(fc.constantFrom(TLS['tls.key'], OTHER_KEY), b64Payload) })), { nil: undefined, freq: 5 }),
      stringData: fc.option(field(fc.dictionary(fc.constantFrom('tls.crt', 'tls.key', 'note'), text(fc.constantFrom('plain'))), shape), { nil: undefined, freq: 3 }),
    })
    .map((o) => ({ apiVersion: 'v1', kind: 'Secret', ...o }) as KubeObject);
  /** A whole app in one namespace, whose parts refer to each other, each part as hostile as the mode makes it. */
  const appArb = fc
    .record({
      ns: fc.constantFrom('evil', 'tenant-b'),
      host: field(fc.constantFrom('a.example.com', 'evil.example.com', '*.wild.example.com'), mix(fc.constantFrom('a.example.com'))).filter((h) => typeof h !== 'string' || !h.includes('shop.example.com')),
      path,
      pathType: field(fc.constantFrom('Exact', 'Prefix', 'ImplementationSpecific')),
      servicePort: field(fc.constant(80), fc.integer({ min: -1, max: 70_000 })),
      portName: field(fc.constant('http'), mix(fc.constant('http'))),
      targetPort: port,
      addresses: fc.array(mode === 'clean' ? goodAddress : address, { minLength: 1, maxLength: 3 }),
      ready: fc.option(field(fc.boolean()), { nil: undefined }),
      type: fc.option(field(fc.constantFrom('ClusterIP', 'ExternalName')), { nil: undefined, freq: 4 }),
      externalName: field(fc.constantFrom('ext.example.com', '169.254.169.254', 'localhost', '10.9.9.9')),
      tlsData: field(fc.constantFrom(TLS), fc.record({ 'tls.crt': b64Payload, 'tls.key': fc.constantFrom(TLS['tls.key'], OTHER_KEY) })),
      annotations,
    })
    .map((a) => {
      const meta = { name: 'app', namespace: a.ns, creationTimestamp: '2024-05-01T10:00:00Z' };
      return [
        { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { ...meta, annotations: a.annotations }, spec: { tls: [{ hosts: [a.host], secretName: 'app-tls' }], rules: [{ host: a.host, http: { paths: [{ path: a.path, pathType: a.pathType, backend: { service: { name: 'app', port: { number: 80 } } } }] } }] } },
        { apiVersion: 'v1', kind: 'Service', metadata: meta, spec: { ...(a.type === undefined ? {} : { type: a.type, externalName: a.externalName }), ports: [{ name: a.portName, port: a.servicePort, targetPort: a.targetPort }] } },
        { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { ...meta, name: 'app-1', labels: { 'kubernetes.io/service-name': 'app' } }, ports: [{ name: a.portName, port: 8080 }], endpoints: a.addresses.map((address) => ({ addresses: [address], ...(a.ready === undefined ? {} : { conditions: { ready: a.ready } }) })) },
        { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { ...meta, name: 'app-tls' }, data: a.tlsData },
      ] as KubeObject[];
    });
  return { field, ingressArb, serviceArb, sliceArb, secretArb, appArb };
}

const TLS = exampleTlsData();
const OTHER_KEY = Buffer.from(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string).toString('base64');
const b64Payload = payload.map((p) => Buffer.from(`-----BEGIN CERTIFICATE-----\n${p}\n-----END CERTIFICATE-----\n`).toString('base64'));
const MODES = (['clean', 'sparse', 'heavy'] as const).map(arbitraries);
const pickMode = <T>(get: (arbs: ReturnType<typeof arbitraries>) => fc.Arbitrary<T>): fc.Arbitrary<T> => fc.oneof(...MODES.map(get));
const ingressArb = pickMode((a) => a.ingressArb);
const serviceArb = pickMode((a) => a.serviceArb);
const sliceArb = pickMode((a) => a.sliceArb);
const secretArb = pickMode((a) => a.secretArb);
const appArb = pickMode((a) => a.appArb);
const field = (MODES[2] as ReturnType<typeof arbitraries>).field;

/** Random neighbours: none of them in the good app's namespace, none naming its host. */
const neighbours = fc
  .record({ app: fc.option(appArb, { nil: undefined, freq: 4 }), ingresses: fc.array(ingressArb, { maxLength: 3 }), services: fc.array(serviceArb, { maxLength: 2 }), slices: fc.array(sliceArb, { maxLength: 2 }), secrets: fc.array(secretArb, { maxLength: 2 }) })
  .map(({ app, ingresses, services, slices, secrets }) => [...(app ?? []), ...ingresses, ...services, ...slices, ...secrets].map(dropUndefined));

function dropUndefined(object: KubeObject): KubeObject {
  return JSON.parse(JSON.stringify(object, (_key, value: unknown) => (value === undefined ? undefined : value))) as KubeObject;
}

// ---- the good app and the reference render ----------------------------------------------------

/** The good app: the oldest Ingress, with TLS, an Exact and a Prefix path. */
const GOOD: KubeObject[] = [
  ingress('shop', 'web', { tls: [{ hosts: ['shop.example.com'], secretName: 'tls' }], rules: [rule('shop.example.com', { path: '/', service: 'web' }, { path: '/api', pathType: 'Exact', service: 'web' })] }, { creationTimestamp: '2000-01-01T00:00:00Z' }),
  service('shop', 'web'),
  endpointSlice('shop', 'web', ['10.0.0.1', '10.0.0.2']),
  tlsSecret('shop', 'tls'),
];

/** Good objects using every feature of the template: what the lines of any render may look like. */
const REFERENCE: KubeObject[] = [
  // The oldest default backend, from a namespace without rules: the rules without a host (ref's)
  // and their namespace's own default backend then make both host fallback maps.
  ingress('ref0', 'default', { defaultBackend: { service: { name: 'web', port: { number: 80 } } } }, { creationTimestamp: '2000-01-01T00:00:00Z' }),
  service('ref0', 'web'),
  endpointSlice('ref0', 'web', ['10.0.0.4']),
  ingress('ref', 'web', {
    defaultBackend: { service: { name: 'web', port: { number: 80 } } },
    tls: [{ hosts: ['*.wild.example.com'], secretName: 'tls' }],
    rules: [
      rule('*.wild.example.com', { path: '/', service: 'web' }, { path: '/x', pathType: 'Exact', service: 'ext' }),
      rule(undefined, { path: '/p', service: 'web' }, { path: '/e', pathType: 'Exact', service: 'web' }, { path: '/i', pathType: 'ImplementationSpecific', service: 'none' }),
    ],
  }, { creationTimestamp: '2001-01-01T00:00:00Z' }),
  service('ref', 'web'),
  { ...endpointSlice('ref', 'web', ['10.0.0.3', 'fd00::1']), addressType: 'IPv6' },
  tlsSecret('ref', 'tls'),
  { ...service('ref', 'ext'), spec: { type: 'ExternalName', externalName: 'ext.example.com', ports: [{ name: 'http', port: 80 }] } },
];

let set: TemplateSetSource;
let good: RenderSuccess;
let allowedLines: Set<string>;
let mapNames: Set<string>;

beforeAll(async () => {
  set = await defaultTemplateSet();
  good = succeed(renderObjects(set, GOOD));
  const reference = succeed(renderObjects(set, [...GOOD, ...REFERENCE]));
  allowedLines = new Set([good, reference].flatMap((out) => out.haproxyConfig.split('\n').map(skeleton)));
  mapNames = new Set(Object.keys(reference.auxiliaryFiles.maps));
});

function succeed(outcome: RenderOutcome): RenderSuccess {
  if (!outcome.ok) throw new Error(`object data failed the ${outcome.phase} phase: ${outcome.message}`);
  return outcome;
}

// ---- what may appear in the output ----------------------------------------------------------

/** A config line with its value places (backend names, server slots and addresses, numbers) blanked. */
function skeleton(line: string): string {
  return line
    .replace(/\bing_[a-z0-9._-]+/g, '<B>')
    .replace(/\bsrv\d+ \S+/g, 'srv<N> <A>')
    .replace(/\b\d+\b/g, '<N>');
}

const HOST = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const PATH = /^\/[A-Za-z0-9\-._~!$&()*+,;=:@%/]*$/;
const PEM = /^(-----BEGIN CERTIFICATE-----\n([A-Za-z0-9+/=]{1,64}\n)+-----END CERTIFICATE-----\n)+-----BEGIN PRIVATE KEY-----\n([A-Za-z0-9+/=]{1,64}\n)+-----END PRIVATE KEY-----\n$/;

/** `host/path`, as the host maps key their routes. */
function isRouteKey(key: string): boolean {
  const slash = key.indexOf('/');
  return slash > 0 && HOST.test(key.slice(0, slash)) && PATH.test(key.slice(slash));
}

/** A wildcard route's regular expression back to `host/path`: `^[^./]+\.a\.com/x(/|$)` is `w.a.com/x`. */
function unregex(key: string): string {
  const body = key.replace(/^\^/, '').replace(/^\[\^\.\/\]\+\\\./, 'w.').replace(/(\(\/\|\$\)|\$)$/, '');
  return body.replace(/\\(.)/g, '$1');
}

function expectServerAddress(line: string): void {
  const [, , address = '', ...rest] = line.trim().split(' ');
  if (rest.includes('disabled')) {
    expect(address, line).toBe('127.0.0.1:1');
    return;
  }
  if (rest.includes('resolvers')) {
    expect(address, line).toMatch(/^[a-z0-9.-]+:\d+$/);
    expect(address.startsWith('localhost:'), line).toBe(false);
    return;
  }
  const match = /^(?:\[([0-9a-f:.]+)\]|(\d+\.\d+\.\d+\.\d+)):(\d+)$/.exec(address);
  const ip = match?.[1] ?? match?.[2] ?? '';
  expect(isIP(ip), line).not.toBe(0);
  expect(classifyAddress(ip), line).toBe('unicast');
}

/** No directive, map field or file of the output comes from object data. */
function expectOnlyTemplateOutput(out: RenderSuccess): void {
  const lines = out.haproxyConfig.split('\n');
  const backends = new Set(lines.filter((l) => l.startsWith('backend ')).map((l) => l.slice('backend '.length)));
  for (const line of lines) {
    expect(allowedLines.has(skeleton(line)), `config line ${JSON.stringify(line.slice(0, 200))}`).toBe(true);
    if (/^\s+server srv\d+ /.test(line)) expectServerAddress(line);
  }
  for (const [name, text] of Object.entries(out.auxiliaryFiles.maps)) {
    expect(mapNames.has(name), `map ${name}`).toBe(true);
    for (const line of text.split('\n').filter((l) => l !== '')) {
      const fields = line.split(' ');
      if (name === 'tls-hosts.lst') {
        expect(fields.length === 1 && HOST.test(line), `${name}: ${JSON.stringify(line)}`).toBe(true);
        continue;
      }
      expect(fields, `${name}: ${JSON.stringify(line.slice(0, 200))}`).toHaveLength(2);
      const [key = '', value = ''] = fields;
      expect(backends.has(value), `${name}: ${value}`).toBe(true);
      if (name.startsWith('path-')) expect(PATH.test(key), `${name}: ${key}`).toBe(true);
      else if (name.startsWith('host-fallback')) expect(HOST.test(key), `${name}: ${key}`).toBe(true);
      else expect(isRouteKey(name === 'host-regex.map' ? unregex(key) : key), `${name}: ${key}`).toBe(true);
    }
  }
  expect(Object.keys(out.auxiliaryFiles.files).sort()).toEqual(expect.arrayContaining([]));
  for (const name of Object.keys(out.auxiliaryFiles.files)) expect(['crt-list.txt', 'server-slots.txt']).toContain(name);
  for (const line of (out.auxiliaryFiles.files['crt-list.txt'] ?? '').split('\n').filter((l) => l !== '')) {
    const [file = '', ...hosts] = line.split(' ');
    expect(file, line).toMatch(/^\/etc\/haproxy\/certs\/[a-z0-9.-]+_[a-z0-9.-]+\.pem$/);
    expect(Object.keys(out.auxiliaryFiles.certificates)).toContain(file.slice('/etc/haproxy/certs/'.length));
    for (const h of hosts) expect(HOST.test(h), line).toBe(true);
  }
  for (const line of (out.auxiliaryFiles.files['server-slots.txt'] ?? '').split('\n').filter((l) => l !== '')) {
    const [backend = '', ...slots] = line.split(' ');
    expect(backends.has(backend), line).toBe(true);
    for (const slot of slots) expect(slot, line).toMatch(/^(-|[a-z0-9.-]+:\d+|\d+\.\d+\.\d+\.\d+:\d+|\[[0-9a-f:.]+\]:\d+)$/);
  }
  for (const [name, pem] of Object.entries(out.auxiliaryFiles.certificates)) {
    expect(name).toMatch(/^[a-z0-9.-]+_[a-z0-9.-]+\.pem$/);
    expect(PEM.test(pem), name).toBe(true);
  }
}

/** What the good app is given: its routes, its backend, its TLS. */
function goodApp(out: RenderSuccess): unknown {
  // The host fallback maps list the good host when a neighbour owns the rules without a host:
  // that keeps its routing as it was (its unmatched paths 404), so they are left out here.
  const routing = Object.entries(out.auxiliaryFiles.maps).filter(([name]) => !name.startsWith('host-fallback'));
  const maps = Object.fromEntries(routing.map(([n, text]) => [n, text.split('\n').filter((l) => l.includes('shop.example.com') || l.includes('ing_shop_'))]));
  const config = out.haproxyConfig;
  return {
    maps,
    backend: (config.slice(config.indexOf('backend ing_shop_web_web_80')).split('\n\n')[0] ?? '').trimEnd(),
    crt: (out.auxiliaryFiles.files['crt-list.txt'] ?? '').split('\n').filter((l) => l.includes('shop')),
    certificate: out.auxiliaryFiles.certificates['shop_tls.pem'],
  };
}

// ---- properties ---------------------------------------------------------------------------

describe('fuzzing every user-controlled field', () => {
  it('never throws, whatever the object, names and namespaces of any shape included', () => {
    const anyKind = fc.constantFrom('Ingress', 'Service', 'EndpointSlice', 'Secret', undefined);
    const loose = fc.oneof(ingressArb, serviceArb, sliceArb, secretArb).chain((object) =>
      fc.record({ name: field(fc.constant(object.metadata.name)), namespace: field(fc.constant(object.metadata.namespace)) }).map((meta) => ({ ...object, metadata: { ...object.metadata, ...meta } }) as KubeObject),
    );
    fc.assert(
      fc.property(loose, anyKind, (object, kind) => {
        const verdict = checkObjectAs(object, kind);
        expect(typeof verdict.ok).toBe('boolean');
      }),
      { numRuns: 1000 },
    );
  });

  it('accepted views hold only values that follow the field rules, whatever the object', () => {
    fc.assert(
      fc.property(ingressArb, (object) => {
        const verdict = checkObjectAs(object, 'Ingress');
        if (!verdict.ok) return;
        const spec = verdict.object.spec as { rules?: { host?: string; http?: { paths?: { path?: string }[] } }[]; tls?: { hosts?: string[] }[] };
        for (const r of spec.rules ?? []) {
          if (r.host !== undefined && r.host !== '') expect(HOST.test(r.host) && r.host.length <= 253, r.host).toBe(true);
          for (const p of r.http?.paths ?? []) expect(PATH.test(p.path ?? '/') && (p.path ?? '/').length <= 2048).toBe(true);
        }
        for (const t of spec.tls ?? []) for (const h of t.hosts ?? []) expect(HOST.test(h)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('never fails a render for object data, and keeps the good app routing exactly as without neighbours', () => {
    const expected = goodApp(good);
    fc.assert(
      fc.property(neighbours, (objects) => {
        const out = succeed(renderObjects(set, [...GOOD, ...objects]));
        expect(goodApp(out)).toEqual(expected);
      }),
      { numRuns: 250 },
    );
  });

  it('never lets object data make a directive, a map field or a file', () => {
    fc.assert(
      fc.property(neighbours, (objects) => {
        expectOnlyTemplateOutput(succeed(renderObjects(set, [...GOOD, ...REFERENCE, ...objects])));
      }),
      { numRuns: 250 },
    );
  });
});
