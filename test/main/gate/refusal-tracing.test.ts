// From HAProxy's `[file:line]` back to the object: the origin index a render carries, the
// refusal messages HAProxy 2.6 prints (a refused directive, a refused map entry, a named
// backend), and the exclusions a render honours (an object rejection with HAProxy's reason,
// until the object changes).
import { describe, expect, it } from 'vitest';
import { refusedObjects } from '../../../src/main/gate/refusal-origins.js';
import type { Exclusion, KubeObject, RenderExclusions, TemplateSetSource } from '../../../src/worker/protocol.js';
import { renderAndValidate } from '../../../src/worker/render/renderer.js';
import { objectVersion } from '../../../src/worker/store/render-exclusions.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import { defaultTemplateSet, indexedStores, ingress, rule, service, type RenderSuccess } from '../../helpers/cluster.js';

const SHOP = ingress('shop', 'web', { rules: [rule('shop.test', { path: '/', service: 'web' })] });
const EVIL = ingress('evil', 'bad', { rules: [rule('evil.test', { path: '/', service: 'web' })] });
const OBJECTS = [service('shop', 'web'), service('evil', 'web'), SHOP, EVIL];

function render(set: TemplateSetSource, objects: readonly KubeObject[], exclusions?: RenderExclusions, engine = new TemplateEngine()): RenderSuccess {
  const stores = indexedStores(set, objects);
  const outcome = renderAndValidate(engine, { set, lookup: (name) => stores.get(name), storeVersion: 1, exclusions });
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome;
}

/** The 1-based number of the first line of `text` that includes `needle`. */
function lineWith(text: string, needle: string): number {
  const index = text.split('\n').findIndex((line) => line.includes(needle));
  if (index < 0) throw new Error(`no line with ${needle}`);
  return index + 1;
}

const alert = (text: string): string => `[NOTICE]   (7) : haproxy version is 2.6.12\n[ALERT]    (7) : config : ${text}\n[ALERT]    (7) : config : Error(s) found in configuration file : haproxy.cfg`;

