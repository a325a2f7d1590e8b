// The `httpResource` template helper: it reads the internal HTTP resource store through the render
// scope's reader, prefers pending content to accepted content, reads '' when there is neither,
// and, being a store read, is refused inside a memo block.
import { describe, expect, it } from 'vitest';
import type { TemplateSetSource } from '../../../src/worker/protocol.js';
import { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import { HTTP_RESOURCE_STORE, httpResourceContent, type HttpResourceContent, type HttpResourceObject } from '../../../src/worker/templates/http-resource-helper.js';
import { TemplateEngine, TemplateError } from '../../../src/worker/templates/template-engine.js';
import { renderScope } from '../../helpers/scope.js';

const PATHS = { mapsDir: '/etc/haproxy/maps', filesDir: '/etc/haproxy/files', certsDir: '/etc/haproxy/certs' };
let hashCounter = 0;

function templateSet(haproxyConfig: string): TemplateSetSource {
  return { hash: `http-resource-${++hashCounter}`, stores: [], snippets: {}, haproxyConfig, maps: {}, files: {}, sslCertificates: {}, values: { items: [{ n: 1 }] } };
}

const version = (content: string, checksum = `sum-${content}`): HttpResourceContent => ({ content, checksum });

function resource(name: string, parts: { accepted?: HttpResourceContent; pending?: HttpResourceContent }): HttpResourceObject {
  return { apiVersion: 'haptic-reconciler/v1', kind: 'HttpResource', metadata: { name }, ...parts };
}

/** A store named like the internal one, holding `objects`, as a worker replica would. */
function resourceStore(objects: readonly HttpResourceObject[]): IndexedStore {
  const store = new IndexedStore(HTTP_RESOURCE_STORE, ['metadata.name']);
  for (const object of objects) store.upsert(object);
  return store;
}

function render(template: string, objects: readonly HttpResourceObject[]): string {
  const store = resourceStore(objects);
  const { scope } = renderScope((name) => (name === HTTP_RESOURCE_STORE ? store : undefined), { items: [{ n: 1 }] }, PATHS);
  return new TemplateEngine().render(templateSet(template), scope, 1).haproxyConfig;
}

describe('httpResource helper', () => {
  it('returns the pending content when a resource has both pending and accepted content', () => {
    const objects = [resource('blocklist', { accepted: version('10.0.0.1'), pending: version('10.0.0.2') })];
    expect(render('# {{httpResource "blocklist"}}', objects)).toBe('# 10.0.0.2');
  });

  it('returns the accepted content when nothing is pending', () => {
    expect(render('# {{httpResource "blocklist"}}', [resource('blocklist', { accepted: version('10.0.0.1') })])).toBe('# 10.0.0.1');
  });

  it('returns the pending content of a resource that has no accepted content yet', () => {
    expect(render('{{httpResource "blocklist"}}', [resource('blocklist', { pending: version('first') })])).toBe('first');
  });

  it('returns an empty string for a resource without content, an unknown name, or a missing store', () => {
    expect(render('[{{httpResource "blocklist"}}]', [resource('blocklist', {})])).toBe('[]');
    expect(render('[{{httpResource "other"}}]', [resource('blocklist', { accepted: version('x') })])).toBe('[]');
    const { scope } = renderScope(() => undefined, {}, PATHS);
    expect(new TemplateEngine().render(templateSet('[{{httpResource "blocklist"}}]'), scope, 1).haproxyConfig).toBe('[]');
  });

  it('keys resources by name, so names that are not DNS names (capitals, underscores) are read too', () => {
    const objects = [resource('Block_List.v2', { accepted: version('a') }), resource('allow', { accepted: version('b') })];
    expect(render('{{httpResource "Block_List.v2"}}/{{httpResource "allow"}}', objects)).toBe('a/b');
  });

  it('renders the content verbatim, without HTML escaping', () => {
    expect(render('{{httpResource "acl"}}', [resource('acl', { accepted: version(`hdr(x) -m str "a<b>&c"`) })])).toBe(`hdr(x) -m str "a<b>&c"`);
  });

  it('throws a TemplateError inside a memo block, like the other store reads', () => {
    const objects = [resource('blocklist', { accepted: version('10.0.0.1') })];
    let caught: unknown;
    try {
      render('{{#each values.items as |item|}}{{#memo item}}{{httpResource "blocklist"}}{{/memo}}{{/each}}', objects);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(TemplateError);
    expect((caught as Error).message).toContain('httpResource cannot be used inside a memo block');
  });

  it('reads through the reader’s raw store lookup, as httpResourceContent', () => {
    const store = resourceStore([resource('blocklist', { accepted: version('old'), pending: version('new') })]);
    expect(httpResourceContent({ store: (name) => (name === HTTP_RESOURCE_STORE ? store : undefined) }, 'blocklist')).toBe('new');
    expect(httpResourceContent({ store: () => undefined }, 'blocklist')).toBe('');
  });
});
