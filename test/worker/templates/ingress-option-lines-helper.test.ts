// ingressOptionLines writes what the default set's `with` over a backend's Ingress options wrote
// before it: the block below, as it stood in templates/default.yaml, is rendered with Handlebars
// and compared for random backends.
import fc from 'fast-check';
import Handlebars from 'handlebars';
import { describe, expect, it } from 'vitest';
import { ingressOptionLines } from '../../../src/worker/templates/ingress-option-lines-helper.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import { defaultTemplateSet } from '../../helpers/cluster.js';

const BLOCK = [
  '{{#with this as |b|}}',
  '{{#with b.ingressOptions}}',
  '{{#with rateLimit}}',
  '  stick-table type ipv6 size {{#if b.rateLimitTableSize}}{{b.rateLimitTableSize}}{{else}}100k{{/if}} expire {{periodMs}}ms store http_req_rate({{periodMs}}ms)',
  '{{/with}}',
  '{{#if denyAll}}',
  '  http-request deny deny_status 403',
  '{{/if}}',
  '{{#with access}}',
  '{{#if allow}}',
  '{{#each allow}}',
  '  acl allowed_src src {{join this " "}}',
  '{{/each}}',
  '  http-request deny deny_status 403 unless allowed_src',
  '{{/if}}',
  '{{#if deny}}',
  '{{#each deny}}',
  '  acl denied_src src {{join this " "}}',
  '{{/each}}',
  '  http-request deny deny_status 403 if denied_src',
  '{{/if}}',
  '{{/with}}',
  '{{#with rateLimit}}',
  '  http-request track-sc0 src',
  '  http-request deny deny_status {{status}} if { sc_http_req_rate(0) gt {{requests}} }',
  '{{/with}}',
  '{{#with sslRedirect}}',
  '{{#if enabled}}',
  '  http-request redirect location https://%[var(txn.host)]{{#if (ne port 443)}}:{{port}}{{/if}}%[pathq] code {{code}} if !{ ssl_fc } { var(txn.tls) -m found }',
  '{{/if}}',
  '{{/with}}',
  '{{#with cors}}',
  '  http-request set-var(txn.cors_origin) req.hdr(origin)',
  '  acl cors_origin var(txn.cors_origin) {{#if (eq origin.match "exact")}}-m str {{origin.origin}}{{else if (eq origin.match "regex")}}-m reg {{origin.pattern}}{{else}}-m found{{/if}}',
  '  http-request return status 204 if METH_OPTIONS cors_origin { req.hdr(access-control-request-method) -m found }',
  '{{/with}}',
  '{{#with auth}}',
  '  http-request auth realm "{{realm}}" unless { http_auth({{b.name}}_users) }',
  '{{/with}}',
  '{{#with requestRedirect}}',
  '  http-request redirect location {{scheme}}://{{authority}}%[pathq] code {{code}}',
  '{{/with}}',
  '{{#each pathRewrites}}',
  '  http-request replace-path {{match}} {{replace}}',
  '{{/each}}',
  '{{#if setHost}}',
  '  http-request set-header Host {{setHost}}',
  '{{/if}}',
  '{{#each requestHeaders}}',
  '  http-request set-header {{name}} "{{value}}"',
  '{{/each}}',
  '{{#each responseHeaders}}',
  '  http-response set-header {{name}} "{{value}}"',
  '{{/each}}',
  '{{#with cors}}',
  '  http-after-response set-header Access-Control-Allow-Origin "{{#if (eq origin.match "any")}}*{{else}}%[var(txn.cors_origin)]{{/if}}" if cors_origin',
  '{{#unless (eq origin.match "any")}}',
  '  http-after-response add-header Vary Origin if cors_origin',
  '{{/unless}}',
  '  http-after-response set-header Access-Control-Allow-Methods "{{methods}}" if cors_origin',
  '  http-after-response set-header Access-Control-Allow-Headers "{{headers}}" if cors_origin',
  '  http-after-response set-header Access-Control-Max-Age "{{maxAge}}" if cors_origin',
  '{{#if credentials}}',
  '  http-after-response set-header Access-Control-Allow-Credentials "true" if cors_origin',
  '{{/if}}',
  '{{/with}}',
  '{{/with}}',
  '{{/with}}',
  '',
].join('\n');
const hb = Handlebars.create();
// The engine's `eq`, `ne` and `join` (template-engine.ts).
hb.registerHelper('eq', (a: unknown, b: unknown) => a === b);
hb.registerHelper('ne', (a: unknown, b: unknown) => a !== b);
hb.registerHelper('join', (list: unknown, separator: unknown) => (Array.isArray(list) ? list.map(String).join(typeof separator === 'string' ? separator : ',') : ''));
const block = hb.compile(BLOCK, { noEscape: true });

