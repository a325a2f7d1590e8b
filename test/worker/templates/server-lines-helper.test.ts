// serverLines writes what the default set's server loop wrote before it: the loop below, as it
// stood in templates/default.yaml, is rendered with Handlebars and compared for random backends.
import fc from 'fast-check';
import Handlebars from 'handlebars';
import { describe, expect, it } from 'vitest';
import { serverLines } from '../../../src/worker/templates/server-lines-helper.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import { defaultTemplateSet } from '../../helpers/cluster.js';

const LOOP = [
  '{{#with this as |b|}}',
  '{{#each b.servers}}',
  '  server {{name}} {{address}}{{#if enabled}}{{#if b.dns}} resolvers dns init-addr last,libc,none{{/if}}{{else}} disabled{{/if}}{{#if b.options.cookie}} cookie {{name}}{{/if}}',
  '{{/each}}',
  '{{/with}}',
  '',
].join('\n');
const loop = Handlebars.create().compile(LOOP, { noEscape: true });

const server = fc.record({
  name: fc.constantFrom('srv1', 'srv2', 'srv10', 'a b', ''),
  address: fc.constantFrom('10.0.0.1:8080', '[fd00::1]:80', '127.0.0.1:1', 'svc.example:443'),
  enabled: fc.boolean(),
});
const backend = fc.record(
  {
    name: fc.constant('ing_ns_app_svc_80'),
    servers: fc.array(server, { maxLength: 12 }),
    dns: fc.constantFrom(true, false, undefined),
    options: fc.record({ cookie: fc.constantFrom(undefined, '', 'SERVERID') }, { requiredKeys: [] }),
  },
  { requiredKeys: ['name', 'servers'] },
);

describe('serverLines', () => {
  it('writes the text of the per-slot loop for any servers, DNS and cookie setting', () => {
    fc.assert(
      fc.property(backend, (b) => {
        expect(serverLines(b)).toBe(loop(b));
      }),
      { numRuns: 1000 },
    );
  });

  it('writes nothing for a backend without servers or for what is not a backend', () => {
    expect(serverLines({ name: 'b', servers: [] })).toBe('');
    expect(serverLines({ name: 'b' })).toBe('');
    expect(serverLines(undefined)).toBe('');
    expect(serverLines('backend')).toBe('');
  });

  it('is what the default set renders a backend\'s slots with, inside its memo block', async () => {
    const engine = new TemplateEngine();
    const set = await defaultTemplateSet();
    expect(set.snippets.backend).toContain('{{serverLines b~}}');
    expect(() => engine.dryRun(set)).not.toThrow();
  });
});
