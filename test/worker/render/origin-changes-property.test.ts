// The origin index after random Ingress and EndpointSlice changes, render after render on one
// engine: equal to a cold build, its objects list recording exactly the positions where it differs
// from the previous render's, and the changes a result would carry (originChanges) exactly the
// objects that differ, as a comparison of every position gives them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KubeObject, OriginIndex, RenderSuccess } from '../../../src/worker/protocol.js';
import { originChanges } from '../../../src/worker/render/origin-changes.js';
import { renderAndValidate } from '../../../src/worker/render/renderer.js';
import type { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import { replacedSince } from '../../../src/worker/store/list-replacements.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import { defaultTemplateSet, endpointSlice, indexedStores, ingress, rule, service, storeNameFor } from '../../helpers/cluster.js';

const NS = 'shop';
const APPS = 8;

/** Ingress `app<i>` at its current state: a version, a path and one of two Services. */
interface AppState {
  version: number;
  path: string;
  service: 'a' | 'b';
  present: boolean;
}

const appIngress = (i: number, app: AppState): KubeObject =>
  ingress(NS, `app${i}`, { rules: [rule(`app${i}.test`, { path: app.path, service: `svc${i}${app.service}` })] }, { resourceVersion: String(app.version) });

const change = fc.record({
  app: fc.integer({ min: 0, max: APPS - 1 }),
  kind: fc.constantFrom('relabel', 'repath', 'reservice', 'endpoints', 'toggle'),
});

const view = (out: RenderSuccess): unknown => ({ objects: out.origins?.objects, names: { ...out.origins?.names } });

/** The positions whose objects differ in content, compared at every position. */
function differing(before: OriginIndex, after: OriginIndex): number[] {
  const at: number[] = [];
  for (let i = 0; i < after.objects.length; i++) if (JSON.stringify(before.objects[i]) !== JSON.stringify(after.objects[i])) at.push(i);
  return at;
}

describe('the origin index over random changes', () => {
  it('equals a cold build at every step, records exactly its changed positions, and carries exactly the changed objects', async () => {
    const set = await defaultTemplateSet();
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(change, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 8 }), async (steps) => {
        const apps: AppState[] = Array.from({ length: APPS }, () => ({ version: 1, path: '/', service: 'a', present: true }));
        const objects: KubeObject[] = [];
        for (let i = 0; i < APPS; i++) {
          objects.push(service(NS, `svc${i}a`), service(NS, `svc${i}b`), endpointSlice(NS, `svc${i}a`, [`10.0.${i}.1`]), appIngress(i, apps[i] as AppState));
        }
        const stores = indexedStores(set, objects);
        const store = (object: KubeObject): IndexedStore => stores.get(storeNameFor(object, set.stores)) as IndexedStore;
        const engine = new TemplateEngine();
        let version = 0;
        const render = (into: TemplateEngine): RenderSuccess => {
          const outcome = renderAndValidate(into, { set, lookup: (name) => stores.get(name), storeVersion: version });
          if (!outcome.ok) throw new Error(outcome.message);
          return outcome;
        };
        let previous = render(engine).origins as OriginIndex;
        for (const step of steps) {
          for (const { app: i, kind } of step) {
            const app = apps[i] as AppState;
            app.version++;
            if (kind === 'repath') app.path = app.path === '/' ? '/v2' : '/';
            if (kind === 'reservice') app.service = app.service === 'a' ? 'b' : 'a';
            if (kind === 'endpoints') store(endpointSlice(NS, `svc${i}a`, [`10.0.${i}.${app.version}`])).upsert(endpointSlice(NS, `svc${i}a`, [`10.0.${i}.${app.version}`]));
            else if (kind === 'toggle' && app.present) store(appIngress(i, app)).delete(`${NS}/app${i}`);
            else store(appIngress(i, app)).upsert(appIngress(i, app));
            if (kind === 'toggle') app.present = !app.present;
            else app.present = true;
          }
          version++;
          const incremental = render(engine);
          expect(view(incremental)).toEqual(view(render(new TemplateEngine())));
          const next = incremental.origins as OriginIndex;
          const sameShape = next.objects.length === previous.objects.length;
          const expected = sameShape ? differing(previous, next) : undefined;
          const recorded = replacedSince(next.objects, previous.objects);
          if (recorded !== undefined) expect(recorded).toEqual(expected);
          const carried = originChanges(previous, next);
          const names = JSON.stringify({ ...previous.names }) === JSON.stringify({ ...next.names });
          const fits = expected !== undefined && names && expected.length - 1 < next.objects.length / 4;
          expect(carried).toEqual(fits ? expected?.map((i) => [i, next.objects[i]]) : undefined);
          previous = next;
        }
      }),
      { numRuns: 40, seed: 17 },
    );
  });
});