const optional = <T>(value: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(value, { nil: undefined });
const sources = fc.array(fc.array(fc.constantFrom('10.0.0.0/8', '192.168.1.1', '::1'), { minLength: 1, maxLength: 3 }), { maxLength: 3 });
const header = fc.record({ name: fc.constantFrom('X-One', 'x-two'), value: fc.constantFrom('a', '%[str()]', 'b c') });
const cors = fc.record({
  origin: fc.oneof(
    fc.constant({ match: 'any' as const }),
    fc.record({ match: fc.constant('exact' as const), origin: fc.constantFrom('https://a.example', 'http://b.example:8080') }),
    fc.record({ match: fc.constant('regex' as const), pattern: fc.constantFrom('^https://.*\\.example$', '.*') }),
  ),
  methods: fc.constantFrom('*', 'GET, POST'),
  headers: fc.constantFrom('*', 'X-One, X-Two'),
  credentials: fc.boolean(),
  maxAge: fc.constantFrom(0, 5, 600),
});
const ingressOptions = fc.record(
  {
    sslRedirect: fc.record({ enabled: fc.boolean(), code: fc.constantFrom(301, 302, 308), port: fc.constantFrom(443, 8443) }),
    denyAll: optional(fc.constant(true as const)),
    access: optional(fc.record({ allow: optional(sources), deny: optional(sources) }, { requiredKeys: [] })),
    auth: optional(fc.record({ realm: fc.constantFrom('Protected Content', 'staff'), users: fc.constant([{ name: 'u', hash: '$5$x' }]) })),
    requestRedirect: optional(fc.record({ scheme: fc.constantFrom('http', 'https'), authority: fc.constantFrom('a.example', 'b.example:8443'), code: fc.constantFrom(301, 302) })),
    pathRewrites: optional(fc.array(fc.record({ match: fc.constantFrom('(.*)', '^/api/(.*)'), replace: fc.constantFrom('/\\1', '/v2/\\1') }), { maxLength: 2 })),
    setHost: optional(fc.constantFrom('a.example', 'a.example:8080', '')),
    requestHeaders: optional(fc.array(header, { maxLength: 2 })),
    responseHeaders: optional(fc.array(header, { maxLength: 2 })),
    rateLimit: optional(fc.record({ requests: fc.constantFrom(1, 100), periodMs: fc.constantFrom(1000, 60_000), status: fc.constantFrom(403, 429) })),
    cors: optional(cors),
  },
  { requiredKeys: ['sslRedirect'] },
);
const backend = fc.record(
  { name: fc.constant('ing_ns_app_svc_80'), ingressOptions, rateLimitTableSize: optional(fc.constantFrom(0, 50_000)) },
  { requiredKeys: ['name'] },
);

describe('ingressOptionLines', () => {
  it('writes the text of the Ingress-options block for any rate limit, source rules, redirects, CORS, authentication, rewrites and headers', () => {
    fc.assert(
      fc.property(backend, (b) => {
        expect(ingressOptionLines(b)).toBe(block(b));
      }),
      { numRuns: 3000 },
    );
  });

  it('writes the HTTPS redirect alone for an Ingress with default options', () => {
    const b = { name: 'b', ingressOptions: { sslRedirect: { enabled: true, code: 302, port: 443 } } };
    expect(ingressOptionLines(b)).toBe('  http-request redirect location https://%[var(txn.host)]%[pathq] code 302 if !{ ssl_fc } { var(txn.tls) -m found }\n');
  });

  it('writes nothing for a backend without Ingress options or for what is not a backend', () => {
    expect(ingressOptionLines({ name: 'b' })).toBe('');
    expect(ingressOptionLines(undefined)).toBe('');
    expect(ingressOptionLines('backend')).toBe('');
  });

  it('is what the default set renders a backend\'s Ingress options with, inside its memo block', async () => {
    const engine = new TemplateEngine();
    const set = await defaultTemplateSet();
    expect(set.snippets.backend).toContain('{{ingressOptionLines b~}}');
    expect(() => engine.dryRun(set)).not.toThrow();
  });
});
