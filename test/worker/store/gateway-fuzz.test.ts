// Property-based fuzzing of the user-controlled fields of HTTPRoute (parentRefs, hostnames,
// matches, filters, backendRefs, timeouts) and Gateway (listeners, addresses, allowedRoutes),
// rendered with the default template set beside a fixed good Gateway and route. Properties: the
// checks never throw; object data never fails a render; the good route's frontend and backend
// render exactly as without the neighbours (a bad route fails alone); and every line the
// Gateway part produces follows the template's grammar, object values only where values go.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkObjectAs } from '../../../src/worker/store/object-guard.js';
import type { KubeObject, RenderOutcome, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, renderObjects, service, type RenderSuccess } from '../../helpers/cluster.js';
import { gateway, gatewayClass, httpRoute } from '../../helpers/gateway-objects.js';

const PAYLOADS = ['\n', '\r\n', ' ', '"', "'", '#', '%[src]', '${HOME}', '{', '}', '\\', '\u001b[31m', '*', '..', '/', ':', ';', ' if TRUE', '\nbackend injected', '\n  http-request deny', 'x'.repeat(300), 'X-Haptic-Loop'];
const payload = fc.constantFrom(...PAYLOADS);
const mix = (good: fc.Arbitrary<string>): fc.Arbitrary<string> => fc.oneof({ weight: 3, arbitrary: good }, { weight: 1, arbitrary: payload }, { weight: 1, arbitrary: fc.tuple(good, payload, good).map(([a, b, c]) => a + b + c) });
const shape: fc.Arbitrary<unknown> = fc.oneof(fc.constant(null), fc.integer({ min: -5, max: 70_000 }), fc.boolean(), fc.array(payload, { maxLength: 2 }), fc.dictionary(payload, payload, { maxKeys: 2 }));
/** Mostly good, sometimes hostile text, sometimes the wrong shape. */
const field = <T>(good: fc.Arbitrary<T>, hostile: fc.Arbitrary<unknown> = payload): fc.Arbitrary<unknown> => fc.oneof({ weight: 24, arbitrary: good }, { weight: 1, arbitrary: hostile }, { weight: 1, arbitrary: shape });
const text = (good: fc.Arbitrary<string>) => field(good, mix(good));

