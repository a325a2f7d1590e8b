// backendOptionLines writes what the default set's `with` over a backend's options wrote before
// it: the block below, as it stood in templates/default.yaml, is rendered with Handlebars and
// compared for random backends.
import fc from 'fast-check';
import Handlebars from 'handlebars';
import { describe, expect, it } from 'vitest';
import { backendOptionLines } from '../../../src/worker/templates/backend-option-lines-helper.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import { defaultTemplateSet } from '../../helpers/cluster.js';

const BLOCK = [
  '{{#with this as |b|}}',
  '{{#with b.options}}',
  '  balance {{balance.algorithm}}{{#if balance.argument}}({{balance.argument}}){{/if}}{{#each balance.options}} {{this}}{{/each}}',
  '{{#with timeouts}}',
  '{{#if server}}',
  '  timeout server {{server}}ms',
  '{{/if}}',
  '{{#if connect}}',
  '  timeout connect {{connect}}ms',
  '{{/if}}',
  '{{#if tunnel}}',
  '  timeout tunnel {{tunnel}}ms',
  '{{/if}}',
  '{{#if queue}}',
  '  timeout queue {{queue}}ms',
  '{{/if}}',
  '{{/with}}',
  '{{#if cookie}}',
  '  cookie {{cookie}} insert indirect nocache',
  '{{/if}}',
  '{{#if (or check maxconn serverSsl serverProto)}}',
  '  default-server{{#if check}} check{{#if b.checkInterval}} inter {{b.checkInterval}}{{else if checkInterval}} inter {{checkInterval}}{{/if}}{{/if}}{{#if maxconn}} maxconn {{maxconn}}{{/if}}{{#if serverSsl}} ssl verify none alpn h2,http/1.1{{else if serverProto}} proto {{serverProto}}{{/if}}',
  '{{/if}}',
  '{{#with checkHttp}}',
  '  option httpchk {{method}} {{path}}{{#if version}} {{version}}{{/if}}',
  '{{/with}}',
  '{{/with}}',
  '{{/with}}',
  '',
].join('\n');
const hb = Handlebars.create();
// The engine's `or` (template-engine.ts): JavaScript truth of any argument.
hb.registerHelper('or', (...args: unknown[]) => args.slice(0, -1).some(Boolean));
const block = hb.compile(BLOCK, { noEscape: true });

const optional = <T>(value: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(value, { nil: undefined });
const milliseconds = fc.constantFrom(0, 1, 500, 30_000);
const options = fc.record(
  {
    check: fc.boolean(),
    checkHttp: optional(fc.record({ method: fc.constantFrom('GET', 'HEAD'), path: fc.constantFrom('/', '/healthz'), version: optional(fc.constantFrom('HTTP/1.0', 'HTTP/1.1', '')) })),
    checkInterval: optional(fc.constantFrom(0, 100, 2000)),
    balance: fc.record({
      algorithm: fc.constantFrom('roundrobin', 'leastconn', 'hdr'),
      argument: optional(fc.constantFrom('host', '', 'User-Agent')),
      options: fc.array(fc.constantFrom('use_domain_only', 'consistent'), { maxLength: 2 }),
    }),
    cookie: optional(fc.constantFrom('SERVERID', '')),
    timeouts: optional(fc.record({ server: milliseconds, connect: milliseconds, tunnel: milliseconds, queue: milliseconds }, { requiredKeys: [] })),
    maxconn: optional(fc.constantFrom(0, 1, 250)),
    serverSsl: optional(fc.constant(true as const)),
    serverProto: optional(fc.constantFrom('h2', '')),
  },
  { requiredKeys: ['check', 'balance'] },
);
const backend = fc.record(
  { name: fc.constant('ing_ns_app_svc_80'), options, checkInterval: optional(fc.constantFrom(0, 200, 400)) },
  { requiredKeys: ['name'] },
);

describe('backendOptionLines', () => {
  it('writes the text of the options block for any balance, timeouts, cookie, checks and server settings', () => {
    fc.assert(
      fc.property(backend, (b) => {
        expect(backendOptionLines(b)).toBe(block(b));
      }),
      { numRuns: 2000 },
    );
  });

  it('writes a default-server line only when a check, maxconn or server TLS setting is on', () => {
    const balance = { algorithm: 'roundrobin', options: [] };
    expect(backendOptionLines({ options: { check: false, balance } })).toBe('  balance roundrobin\n');
    expect(backendOptionLines({ checkInterval: 400, options: { check: true, checkInterval: 100, balance } })).toBe('  balance roundrobin\n  default-server check inter 400\n');
  });

  it('writes nothing for a backend without options or for what is not a backend', () => {
    expect(backendOptionLines({ name: 'b' })).toBe('');
    expect(backendOptionLines(undefined)).toBe('');
    expect(backendOptionLines('backend')).toBe('');
  });

  it('is what the default set renders a backend\'s options with, inside its memo block', async () => {
    const engine = new TemplateEngine();
    const set = await defaultTemplateSet();
    expect(set.snippets.backend).toContain('{{backendOptionLines b~}}');
    expect(() => engine.dryRun(set)).not.toThrow();
  });
});
