// Incremental renders against cold ones over random change sequences. A TemplateEngine keeps, per
// compiled template set, a routing model builder and memo caches, so a render after a small store
// change reuses what did not change. A seeded property test drives random change sequences through
// both an incremental and a fresh engine and fails on the first difference.
import { describe, expect, it } from 'vitest';
import { generateSelfSigned } from '../../../src/main/output/default-certificate.js';
import { seededRandom } from '../../../src/main/sources/synthetic/synthetic-cluster.js';
import { GuardedReader } from '../../../src/worker/store/guarded-reader.js';
import { buildRoutingModel, modelOptions, RoutingModelBuilder, SERVER_SLOTS_FILE } from '../../../src/worker/routing/ingress-model.js';
import type { RenderBaseline, StoreDefinition, TemplateSetSource } from '../../../src/worker/protocol.js';
import { renderAndValidate } from '../../../src/worker/render/renderer.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import { defaultTemplateSet, ROUTING_STORES, withValues } from '../../helpers/cluster.js';
import { chooseBaseline } from '../../helpers/random-baseline.js';
import { RandomCluster } from '../../helpers/random-cluster.js';
import { acceptedIngresses, asBaseline, comparable, firstLineDifference, outcomeDifference } from '../../helpers/render-outcomes.js';

/** The stores the routing model reads, IngressClasses included. */
const MODEL_STORES: readonly StoreDefinition[] = [
  ...ROUTING_STORES,
  { name: 'ingressclasses', apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', indexBy: ['metadata.name'], namespaced: false },
];
/** A self-signed certificate, as `render` would pass it in values.selfSignedCertificate. */
const SELF_SIGNED = await generateSelfSigned(Date.parse('2026-01-01T00:00:00Z'));

interface PropertyRun {
  readonly seed: number;
  readonly steps: number;
  readonly values?: Record<string, unknown>;
}

/** Renders every step incrementally and cold and fails on the first difference. */
async function checkRenders({ seed, steps, values }: PropertyRun): Promise<void> {
  const base = await defaultTemplateSet();
  const set = values === undefined ? base : withValues(base, values);
  const random = seededRandom(seed);
  const cluster = new RandomCluster(set, random);
  const engine = new TemplateEngine();
  const history: RenderBaseline[] = [];
  const other = withValues(set, { serverSlots: 3 });
  for (let step = 1; step <= steps; step++) {
    const changes = cluster.step();
    // The engine also proves sets (dryRun) and renders other sets between renders of this one.
    const interleave = random();
    if (interleave < 0.04) {
      engine.dryRun(set);
      changes.push('dryRun of the set on the incremental engine');
    } else if (interleave < 0.08) {
      renderAndValidate(engine, { set: other, lookup: cluster.lookup, storeVersion: step, baseline: undefined });
      changes.push('render of another set on the incremental engine');
    }
    const { baseline, label } = chooseBaseline(random, history);
    const request = { set, lookup: cluster.lookup, storeVersion: step, baseline };
    const incremental = renderAndValidate(engine, request);
    const cold = renderAndValidate(new TemplateEngine(), request);
    const difference = outcomeDifference(incremental, cold);
    const where = `seed ${seed}, step ${step}`;
    const context = `\n  baseline: ${label}\n  changes:\n    ${changes.join('\n    ')}`;
    expect(difference, `${where}: ${difference}${context}`).toBeUndefined();
    expect(comparable(incremental), where).toEqual(comparable(cold));
    expect(engine.compile(set).builder.cachedIngresses, `${where}: cached Ingresses`).toBe(acceptedIngresses(cluster.stores, set));
    if (incremental.ok) history.push(asBaseline(incremental));
    if (history.length > 12) history.shift();
  }
}

/** Builds the routing model with one long-lived builder and cold, and compares them at every step. */
function checkModels(seed: number, steps: number, values: Record<string, unknown> = {}): void {
  const options = modelOptions(values);
  const builder = new RoutingModelBuilder(options);
  const set: TemplateSetSource = {
    hash: 'model-only',
    stores: MODEL_STORES,
    snippets: {},
    maps: {},
    files: {},
    sslCertificates: {},
    values,
    haproxyConfig: '',
  };
  const random = seededRandom(seed);
  const cluster = new RandomCluster(set, random);
  const history: RenderBaseline[] = [];
  for (let step = 1; step <= steps; step++) {
    const changes = cluster.step();
    const { baseline, label } = chooseBaseline(random, history);
    const incrementalWarnings: string[] = [];
    const coldWarnings: string[] = [];
    const warnInto =
      (list: string[]) =>
      (message: string): void => {
        list.push(message);
      };
    const model = builder.build(new GuardedReader(cluster.lookup, warnInto(incrementalWarnings)), baseline, warnInto(incrementalWarnings));
    const cold = buildRoutingModel(new GuardedReader(cluster.lookup, warnInto(coldWarnings)), options, baseline, warnInto(coldWarnings));
    const where = `seed ${seed}, step ${step} (baseline: ${label})\n  changes:\n    ${changes.join('\n    ')}\n`;
    expect(firstLineDifference('server-slots.txt', model.serverSlotsFile, cold.serverSlotsFile), where).toBeUndefined();
    expect(model, where).toEqual(cold);
    expect(incrementalWarnings, where).toEqual(coldWarnings);
    expect(builder.cachedIngresses, where).toBe(acceptedIngresses(cluster.stores, set));
    history.push({ auxiliaryFiles: { maps: {}, files: { [SERVER_SLOTS_FILE]: model.serverSlotsFile }, certificates: {} } });
    if (history.length > 12) history.shift();
  }
}

describe('incremental renders match cold renders over random change sequences', () => {
  it.each([
    { seed: 1, steps: 80 },
    { seed: 2, steps: 80 },
    // ExternalName Services routed (DNS servers, the resolvers section), and the loop guard.
    { seed: 3, steps: 80, values: { externalNameServices: true } },
    { seed: 4, steps: 80, values: { serverSlots: 4 } },
    { seed: 5, steps: 80, values: { watchIngressWithoutClass: false } },
    { seed: 6, steps: 80, values: { externalNameServices: true, loopGuardToken: 'f00d' } },
    { seed: 7, steps: 60, values: { routeOwnership: 'name', tlsHostOwnership: 'oldest' } },
    { seed: 8, steps: 60, values: { defaultCertificate: 'alpha/tls-a', selfSignedCertificate: SELF_SIGNED, watchIngressWithoutClass: false } },
    // Few descriptors: the server-slot budget (fdHardLimit / 2) starves Ingresses as they come and go.
    { seed: 9, steps: 80, values: { fdHardLimit: 80 } },
  ])('renders seed $seed the same as a fresh engine at every step', async (run: PropertyRun) => {
    await checkRenders(run);
  });

  it.each([11, 12, 13, 14])('builds the same routing model as a cold build at every step (seed %i)', (seed) => {
    // Even seeds route ExternalName Services.
    checkModels(seed, 150, seed % 2 === 0 ? { externalNameServices: true } : {});
  });

  it.each([15, 16])('builds the same routing model as a cold build under the other ownership policies (seed %i)', (seed) => {
    checkModels(seed, 100, { routeOwnership: 'name', tlsHostOwnership: 'oldest', defaultCertificate: 'beta/tls-b', selfSignedCertificate: SELF_SIGNED });
  });

  it.each([17, 18])('builds the same routing model as a cold build while the server-slot budget starves Ingresses (seed %i)', (seed) => {
    checkModels(seed, 150, { fdHardLimit: 80 });
  });
});