const host = text(fc.constantFrom('a.example.com', '*.wild.example.com', 'evil.example.com', 'good.example.com'));
const path = text(fc.constantFrom('/', '/api', '/a/b', '/x%20y'));
const headerName = text(fc.constantFrom('version', 'X-Env', 'x-haptic-loop', 'Host'));
const value = text(fc.constantFrom('one', 'two', 'a-b_c', 'with space'));
const match = fc.record(
  {
    path: field(fc.record({ type: field(fc.constantFrom('Exact', 'PathPrefix', 'RegularExpression')), value: path })),
    headers: field(fc.array(field(fc.record({ name: headerName, value })), { maxLength: 2 })),
    queryParams: field(fc.array(field(fc.record({ name: text(fc.constantFrom('q', 'animal')), value })), { maxLength: 2 })),
    method: field(fc.constantFrom('GET', 'POST', 'get')),
  },
  { requiredKeys: [] },
);
const modifier = fc.record({ set: field(fc.array(field(fc.record({ name: headerName, value })), { maxLength: 2 })), add: field(fc.array(field(fc.record({ name: headerName, value })), { maxLength: 1 })), remove: field(fc.array(headerName, { maxLength: 2 })) }, { requiredKeys: [] });
const pathModifier = field(fc.oneof(fc.record({ type: fc.constant('ReplaceFullPath'), replaceFullPath: path }), fc.record({ type: fc.constant('ReplacePrefixMatch'), replacePrefixMatch: path })));
const filter = fc.oneof(
  fc.record({ type: fc.constant('RequestHeaderModifier'), requestHeaderModifier: field(modifier) }),
  fc.record({ type: fc.constant('ResponseHeaderModifier'), responseHeaderModifier: field(modifier) }),
  fc.record({ type: fc.constant('RequestRedirect'), requestRedirect: field(fc.record({ scheme: field(fc.constantFrom('http', 'https')), hostname: host, port: field(fc.constantFrom(80, 8443)), statusCode: field(fc.constantFrom(301, 302, 307)), path: pathModifier }, { requiredKeys: [] })) }),
  fc.record({ type: fc.constant('URLRewrite'), urlRewrite: field(fc.record({ hostname: host, path: pathModifier }, { requiredKeys: [] })) }),
  fc.record({ type: text(fc.constantFrom('RequestMirror', 'ExtensionRef')) }),
);
const backendRef = fc.record(
  { name: text(fc.constantFrom('web', 'missing')), namespace: field(fc.constantFrom('evil', 'shop')), port: field(fc.constantFrom(80, 8080)), weight: field(fc.integer({ min: 0, max: 5 })), kind: field(fc.constantFrom('Service', 'Bucket')) },
  { requiredKeys: ['name'] },
);
const routeRule = fc.record(
  { matches: field(fc.array(match, { maxLength: 2 })), filters: field(fc.array(filter, { maxLength: 2 })), backendRefs: fc.array(backendRef, { minLength: 1, maxLength: 2 }), timeouts: field(fc.record({ request: text(fc.constantFrom('1s', '500ms', '1m30s')) })) },
  { requiredKeys: ['backendRefs'] },
);
const routeArb = fc
  .record({
    name: fc.constantFrom('r1', 'r2', 'r3'),
    parentRefs: fc.oneof(fc.constant([{ name: 'evil-gw' }]), field(fc.array(field(fc.record({ name: text(fc.constantFrom('evil-gw', 'evil-gw', 'shop-gw', 'random-gw')), namespace: field(fc.constantFrom('evil', 'evil', 'shop')), sectionName: field(fc.constantFrom('http', 'http', 'other')), port: field(fc.constantFrom(18091, 18091, 18092)) }, { requiredKeys: ['name'] })), { maxLength: 2 }))),
    hostnames: field(fc.array(host, { maxLength: 2 })),
    rules: field(fc.array(routeRule, { maxLength: 3 })),
  })
  .map(({ name, ...spec }) => httpRoute('evil', name, JSON.parse(JSON.stringify(spec)) as Record<string, unknown>));
const listener = fc.record(
  {
    name: text(fc.constantFrom('http', 'other')),
    port: field(fc.constantFrom(18090, 18091, 18092)),
    protocol: field(fc.constantFrom('HTTP', 'HTTPS', 'TCP')),
    hostname: host,
    allowedRoutes: field(fc.record({ namespaces: field(fc.record({ from: field(fc.constantFrom('Same', 'All', 'Selector')), selector: field(fc.record({ matchLabels: field(fc.dictionary(mix(fc.constantFrom('team')), text(fc.constantFrom('blue')))) })) })) })),
  },
  { requiredKeys: ['name', 'port'] },
);
const gatewayArb = fc
  .record({ listeners: field(fc.array(listener, { maxLength: 3 })), addresses: field(fc.array(field(fc.record({ type: field(fc.constantFrom('IPAddress', 'Hostname')), value: text(fc.constantFrom('127.0.0.1', '10.0.0.1')) })), { maxLength: 1 })) }, { requiredKeys: [] })
  .map((spec) => ({ ...gateway('evil', 'random-gw', []), spec: { gatewayClassName: 'haptic', ...(JSON.parse(JSON.stringify(spec)) as Record<string, unknown>) } }) as KubeObject);
const neighbours = fc.record({ routes: fc.uniqueArray(routeArb, { maxLength: 3, selector: (r) => r.metadata.name }), gateway: fc.option(gatewayArb, { nil: undefined }) }).map(({ routes, gateway: gw }) => [...routes, ...(gw === undefined ? [] : [gw])]);