describe('refusal tracing', () => {
  it('indexes the config by section, tying each backend to the Ingress it was built for', async () => {
    const out = render(await defaultTemplateSet(), OBJECTS);
    const origins = out.origins;
    expect(origins?.objects).toEqual([
      { kind: 'Ingress', namespace: 'evil', name: 'bad', version: objectVersion(EVIL) },
      { kind: 'Ingress', namespace: 'shop', name: 'web', version: objectVersion(SHOP) },
    ]);
    const sections = origins?.sections ?? [];
    expect(sections.map((s) => s.keyword)).toEqual(expect.arrayContaining(['global', 'defaults', 'frontend', 'backend']));
    const evil = sections.find((s) => s.keyword === 'backend' && s.name.includes('evil'));
    expect(evil?.object).toBe(0);
    expect(sections.filter((s) => s.keyword === 'frontend').every((s) => s.object === -1)).toBe(true);
    // Ranges cover the config without overlap.
    for (let i = 1; i < sections.length; i++) expect(sections[i]?.firstLine).toBe((sections[i - 1]?.lastLine ?? 0) + 1);
  });

  it("names the Ingress whose backend section holds the line HAProxy refused, with HAProxy's message as the reason", async () => {
    const out = render(await defaultTemplateSet(), OBJECTS);
    const backend = (out.origins?.sections ?? []).find((s) => s.name.includes('evil'));
    const line = (backend?.firstLine ?? 0) + 1;
    const message = alert(`parsing [haproxy.cfg:${line}] : error detected while parsing an 'http-request deny' condition : regex '[\\d-z]' is invalid (error=invalid range in character class, erroffset=3).`);
    const refused = refusedObjects(message, out);
    expect(refused.map((r) => `${r.object.namespace}/${r.object.name}`)).toEqual(['evil/bad']);
    expect(refused[0]?.reason).toBe(
      `HAProxy refused it: parsing [haproxy.cfg:${line}] : error detected while parsing an 'http-request deny' condition : regex '[\\d-z]' is invalid (error=invalid range in character class, erroffset=3).`,
    );
  });

  it('names the Ingress of a refused map entry by the backend the entry routes to', async () => {
    const out = render(await defaultTemplateSet(), OBJECTS);
    const map = out.auxiliaryFiles.maps['host-prefix.map'] ?? '';
    const entry = lineWith(map, 'evil.test');
    const message = alert(
      `parsing [haproxy.cfg:40] : error detected while parsing switching rule : ACL keyword 'path' : invalid args in converter 'map_beg' : regex 'x' is invalid at line ${entry} of file '/etc/haproxy/maps/host-prefix.map'..`,
    );
    expect(refusedObjects(message, out).map((r) => r.object.name)).toEqual(['bad']);
  });

  it('falls back on the backend a message names, and names nothing for a frontend line or an unknown file', async () => {
    const out = render(await defaultTemplateSet(), OBJECTS);
    const evil = (out.origins?.sections ?? []).find((s) => s.name.includes('evil'))?.name ?? '';
    expect(refusedObjects(alert(`error detected in backend '${evil}' while parsing 'http-request set-header' rule : expects exactly 2 arguments.`), out).map((r) => r.object.name)).toEqual(['bad']);
    const frontend = lineWith(out.haproxyConfig, 'frontend http') + 1;
    expect(refusedObjects(alert(`parsing [haproxy.cfg:${frontend}] : unknown keyword 'x' in 'frontend' section`), out)).toEqual([]);
    expect(refusedObjects(alert("regex 'x' is invalid at line 1 of file '/elsewhere/other.map'"), out)).toEqual([]);
    expect(refusedObjects('[ALERT] (7) : config : parsing [haproxy.cfg:99999] : nothing there', out)).toEqual([]);
  });

  it('escapes and caps the reason', async () => {
    const out = render(await defaultTemplateSet(), OBJECTS);
    const line = (out.origins?.sections ?? []).find((s) => s.name.includes('evil'))?.firstLine ?? 0;
    const [refused] = refusedObjects(alert(`parsing [haproxy.cfg:${line}] : bad \u001b[31m${'x'.repeat(5000)}`), out);
    expect(refused?.reason).not.toContain('\u001b');
    expect(refused?.reason).toContain('\\u001b');
    expect(refused?.reason.length).toBeLessThan(800);
  });
});

describe('render exclusions', () => {
  const exclusion = (object: KubeObject, reason = 'HAProxy refused it: regex is invalid'): Exclusion => ({
    kind: 'Ingress',
    namespace: object.metadata.namespace ?? '',
    name: object.metadata.name,
    version: objectVersion(object),
    reason,
  });

  it("leaves an excluded Ingress out of the render as an object rejection with HAProxy's reason, and renders the rest", async () => {
    const set = await defaultTemplateSet();
    const out = render(set, OBJECTS, { objects: [exclusion(EVIL)] });
    expect(out.rejections).toContainEqual({ kind: 'Ingress', namespace: 'evil', name: 'bad', scope: 'object', reason: 'HAProxy refused it: regex is invalid' });
    expect(out.haproxyConfig).not.toContain('evil');
    expect(out.haproxyConfig).toContain('backend ing_shop_web');
    expect(out.origins?.objects.map((o) => o.name)).toEqual(['web']);
  });

  it('gives the object a fresh chance once it changes, on the same engine', async () => {
    const set = await defaultTemplateSet();
    const engine = new TemplateEngine();
    const excluded = { objects: [exclusion(EVIL)] };
    expect(render(set, OBJECTS, excluded, engine).haproxyConfig).not.toContain('evil');
    const edited: KubeObject = { ...EVIL, metadata: { ...EVIL.metadata, annotations: { 'example.test/edited': '1' } } };
    const out = render(set, [...OBJECTS.slice(0, 3), edited], excluded, engine);
    expect(out.haproxyConfig).toContain('evil');
    expect(out.rejections).toEqual([]);
  });

  it('leaves whole namespaces out of a trial render, without rejections', async () => {
    const out = render(await defaultTemplateSet(), OBJECTS, { objects: [], namespaces: ['evil'] });
    expect(out.haproxyConfig).not.toContain('evil');
    expect(out.rejections).toEqual([]);
  });
});