const old = { creationTimestamp: '2000-01-01T00:00:00Z' };
const GOOD: KubeObject[] = [
  gatewayClass(),
  { ...gateway('shop', 'shop-gw', [{ name: 'http', port: 18090 }]), metadata: { name: 'shop-gw', namespace: 'shop', ...old } },
  httpRoute('shop', 'good', { parentRefs: [{ name: 'shop-gw' }], hostnames: ['good.example.com'], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/app' } }], backendRefs: [{ name: 'web', port: 80 }] }] }, old),
  service('shop', 'web'),
  endpointSlice('shop', 'web', ['10.0.0.1']),
  { ...gateway('evil', 'evil-gw', [{ name: 'http', port: 18091, allowedRoutes: { namespaces: { from: 'All' } } }]), metadata: { name: 'evil-gw', namespace: 'evil', creationTimestamp: '2001-01-01T00:00:00Z' } },
  service('evil', 'web'),
  endpointSlice('evil', 'web', ['10.0.0.2']),
];

let set: TemplateSetSource;
let good: RenderSuccess;
beforeAll(async () => {
  set = await defaultTemplateSet();
  good = succeed(renderObjects(set, GOOD));
});

function succeed(outcome: RenderOutcome): RenderSuccess {
  if (!outcome.ok) throw new Error(`object data failed the ${outcome.phase} phase: ${outcome.message}`);
  return outcome;
}

/** The good route's frontend and backend sections, and its map entries. */
function goodRoute(out: RenderSuccess): string[] {
  const sections = out.haproxyConfig.split('\n\n');
  const entries = Object.entries(gatewayMaps(out)).flatMap(([name, text]) => text.split('\n').filter((l) => l.includes('gw_shop_good_')).map((l) => `${name}: ${l}`));
  // Binds are numbered in port order, so a neighbour's bind on a lower port renumbers the good one (its frontend and map names): the number is not its behaviour.
  const unnumbered = (text: string): string => text.replace(/^frontend gw_\d+$/m, 'frontend gw_N').replace(/gateway-\d+-/g, 'gateway-N-');
  return [...sections.filter((s) => s.includes('bind *:18090') || s.includes('backend gw_shop_good_0_0')).map((s) => unnumbered(s.trim())), ...entries.map(unnumbered)];
}

/** The map files of the Gateway binds' plain routes. */
function gatewayMaps(out: RenderSuccess): Record<string, string> {
  return Object.fromEntries(Object.entries(out.auxiliaryFiles.maps).filter(([name]) => name.startsWith('gateway-')));
}

const HOST = '\\*?[a-z0-9.-]+';
const SAFE = "[!&'()*+,./0-9:;<=>?@A-Z[\\]^_`a-z|~-]+";
const TERMS = [
  /^\{ var\(txn\.gwl\) -m int eq \d+ \}$/,
  new RegExp(`^\\{ var\\(txn\\.host\\) -m (str|end) ${HOST} \\}$`),
  /^\{ path -m str \/[A-Za-z0-9\-._~!$&()*+,;=:@%/]* \}$/,
  /^\{ path,concat\(,,\/\) -m beg \/[A-Za-z0-9\-._~!$&()*+,;=:@%/]* \}$/,
  /^\{ method [A-Z]+ \}$/,
  new RegExp(`^\\{ req\\.hdr\\([a-z0-9_.-]+\\) -m str ${SAFE} \\}$`),
  new RegExp(`^\\{ url_param\\([A-Za-z0-9._~-]+\\) -m str ${SAFE} \\}$`),
  /^\{ rand\(\d+\) -m int lt \d+ \}$/,
];

function expectCondition(condition: string, line: string): void {
  const terms = condition.match(/\{ [^{}]* \}/g) ?? [];
  expect(terms.join(' '), line).toBe(condition);
  for (const term of terms) expect(TERMS.some((t) => t.test(term)), `${term} in ${line}`).toBe(true);
}

const GATEWAY_LINES = [
  /^ {2}# A Gateway API bind: the listeners of our Gateways on one address and port\.$/,
  /^frontend gw_\d+$/,
  /^ {2}bind (\*|\d+\.\d+\.\d+\.\d+|\[[0-9a-f:]+\]):\d+$/,
  /^backend (gw_[a-z0-9.-]+_[a-z0-9.-]+_\d+_\d+|gwr_\d+|gateway_500)$/,
  /^ {2}http-request return status 500 content-type text\/plain string "no valid backend"$/,
  /^ {2}http-request redirect location https?:\/\/([a-z0-9.-]+|%\[var\(txn\.host\)\])(:\d+)?[A-Za-z0-9\-._~!$&()*+,;=:@%/[\]^?]* code 30[12378]$/,
  /^ {2}http-(request|response) (set|add)-header [a-z0-9_.-]+ "[ !&'()*+,./0-9:;<=>?@A-Z[\]^_`a-z|~-]*"$/,
  /^ {2}http-(request|response) del-header [a-z0-9_.-]+$/,
  /^ {2}http-request set-header host [a-z0-9.-]+$/,
  /^ {2}http-request replace-path \S+ \S+$/,
  /^ {2}timeout server \d+ms$/,
];

const BACKEND = 'gw_[a-z0-9.-]+_[a-z0-9.-]+_\\d+_\\d+|gwr_\\d+|gateway_500';
const PATH = "/[A-Za-z0-9\\-._~!$&()*+,;=:@%/]*";
/** A map entry of a Gateway bind: `[<listener>@][host]/path` and a backend. */
const MAP_ENTRY = new RegExp(`^(\\d+@)?([a-z0-9.-]+\\*?)?${PATH} (${BACKEND})$`);
const MAP_LOOKUP = /^ {2}use_backend %\[var\(txn\.(gwhostpath|gwpath|gww\d+)\),(map|map_beg)\((\/\S+\/gateway-\d+-(host|path)-(exact|prefix)\.map)\)\] if \{ var\(txn\.\1\),\2\(\3\) -m found \}$/;
const KEY_LINES = [
  /^ {2}http-request set-var\(txn\.path\) path$/,
  /^ {2}http-request set-var\(txn\.gwpath\) (var\(txn\.path\)|var\(txn\.gwl\),concat\(@,txn\.path,\))$/,
  /^ {2}http-request set-var\(txn\.gwhostpath\) (var\(txn\.gwl\),concat\(@,txn\.host,\)|var\(txn\.host\)),concat\(,txn\.path,\)$/,
  /^ {2}http-request set-var\(txn\.gww(\d+)\) var\(txn\.host\),field\(-1,\.,\1\),concat\(\*,txn\.path,\) if \{ var\(txn\.host\),field\(-\d+,\.\) -m found \}$/,
  /^ {2}http-request set-var\(txn\.gww(\d+)\) var\(txn\.gwl\),concat\(@,txn\.gww\1,\) if \{ var\(txn\.gww\1\) -m found \}$/,
];

/** Every line of the Gateway part follows the template's grammar, and so does every entry of its maps. */
function expectGatewayGrammar(out: RenderSuccess): void {
  for (const [name, text] of Object.entries(gatewayMaps(out))) {
    expect(name).toMatch(/^gateway-\d+-(host|path)-(exact|prefix)\.map$/);
    for (const entry of text.split('\n')) if (entry !== '') expect(entry, `${name}: ${entry}`).toMatch(MAP_ENTRY);
  }
  for (const line of out.haproxyConfig.split('\n')) {
    if (/txn\.gw((host)?path|w\d)/.test(line)) {
      expect(MAP_LOOKUP.test(line) || KEY_LINES.some((k) => k.test(line)), line).toBe(true);
      continue;
    }
    if (line.includes('x-haptic')) expect(line, line).toMatch(/^ {2}http-request (deny status 508 .* if \{ req\.hdr\(x-haptic-loop\) -m str [0-9a-f]+ \}|add-header x-haptic-loop [0-9a-f]+)$/);
    const use = /^ {2}use_backend (gw_[a-z0-9.-]+_[a-z0-9.-]+_\d+_\d+|gwr_\d+|gateway_500)( if (.*))?$/.exec(line);
    if (use !== null) {
      if (use[3] !== undefined) expectCondition(use[3], line);
      continue;
    }
    const pick = /^ {2}http-request set-var\(txn\.gwl\) int\(\d+\) if !\{ var\(txn\.gwl\) -m found \}( (.*))?$/.exec(line);
    if (pick !== null) {
      if (pick[2] !== undefined) expectCondition(pick[2], line);
      continue;
    }
    if (/^ {2}use_backend /.test(line)) expect(line).toMatch(/^ {2}use_backend %\[var\(txn\.(hostpath|path)\),map(_beg|_reg)?\(\S+\)\] if \{ var\(txn\.(hostpath|path)\),map(_beg|_reg)?\(\S+\) -m found \}$/);
    if (/^(frontend|backend) /.test(line) && !/^(frontend (status|stats|http|https)|backend (default_404|default_503|ing_\S+))$/.test(line)) expect(GATEWAY_LINES.some((g) => g.test(line)), line).toBe(true);
    if (/^ {2}http-(request|response) (set|add|del)-header|replace-path|redirect location|bind /.test(line) && !line.includes('X-Forwarded-Proto') && !line.includes('x-haptic-loop') && !line.includes('ssl crt-list') && !/bind \*:\d+$/.test(line)) {
      expect(GATEWAY_LINES.some((g) => g.test(line)), line).toBe(true);
    }
  }
}

describe('fuzzing every user-controlled field of HTTPRoute and Gateway', () => {
  it('never throws in the checks, whatever the shape', () => {
    fc.assert(
      fc.property(fc.oneof(routeArb, gatewayArb), fc.constantFrom('HTTPRoute', 'Gateway', 'GatewayClass', 'ReferenceGrant', 'Namespace'), (object, kind) => {
        expect(typeof checkObjectAs(object, kind).ok).toBe('boolean');
      }),
      { numRuns: 1000 },
    );
  });

  it('never fails a render for object data, and leaves the good route exactly as without neighbours', () => {
    const expected = goodRoute(good);
    // Its frontend and backend, and its map entries: the exact half and the prefix of /app.
    expect(expected).toHaveLength(4);
    expect(expected).toContain("gateway-N-host-prefix.map: good.example.com/app/ gw_shop_good_0_0");
    fc.assert(
      fc.property(neighbours, (objects) => {
        const out = succeed(renderObjects(set, [...GOOD, ...objects]));
        expect(goodRoute(out)).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('never lets object data make a directive: every Gateway line follows the template grammar', () => {
    fc.assert(
      fc.property(neighbours, (objects) => {
        expectGatewayGrammar(succeed(renderObjects(set, [...GOOD, ...objects])));
      }),
      { numRuns: 200 },
    );
  });

  it('generates neighbours that do reach the config, so the grammar property is not checking empty renders', () => {
    // A fixed sample: the share is a property of the generators, not of one run's luck.
    const sample = fc.sample(neighbours, { numRuns: 200, seed: 18 });
    const routed = sample.filter((objects) => {
      const out = succeed(renderObjects(set, [...GOOD, ...objects]));
      return /use_backend (gw_evil_|gateway_500|gwr_)/.test(out.haproxyConfig) || Object.values(gatewayMaps(out)).some((text) => / (gw_evil_|gateway_500|gwr_)/.test(text));
    }).length;
    expect(routed).toBeGreaterThan(15);
  });
});
